"""``tunerlib export``: every result with its configuration (one column per parameter), state,
technique, timestamps and machine, checked against the results database; Parquet with pyarrow, and one
line naming pyarrow without it."""
import csv
import io
import json
import socket
import sqlite3
import sys

import pytest

from tunerlib.cli import main
from tunerlib.db import ResultsDB
from tunerlib.report.export import COLUMNS


def _expected(path):
    """{(run uuid, result id): (row, label, evaluation)} straight from the database."""
    found = {}
    with ResultsDB(path) as db:
        for info in db.list_runs():
            for i, row in enumerate(db.run_results(info["id"]), 1):
                found[(info["uuid"], row.id)] = (row, info["label"], i)
    return found


def row_worker(path, result_id):
    """The worker column of a result, read with sqlite3 (not through the code under test)."""
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT worker FROM result WHERE id = ?", (result_id,)).fetchone()[0]


def _check(records, path, parse=lambda v: v):
    expected = _expected(path)
    assert len(records) == len(expected)
    for rec in records:
        row, label, index = expected[(rec["run_uuid"], int(rec["result_id"]))]
        assert rec["label"] == label and int(rec["evaluation"]) == index and rec["state"] == row.state
        assert rec["machine"] == socket.gethostname() and (rec["worker"] or None) == row_worker(path, row.id)
        assert float(rec["collection_date"]) == pytest.approx(row.collection_date)
        technique = row.requestor.split("/")[-1]
        assert rec["technique"] == technique and rec["requestor"] == row.requestor
        for name, value in row.config_data.items():
            assert parse(rec[name]) == (value if not isinstance(value, float) else pytest.approx(value))
        if row.state == "OK":
            assert float(rec["value"]) == pytest.approx(row.extra["value"])
        else:
            assert rec["value"] in ("", None)
        if row.state == "ERROR":
            assert rec["error"] == row.extra["error"]


def _number(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def test_csv_has_every_result_with_its_configuration(results_db, capsys):
    assert main(["export", results_db]) == 0                     # CSV on stdout by default
    records = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(records[0])[:len(COLUMNS)] == list(COLUMNS) and list(records[0])[len(COLUMNS):] == ["x", "y", "mode"]
    _check(records, results_db, _number)


def test_json_records(results_db, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["export", results_db, "--format", "json", "-o", str(out), "--label", "random"]) == 0
    records = json.loads(out.read_text())
    assert {r["label"] for r in records} == {"random"} and len(records) == 3 * 40
    expected = {k: v for k, v in _expected(results_db).items() if v[1] == "random"}
    assert {(r["run_uuid"], r["result_id"]) for r in records} == set(expected)
    for rec in records:
        row = expected[(rec["run_uuid"], rec["result_id"])][0]
        assert (rec["x"], rec["y"], rec["mode"]) == (row.config_data["x"], row.config_data["y"], row.config_data["mode"])
        assert rec["was_new_best"] == row.was_new_best
    assert f"wrote {out} (120 results of 3 runs)" in capsys.readouterr().out


def test_parquet_with_pyarrow(results_db, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed")
    out = tmp_path / "r.parquet"
    assert main(["export", results_db, "--format", "parquet", "-o", str(out)]) == 0
    table = pq.read_table(out)
    assert table.column_names[:len(COLUMNS)] == list(COLUMNS)
    _check(table.to_pylist(), results_db)


def test_parquet_without_pyarrow_is_one_line(results_db, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    assert main(["export", results_db, "--format", "parquet", "-o", str(tmp_path / "r.parquet")]) == 2
    err = capsys.readouterr().err
    assert err == ("tunerlib export: error: --format parquet needs pyarrow: pip install 'tunerlib[parquet]' "
                   "(or use --format csv or json)\n")
    assert not (tmp_path / "r.parquet").exists()


def test_parquet_needs_a_file(results_db, capsys):
    assert main(["export", results_db, "--format", "parquet"]) == 2
    assert "-o FILE.parquet" in capsys.readouterr().err


def test_lists_are_json_text_in_csv(tmp_path, capsys):
    from tunerlib import tune_function
    from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
    db = str(tmp_path / "tsp.db")
    tune_function(ConfigurationManipulator([PermutationParameter("tour", [0, 1, 2, 3])]),
                  lambda c: float(c["tour"][0]), test_limit=5, seed=1, database=db)
    assert main(["export", db]) == 0
    records = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(records) == 5 and sorted(json.loads(records[0]["tour"])) == [0, 1, 2, 3]
