"""Tests of ``tunerlib runs|migrate`` (as a subprocess and in process)."""
import re
import sqlite3
import sys
from datetime import datetime

import pytest

import zygote

from tunerlib.cli import main as tunerlib_main
from tunerlib.db import MIGRATIONS, SCHEMA_VERSION, ResultsDB, ResultRecord
from tunerlib.db.models import TechniqueState


def _tool(*args):
    """Run the tool in a fresh interpreter; returns (exit code, stdout, stderr)."""
    proc = zygote.run([sys.executable, "-m", "tunerlib.cli", *map(str, args)],
                      capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _one_line_error(rc, out, err):
    assert rc == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tunerlib: error: ")
    return lines[0]


def _stamp(path, version):
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE tunerlib_meta SET value=? WHERE key='schema_version'", (str(version),))


@pytest.fixture
def filled(tmp_path):
    """A database with two runs: (path, [run_info of each run])."""
    path = tmp_path / "runs.db"
    with ResultsDB(str(path)) as db:
        pv1 = db.program_version_id("proj", "tsp", "v1", "{}")
        pv2 = db.program_version_id("proj", "gemm", "2.0", '{"x":1}')
        r1, _ = db.create_run(pv1, "baseline", {}, None, None, "o")
        for i in range(3):
            db.request_configuration(r1, pv1, f"{i:064x}", {"x": i}, "T", i)
            db.complete(db.claim_next(r1, "w").dr_id, ResultRecord("OK", float(i)))
        db.set_run_state(r1, "COMPLETE")
        r2, _ = db.create_run(pv2, None, {}, None, None, "o")
        infos = [db.run_info(r1), db.run_info(r2)]
    return path, infos


# ------------------------------------------------------------------------------------------------ runs

def test_runs_prints_a_header_and_one_row_per_run(filled):
    path, (first, second) = filled
    rc, out, err = _tool("runs", path)
    assert rc == 0 and err == ""
    header, *rows = [re.split(r" {2,}", line) for line in out.splitlines()]
    assert header[:6] == ["run", "program", "program version", "state", "results", "best"]
    assert [r[:5] for r in rows] == [[first["uuid"], "proj/tsp", "v1", "COMPLETE", "3"],
                                     [second["uuid"], "proj/gemm", "2.0", "RUNNING", "0"]]
    started = header.index("started")
    for row, info in zip(rows, (first, second)):
        when = datetime.fromisoformat(row[started])
        assert when.tzinfo is not None and abs(when.timestamp() - info["start_date"]) < 1.0


def test_runs_of_a_missing_file_is_an_error_and_creates_nothing(tmp_path):
    target = tmp_path / "sub" / "absent.db"
    line = _one_line_error(*_tool("runs", target))
    assert "no results database" in line and str(target) in line
    assert not target.exists() and not target.parent.exists()


def test_runs_of_an_empty_database_prints_nothing(tmp_path):
    path = tmp_path / "empty.db"
    ResultsDB(str(path)).close()
    rc, out, err = _tool("runs", path)
    assert rc == 0 and out == "" and "no tuning runs" in err


@pytest.mark.parametrize("make, expected", [
    (lambda p: p.write_bytes(b"this is not sqlite" * 100), "not a SQLite database"),
    (lambda p: sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.commit(),
     "not a tunerlib results database"),
])
def test_runs_of_a_foreign_file_is_one_line_error(tmp_path, make, expected):
    path = tmp_path / "foreign.db"
    make(path)
    assert expected in _one_line_error(*_tool("runs", path))


def test_runs_of_an_old_schema_says_how_to_migrate(filled):
    path, _ = filled
    _stamp(path, SCHEMA_VERSION - 1)
    line = _one_line_error(*_tool("runs", path))
    assert "`tunerlib migrate " in line


def test_malformed_url_and_missing_command(tmp_path):
    assert "malformed database URL" in _one_line_error(*_tool("runs", "sqlite:/x.db"))
    rc, out, err = _tool()
    assert rc == 2 and "usage:" in err


# --------------------------------------------------------------------------------------------- migrate

def test_migrate_current_database_is_a_no_op(filled):
    path, _ = filled
    rc, out, err = _tool("migrate", path)
    assert rc == 0 and err == ""
    assert out == f"{path} already at version {SCHEMA_VERSION}\n"


def test_migrate_errors_are_one_line(tmp_path, filled):
    path, _ = filled
    absent = tmp_path / "absent.db"
    assert "no database file" in _one_line_error(*_tool("migrate", absent))
    assert not absent.exists()
    _stamp(path, SCHEMA_VERSION + 1)
    assert "newer than" in _one_line_error(*_tool("migrate", path))
    _stamp(path, 0)  # no step from 0 is registered
    line = _one_line_error(*_tool("migrate", path))
    assert "no migration from schema version 0" in line


def test_migrate_reports_the_versions(filled, monkeypatch, capsys):
    """In process, so that a migration step can be replaced by a test step."""
    path, (first, _) = filled
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE technique_state")
    _stamp(path, SCHEMA_VERSION - 1)
    monkeypatch.setitem(MIGRATIONS, SCHEMA_VERSION - 1, lambda conn: TechniqueState.create(conn))
    assert tunerlib_main(["migrate", str(path)]) == 0
    assert capsys.readouterr().out == f"migrated {path} from version {SCHEMA_VERSION - 1} to {SCHEMA_VERSION}\n"
    with ResultsDB(str(path)) as db:
        assert db.list_runs()[0]["uuid"] == first["uuid"]  # data kept


# ------------------------------------------------------------------------------ the `tunerlib` command

def test_tunerlib_command_runs_under_a_header_and_migrate_in_process(filled, capsys, tmp_path):
    path, (first, second) = filled
    assert tunerlib_main(["runs", str(path)]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.split()[:5] == ["run", "program", "program", "version", "state"]
    assert [line.split()[0] for line in lines] == [first["uuid"], second["uuid"]]
    assert tunerlib_main(["migrate", str(path)]) == 0
    assert capsys.readouterr().out == f"{path} already at version {SCHEMA_VERSION}\n"
    absent = tmp_path / "absent.db"
    assert tunerlib_main(["runs", str(absent)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tunerlib: error: no results database at") and err.count("\n") == 1
    assert not absent.exists()


def test_tunerlib_command_lists_techniques(capsys):
    assert tunerlib_main(["techniques"]) == 0
    assert len(capsys.readouterr().out.splitlines()) > 3
