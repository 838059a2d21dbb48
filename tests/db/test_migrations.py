"""Schema migrations of tunerlib.db (a faked version-0 database upgraded by registered steps), on SQLite
files and on a real PostgreSQL server (tests/helpers/pg.py; its DDL is transactional too)."""
import threading
import time

import pytest
from sqlalchemy import inspect, text

from tunerlib.db import ResultRecord
from tunerlib.db import MIGRATIONS, SCHEMA_VERSION, DatabaseError, ResultsDB, SchemaVersionError, migrate
from tunerlib.db.migrations import open_engine
from tunerlib.db.models import TechniqueState

from procs import wait_until


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """Where the test database lives: a SQLite file, or an empty PostgreSQL database."""
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_url")
    return str(tmp_path / "old.db")


def _sql(url, *statements):
    """Run ``statements`` in one transaction, behind tunerlib's back; the rows of the last one."""
    engine, _ = open_engine(url)
    try:
        with engine.begin() as conn:
            for statement in statements:
                rows = conn.execute(text(statement))
            return rows.fetchall() if rows.returns_rows else None
    finally:
        engine.dispose()


def _tables(url):
    engine, _ = open_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def _request(db, pv, run_id, n, requestor="T"):
    ids = []
    for i in range(n):
        ids.append(db.request_configuration(run_id, pv, f"{i:064x}", {"x": i}, requestor, i, limit=1.5))
    return ids


def _stamp(url, version):
    _sql(url, f"UPDATE tunerlib_meta SET value='{version}' WHERE key='schema_version'")


#: what schema 2 added (tuning_run.host and .pid), removed again
DROP_RUN_OWNER = ("ALTER TABLE tuning_run DROP COLUMN host", "ALTER TABLE tuning_run DROP COLUMN pid")
#: what schema 3 added (leases, workers, script version), removed again
DROP_DISTRIBUTED = ("ALTER TABLE desired_result DROP COLUMN heartbeat", "ALTER TABLE desired_result DROP COLUMN lease",
                    "ALTER TABLE result DROP COLUMN worker", "ALTER TABLE tuning_run DROP COLUMN script_version",
                    "DROP TABLE measurement_worker")
#: what schema 4 changed (the run_artifact table; desired_result.priority dropped), undone again
UNDO_RUN_ARTIFACTS = ("DROP TABLE run_artifact", "DROP INDEX ix_desired_result_claim",
                      "ALTER TABLE desired_result ADD COLUMN priority INTEGER NOT NULL DEFAULT 0",
                      "CREATE INDEX ix_desired_result_claim ON desired_result (tuning_run_id, state, priority DESC, id)")


def _version0_database(url):
    """A database as an imaginary schema 0 left it: no technique_state table, version 0 stamped."""
    database = ResultsDB(url)
    pv = database.program_version_id("proj", "prog", "v1", "{}")
    run_id, _ = database.create_run(pv, None, {}, None, None, "o")
    [dr] = _request(database, pv, run_id, 1)
    database.complete(dr, ResultRecord("OK", 3.0))
    database.close()
    _sql(url, "DROP TABLE technique_state", *UNDO_RUN_ARTIFACTS, *DROP_RUN_OWNER, *DROP_DISTRIBUTED,
         "UPDATE tunerlib_meta SET value='0' WHERE key='schema_version'")
    return run_id


def _add_technique_state(conn):
    TechniqueState.create(conn)


def test_migrate_applies_registered_migration(url, monkeypatch):
    run_id = _version0_database(url)
    with pytest.raises(SchemaVersionError):
        ResultsDB(url)
    monkeypatch.setitem(MIGRATIONS, 0, _add_technique_state)
    assert migrate(url) == (0, SCHEMA_VERSION)
    with ResultsDB(url) as database:
        assert [r.time for r in database.run_results(run_id)] == [3.0]  # old data kept
        database.save_technique_state(run_id, "A", {"k": 1})
        assert database.load_technique_state(run_id, "A") == {"k": 1}
    assert migrate(url) == (SCHEMA_VERSION, SCHEMA_VERSION)  # already current: no-op


def test_schema_1_database_gets_the_run_owner_columns(url):
    """The real step 1 -> 2: a database written by schema 1 keeps its runs and gains host/pid."""
    database = ResultsDB(url)
    pv = database.program_version_id("proj", "prog", "v1", "{}")
    run_id, run_uuid = database.create_run(pv, None, {}, 7, None, "o")
    database.close()
    _sql(url, *UNDO_RUN_ARTIFACTS, *DROP_RUN_OWNER, *DROP_DISTRIBUTED,
         "UPDATE tunerlib_meta SET value='1' WHERE key='schema_version'")
    with pytest.raises(SchemaVersionError, match="migrate"):
        ResultsDB(url)
    assert migrate(url) == (1, SCHEMA_VERSION)
    with ResultsDB(url) as database:
        [info] = database.runs_of(pv)
        assert (info["uuid"], info["seed"], info["host"], info["pid"]) == (run_uuid, 7, None, None)
        database.take_run(run_id, "h" * 300, 42)
        assert (database.runs_of(pv)[0]["pid"], database.runs_of(pv)[0]["host"]) == (42, "h" * 300)


def test_schema_2_database_gets_leases_workers_and_script_version(url):
    """The real step 2 -> 3: a schema-2 database keeps its requests and results and gains claim leases,
    result.worker, tuning_run.script_version and the measurement_worker table."""
    database = ResultsDB(url)
    pv = database.program_version_id("proj", "prog", "v1", "{}")
    run_id, _ = database.create_run(pv, None, {}, 7, None, "o")
    first, second = _request(database, pv, run_id, 2)
    database.complete(first, ResultRecord("OK", 2.0))
    database.close()
    _sql(url, *UNDO_RUN_ARTIFACTS, *DROP_DISTRIBUTED, "UPDATE tunerlib_meta SET value='2' WHERE key='schema_version'")
    assert "measurement_worker" not in _tables(url)
    assert migrate(url) == (2, SCHEMA_VERSION)
    with ResultsDB(url) as database:
        assert [r.time for r in database.run_results(run_id)] == [2.0]
        assert database.run_info(run_id)["script_version"] is None
        claim = database.claim_next(run_id, "remote", lease=0.5)
        assert claim.dr_id == second
        assert database.requeue_expired(run_id, now=time.time() + 60) == [second]
        database.register_worker(run_id, "remote", None, 30.0)
        assert database.live_workers(run_id) == 1
        rid = database.complete(second, ResultRecord("OK", 1.0, worker="remote"))
        assert rid in {r.id for r in database.run_results(run_id)}


def test_schema_3_database_keeps_its_run_artifacts_and_resumes(url):
    """The real step 3 -> 4: schema 3 kept the end of a run (what save_final_config printed, the re-timed
    best) as technique state under reserved names and had an always-0 desired_result.priority; migrated,
    those are run artifacts, the technique state holds only techniques, and the run resumes."""
    database = ResultsDB(url)
    pv = database.program_version_id("proj", "prog", "v1", "{}")
    run_id, _ = database.create_run(pv, None, {}, 7, None, "o")
    first, second, third = _request(database, pv, run_id, 3)
    database.complete(database.claim_next(run_id, "main").dr_id, ResultRecord("OK", 2.0))
    database.claim_next(run_id, "worker-0")
    database.save_technique_state(run_id, "AUCBandit", {"arms": ["A"]})
    database.save_technique_state(run_id, "tunerlib:final_config", {"text": "tour 0 1 2"})
    database.save_technique_state(run_id, "tunerlib:final_best", {"hash": "h", "configuration": {"x": 0}})
    database.set_run_state(run_id, "ABORTED")
    database.close()
    _sql(url, *UNDO_RUN_ARTIFACTS, "UPDATE tunerlib_meta SET value='3' WHERE key='schema_version'")
    with pytest.raises(SchemaVersionError, match="run `tunerlib migrate "):
        ResultsDB(url)
    assert migrate(url) == (3, SCHEMA_VERSION)
    assert "run_artifact" in _tables(url)
    assert _sql(url, "SELECT count(*) FROM technique_state WHERE name LIKE 'tunerlib:%'") == [(0,)]
    with ResultsDB(url) as database:
        assert database.load_run_artifact(run_id, "final_config") == {"text": "tour 0 1 2"}
        assert database.load_run_artifact(run_id, "final_best") == {"hash": "h", "configuration": {"x": 0}}
        assert database.load_technique_state(run_id, "tunerlib:final_config") is None
        assert database.load_technique_state(run_id, "AUCBandit") == {"arms": ["A"]}
        database.take_run(run_id, "h", 1)
        assert database.requeue_unfinished(run_id) == 1
        assert [database.claim_next(run_id, "main").dr_id for _ in range(2)] == [second, third]
        database.save_run_artifact(run_id, "final_best", None)
        assert database.load_run_artifact(run_id, "final_best") is None


# the order of steps and the refusals are tunerlib's logic, not the backend's: SQLite files only

def test_migrate_runs_steps_in_order(tmp_path, monkeypatch):
    url = str(tmp_path / "old.db")
    _version0_database(url)
    _stamp(url, -1)
    applied = []
    monkeypatch.setitem(MIGRATIONS, 0, lambda conn: (applied.append(0), _add_technique_state(conn)))
    monkeypatch.setitem(MIGRATIONS, -1, lambda conn: applied.append(-1))
    assert migrate(url) == (-1, SCHEMA_VERSION)
    assert applied == [-1, 0]


def test_migrate_without_registered_step_refuses(tmp_path):
    url = str(tmp_path / "old.db")
    _version0_database(url)
    assert 0 not in MIGRATIONS
    with pytest.raises(DatabaseError, match="no migration from schema version 0 to 1"):
        migrate(url)


def test_failing_migration_changes_nothing(url, monkeypatch):
    _version0_database(url)

    def broken(conn):
        _add_technique_state(conn)
        raise RuntimeError("step failed")

    monkeypatch.setitem(MIGRATIONS, 0, broken)
    with pytest.raises(RuntimeError, match="step failed"):
        migrate(url)
    assert _sql(url, "SELECT value FROM tunerlib_meta") == [("0",)]
    assert "technique_state" not in _tables(url)


def test_migrate_refuses_newer_and_missing_databases(tmp_path):
    url = str(tmp_path / "new.db")
    ResultsDB(url).close()
    _stamp(url, SCHEMA_VERSION + 1)
    with pytest.raises(SchemaVersionError, match="newer than"):
        migrate(url)
    with pytest.raises(DatabaseError, match="no database file"):
        migrate(str(tmp_path / "absent.db"))
    assert not (tmp_path / "absent.db").exists()


def test_concurrent_migrations_on_postgresql_wait_for_each_other(postgres_url, monkeypatch):
    """Two processes migrating one PostgreSQL database at once: the second waits for the first (schema
    lock) and finds it current, instead of running the steps again and failing half-way."""
    _version0_database(postgres_url)
    entered, proceed, outcomes = threading.Semaphore(0), threading.Event(), {}

    def step(conn):  # the first migrator holds here until the second one is waiting or in the step too
        entered.release()
        assert proceed.wait(30)
        _add_technique_state(conn)

    def migrator(name):
        try:
            outcomes[name] = migrate(postgres_url)
        except Exception as exc:  # noqa: BLE001  (reported below)
            outcomes[name] = exc

    monkeypatch.setitem(MIGRATIONS, 0, step)
    first = threading.Thread(target=migrator, args=("first",))
    first.start()
    assert entered.acquire(timeout=30)
    second = threading.Thread(target=migrator, args=("second",))
    second.start()
    waiting = ("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
               "AND application_name = current_setting('application_name')")
    assert wait_until(lambda: entered.acquire(blocking=False) or _sql(postgres_url, waiting) == [(1,)], 30)
    proceed.set()
    first.join(30)
    second.join(30)
    assert outcomes == {"first": (0, SCHEMA_VERSION), "second": (SCHEMA_VERSION, SCHEMA_VERSION)}
