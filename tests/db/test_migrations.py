"""Schema migrations of tunerlib.db (a faked version-0 database upgraded by registered steps)."""
import sqlite3

import pytest

from tunerlib.db import ResultRecord
from tunerlib.db import MIGRATIONS, SCHEMA_VERSION, DatabaseError, ResultsDB, SchemaVersionError, migrate
from tunerlib.db.models import TechniqueState


def _request(db, pv, run_id, n, requestor="T"):
    ids = []
    for i in range(n):
        cid = db.configuration_id(pv, f"{i:064x}", {"x": i})
        ids.append(db.request(run_id, cid, requestor, i, limit=1.5))
    return ids


def _stamp(path, version):
    con = sqlite3.connect(path)
    con.execute("update tunerlib_meta set value=? where key='schema_version'", (str(version),))
    con.commit()
    con.close()


def _version0_database(path):
    """A database as an imaginary schema 0 left it: no technique_state table, version 0 stamped."""
    database = ResultsDB(str(path))
    pv = database.program_version_id("proj", "prog", "v1", "{}")
    run_id, _ = database.create_run(pv, None, {}, None, None, "o")
    [dr] = _request(database, pv, run_id, 1)
    database.complete(dr, ResultRecord("OK", 3.0))
    database.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE technique_state")
        _drop_run_owner(conn)
        conn.execute("UPDATE tunerlib_meta SET value='0' WHERE key='schema_version'")
    return run_id


def _drop_run_owner(conn):
    """What schema 2 added (tuning_run.host and .pid), removed again."""
    conn.execute("ALTER TABLE tuning_run DROP COLUMN host")
    conn.execute("ALTER TABLE tuning_run DROP COLUMN pid")


def _add_technique_state(conn):
    TechniqueState.__table__.create(conn)


def test_migrate_applies_registered_migration(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    run_id = _version0_database(path)
    with pytest.raises(SchemaVersionError):
        ResultsDB(str(path))
    monkeypatch.setitem(MIGRATIONS, 0, _add_technique_state)
    assert migrate(str(path)) == (0, SCHEMA_VERSION)
    with ResultsDB(str(path)) as database:
        assert [r.time for r in database.run_results(run_id)] == [3.0]  # old data kept
        database.save_technique_state(run_id, "A", {"k": 1})
        assert database.load_technique_state(run_id, "A") == {"k": 1}
    assert migrate(str(path)) == (SCHEMA_VERSION, SCHEMA_VERSION)  # already current: no-op


def test_schema_1_database_gets_the_run_owner_columns(tmp_path):
    """The real step 1 -> 2: a database written by schema 1 keeps its runs and gains host/pid."""
    path = tmp_path / "v1.db"
    database = ResultsDB(str(path))
    pv = database.program_version_id("proj", "prog", "v1", "{}")
    run_id, run_uuid = database.create_run(pv, None, {}, 7, None, "o")
    database.close()
    with sqlite3.connect(path) as conn:
        _drop_run_owner(conn)
        conn.execute("UPDATE tunerlib_meta SET value='1' WHERE key='schema_version'")
    with pytest.raises(SchemaVersionError, match="migrate"):
        ResultsDB(str(path))
    assert migrate(str(path)) == (1, 2)
    with ResultsDB(str(path)) as database:
        [info] = database.runs_of(pv)
        assert (info["uuid"], info["seed"], info["host"], info["pid"]) == (run_uuid, 7, None, None)
        database.take_run(run_id, "h", 42)
        assert database.runs_of(pv)[0]["pid"] == 42


def test_migrate_runs_steps_in_order(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    _version0_database(path)
    _stamp(path, -1)
    applied = []
    monkeypatch.setitem(MIGRATIONS, 0, lambda conn: (applied.append(0), _add_technique_state(conn)))
    monkeypatch.setitem(MIGRATIONS, -1, lambda conn: applied.append(-1))
    assert migrate(str(path)) == (-1, SCHEMA_VERSION)
    assert applied == [-1, 0]


def test_migrate_without_registered_step_refuses(tmp_path):
    path = tmp_path / "old.db"
    _version0_database(path)
    assert 0 not in MIGRATIONS
    with pytest.raises(DatabaseError, match="no migration from schema version 0 to 1"):
        migrate(str(path))


def test_failing_migration_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    _version0_database(path)

    def broken(conn):
        _add_technique_state(conn)
        raise RuntimeError("step failed")

    monkeypatch.setitem(MIGRATIONS, 0, broken)
    with pytest.raises(RuntimeError, match="step failed"):
        migrate(str(path))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM tunerlib_meta").fetchall() == [("0",)]
        names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "technique_state" not in names


def test_migrate_refuses_newer_and_missing_databases(tmp_path):
    path = tmp_path / "new.db"
    ResultsDB(str(path)).close()
    _stamp(path, SCHEMA_VERSION + 1)
    with pytest.raises(SchemaVersionError, match="newer than"):
        migrate(str(path))
    with pytest.raises(DatabaseError, match="no database file"):
        migrate(str(tmp_path / "absent.db"))
    assert not (tmp_path / "absent.db").exists()
