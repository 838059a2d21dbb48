"""tunerlib upload: what is stored, idempotence, replacement of unfinished runs, atomicity, privacy."""
import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from tunerlib.db import ResultsDB
from tunerlib.store import CrossSessionStore, StoreError
from tunerlib.store.export import export_run
from tunerlib.store.queries import load_affinities
from tunerlib.store.upload import upload


def dump(path):
    """Every row of every table of a SQLite store except upload dates (for equality checks)."""
    con = sqlite3.connect(path)
    out = {}
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"):
        cols = [c[1] for c in con.execute(f"PRAGMA table_info({table})") if c[1] != "upload_date"]
        out[table] = sorted(con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall(), key=repr)
    con.close()
    return out


def test_upload_stores_runs_techniques_and_snapshots(results_db, tmp_path, cli):
    store_path = tmp_path / "store.db"
    done = cli("upload", results_db, "--store", store_path, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"added": 3}
    with CrossSessionStore(str(store_path)) as store:
        assert store.counts()["runs"] == 3 and store.counts()["representations"] == 1
        table = load_affinities(store)
    [rep] = table.reps.values()
    assert rep.name == "tunerlib/toy" and rep.runs == 3
    known = table.affinity[rep.id]
    assert {"PureRandom", "DifferentialEvolutionAlt", "GGA"} <= set(known)
    assert table.roots["PureRandom"] == "PureRandom"
    assert all(0 <= aff <= 1 and requests > 0 for aff, requests in known.values())
    assert json.loads(cli("upload", results_db, "--store", store_path, "--json").stdout) == {"unchanged": 3}


def test_snapshots_match_the_runs_results(results_db):
    db = ResultsDB(str(results_db))
    stored = export_run(db, 2)
    rows = db.run_results(2)
    db.close()
    assert stored.tests == len(rows) == 60
    whole = [s for s in stored.snapshots if s.technique is None]
    assert [s.tests for s in whole] == [10, 20, 50, 60]
    flagged = sum(r.was_new_best for r in rows)
    assert whole[-1].new_bests == flagged
    assert whole[-1].best_value == min(r.extra["cost"] for r in rows if r.state == "OK")
    assert stored.techniques == {"PureRandom": ("PureRandom", None)} and stored.meta is None


def test_reupload_of_a_grown_run_replaces_it(toy, tmp_path):
    results, store_path = tmp_path / "r.db", str(tmp_path / "s.db")
    args = ["--database", str(results), "--seed", "4", "--quiet"]
    assert toy.ToyTuner.main(args + ["--test-limit", "30"]) == 0
    with CrossSessionStore(store_path) as store:
        assert upload(str(results), store, progress=None).outcomes == {"added": 1}
        assert toy.ToyTuner.main(args + ["--test-limit", "50", "--resume"]) == 0
        assert upload(str(results), store, progress=None).outcomes == {"replaced": 1}
        assert store.counts()["runs"] == 1
    con = sqlite3.connect(store_path)
    assert con.execute("SELECT tests FROM tuning_run").fetchall() == [(50,)]


_KILLER = """
import os, signal, sys
import tunerlib.store.crosssession as written
from tunerlib.store import CrossSessionStore
from tunerlib.store.upload import upload
calls, insert = [], written._insert_run
def insert_then_die(conn, run, digest):   # inside the run's transaction, before its commit
    insert(conn, run, digest)
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
written._insert_run = insert_then_die
with CrossSessionStore(sys.argv[2]) as store:
    upload(sys.argv[1], store, progress=None)
"""


def test_a_killed_upload_leaves_whole_runs_and_a_rerun_completes_it(results_db, tmp_path, cli):
    killed, clean = tmp_path / "killed.db", tmp_path / "clean.db"
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(results_db), str(killed)], capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    with CrossSessionStore(str(killed)) as store:
        assert store.counts()["runs"] == 1  # the first run committed, the second died inside its transaction
    assert json.loads(cli("upload", results_db, "--store", killed, "--json").stdout) == {"added": 2, "unchanged": 1}
    assert cli("upload", results_db, "--store", clean).returncode == 0
    assert dump(killed) == dump(clean)


def test_corrupt_foreign_or_missing_files_are_refused_and_the_store_unchanged(results_db, tmp_path, cli):
    store_path = tmp_path / "store.db"
    assert cli("upload", results_db, "--store", store_path).returncode == 0
    before = dump(store_path)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    for bad, words in ((garbage, "not a SQLite database"), (foreign, "not a tunerlib results database"),
                       (tmp_path / "missing.db", "no results database")):
        done = cli("upload", bad, "--store", store_path)
        assert done.returncode == 2 and words in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "missing.db").exists()
    done = cli("upload", results_db, "--store", results_db)
    assert done.returncode == 2 and "is a tunerlib results database, not a store" in done.stderr
    assert dump(store_path) == before


def test_no_configuration_values_or_paths_unless_asked(results_db, tmp_path):
    db = ResultsDB(str(results_db))
    configs = [r.config_data for r in db.run_results(1)]
    db.close()
    private = {repr(c["y"]) for c in configs if len(repr(c["y"])) > 8} | {str(tmp_path), os.uname().nodename}
    plain = tmp_path / "plain.db"
    with CrossSessionStore(str(plain)) as store:
        upload(str(results_db), store, progress=None)
    text = json.dumps(dump(plain), default=str)
    assert len(private) > 10 and not [p for p in private if p in text]
    with CrossSessionStore(str(tmp_path / "with.db")) as store:
        upload(str(results_db), store, include_configurations=True, progress=None)
        rows = dump(tmp_path / "with.db")["stored_configuration"]
    assert len(rows) == 30 and all(set(json.loads(r[-1])) == {"x", "y", "mode", "order"} for r in rows)


def test_store_errors_are_one_line(tmp_path):
    with pytest.raises(StoreError, match="does not exist yet"):
        CrossSessionStore(str(tmp_path / "none.db"), create=False)
    with pytest.raises(StoreError, match="unknown database dialect"):
        CrossSessionStore("nosuchdialect://x")


def test_store_schema_version_upgrades_and_refusals(tmp_path, monkeypatch):
    from tunerlib.store import schema
    path = str(tmp_path / "v.db")
    CrossSessionStore(path).close()
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM store_meta").fetchall() == [(str(schema.STORE_SCHEMA_VERSION),)]
    con.close()
    steps = []

    def add_note(conn):
        steps.append(1)
        conn.exec_driver_sql("ALTER TABLE tuning_run ADD COLUMN note TEXT")
    monkeypatch.setattr(schema, "STORE_SCHEMA_VERSION", schema.STORE_SCHEMA_VERSION + 1)
    monkeypatch.setitem(schema.MIGRATIONS, schema.STORE_SCHEMA_VERSION - 1, add_note)
    CrossSessionStore(path).close()
    CrossSessionStore(path).close()  # upgraded once only
    con = sqlite3.connect(path)
    assert steps == [1] and "note" in [c[1] for c in con.execute("PRAGMA table_info(tuning_run)")]
    con.execute("UPDATE store_meta SET value='99'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer than"):
        CrossSessionStore(path)
