"""Round-trip and error-message tests of tunerlib.db against real SQLite files."""
import json
import math
import sqlite3
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tunerlib.db import ResultRecord
from tunerlib.db import SCHEMA_VERSION, DatabaseError, NotFoundError, ResultsDB, SchemaVersionError
from tunerlib.db.models import METADATA

from kit import core_path, pending_count


@pytest.fixture(params=[True, False], ids=["fast-sqlite", "core"])
def db(request, tmp_path):
    """A fresh database, once through the direct sqlite3 runner and once through SQLAlchemy Core."""
    database = ResultsDB(str(tmp_path / "t.db"))
    if not request.param:
        core_path(database)
    yield database
    database.close()


@pytest.fixture
def run(db):
    """(program_version_id, run_id) of a new run."""
    pv = db.program_version_id("proj", "prog", "v1", '{"x":"int"}')
    run_id, _ = db.create_run(pv, "lbl", {"technique": ["A"]}, 7, None, "MinimizeTime()")
    return pv, run_id


def _request(db, pv, run_id, n, requestor="T"):
    ids = []
    for i in range(n):
        ids.append(db.request_configuration(run_id, pv, f"{i:064x}", {"x": i}, requestor, i, limit=1.5))
    return ids


def _one_line(exc_info):
    text = str(exc_info.value)
    assert "\n" not in text and text
    return text


# ------------------------------------------------------------------------------------------- opening

def test_default_url_creates_tunerlib_db_in_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with ResultsDB(None) as database:
        assert database.display_url == "tunerlib.db"
    assert (tmp_path / "tunerlib.db").is_file()


@pytest.mark.parametrize("form", ["path", "url"])
def test_plain_path_and_url_create_parent_directories(tmp_path, form):
    target = tmp_path / "a" / "b" / "r.db"
    url = str(target) if form == "path" else f"sqlite:///{target}"
    with ResultsDB(url) as database:
        database.program_version_id("p", "q", "1", "{}")
    assert target.is_file()


def test_sqlite_pragmas_applied(tmp_path):
    database = ResultsDB(str(tmp_path / "t.db"))
    with database.engine.connect() as conn:
        pragma = lambda name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode").lower() == "wal"
        assert pragma("synchronous") == 1  # NORMAL
        assert pragma("busy_timeout") == 30000
        assert pragma("foreign_keys") == 1
    database.close()


def test_in_memory_url_works():
    with ResultsDB("sqlite://") as database:
        pv = database.program_version_id("p", "q", "1", "{}")
        assert database.runs_of(pv) == []


@pytest.mark.parametrize("sub", ["t.db", "deeper/t.db"])
def test_path_under_regular_file_is_one_line_error(tmp_path, sub):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(DatabaseError) as info:
        ResultsDB(str(blocker / sub))
    text = _one_line(info)
    assert text.startswith(f"cannot create database file {blocker / sub}")
    assert "not a directory" in text and "pass --database with a writable path" in text


def test_directory_as_database_is_error(tmp_path):
    with pytest.raises(DatabaseError, match="is a directory"):
        ResultsDB(str(tmp_path))


@pytest.mark.parametrize("url", ["://nowhere", "sqlite:/x.db", "sqlite://:memory:", "postgresql://h:port/db"])
def test_malformed_url_is_one_line_error_with_example(url):
    with pytest.raises(DatabaseError) as info:
        ResultsDB(url)
    text = _one_line(info)
    assert "malformed database URL" in text and repr(url) in text
    assert "sqlite:///path/tunerlib.db or postgresql+psycopg://user@host/db" in text


def test_unknown_dialect_is_error():
    with pytest.raises(DatabaseError) as info:
        ResultsDB("nosuchdb://user@host/db")
    assert "unknown database dialect" in _one_line(info) and "postgresql+psycopg://" in str(info.value)


def test_missing_driver_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed (the test extra installs it)
    with pytest.raises(DatabaseError) as info:
        ResultsDB("postgresql+psycopg://user:secret@localhost/tuning")
    text = _one_line(info)
    assert "pip install 'tunerlib[postgres]'" in text and "secret" not in text


def test_non_sqlite_file_is_error(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("this is not a database, just some text that is long enough " * 20)
    with pytest.raises(DatabaseError) as info:
        ResultsDB(str(path))
    assert "is not a SQLite database" in _one_line(info)


def test_foreign_database_with_tables_but_no_meta_is_error(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    with pytest.raises(DatabaseError) as info:
        ResultsDB(str(path))
    assert "is not a tunerlib results database" in _one_line(info)


def _stamp(path, version):
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE tunerlib_meta SET value=? WHERE key='schema_version'", (str(version),))


def test_new_database_is_stamped_and_reopens(tmp_path):
    path = tmp_path / "t.db"
    ResultsDB(str(path)).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM tunerlib_meta WHERE key='schema_version'").fetchall() == [
            (str(SCHEMA_VERSION),)]
    ResultsDB(str(path)).close()


def test_older_schema_version_error_says_how_to_migrate(tmp_path):
    path = tmp_path / "t.db"
    ResultsDB(str(path)).close()
    _stamp(path, SCHEMA_VERSION - 1)
    with pytest.raises(SchemaVersionError) as info:
        ResultsDB(str(path))
    assert _one_line(info) == (
        f"database {path} has schema version {SCHEMA_VERSION - 1} but this tunerlib uses {SCHEMA_VERSION}: "
        f"run `tunerlib migrate {path}` to upgrade (back it up first) or use a new "
        "--database")


def test_newer_schema_version_error(tmp_path):
    path = tmp_path / "t.db"
    ResultsDB(str(path)).close()
    _stamp(path, SCHEMA_VERSION + 5)
    with pytest.raises(SchemaVersionError) as info:
        ResultsDB(str(path))
    text = _one_line(info)
    assert f"has schema version {SCHEMA_VERSION + 5} but this tunerlib uses {SCHEMA_VERSION}" in text
    assert isinstance(info.value, DatabaseError)


def test_closed_database_refuses_calls(tmp_path):
    database = ResultsDB(str(tmp_path / "t.db"))
    database.close()
    with pytest.raises(DatabaseError, match="is closed"):
        database.program_version_id("p", "q", "1", "{}")


# ------------------------------------------------------------------------------------ get or create

def test_program_version_is_idempotent_and_keyed_by_parameter_info(db):
    a = db.program_version_id("proj", "prog", "v1", '{"x":"int"}')
    assert db.program_version_id("proj", "prog", "v1", '{"x":"int"}') == a
    assert db.program_version_id("proj", "prog", "v1", '{"x":"float"}') != a
    assert db.program_version_id("proj", "prog", "v2", '{"x":"int"}') != a
    assert db.program_version_id("proj2", "prog", "v1", '{"x":"int"}') != a
    assert isinstance(a, int)


def test_machine_id_get_or_create_and_update(db, tmp_path):
    m = db.machine_id("host1", "laptop", 4)
    assert db.machine_id("host1") == m
    assert db.machine_id("host1", "laptop", 4) == m
    assert db.machine_id("host2", "laptop", 8) != m
    db.machine_id("host1", "server", 16)
    with sqlite3.connect(tmp_path / "t.db") as conn:
        row = conn.execute("SELECT mc.name, m.cpu_count FROM machine m JOIN machine_class mc "
                           "ON mc.id = m.machine_class_id WHERE m.id=?", (m,)).fetchone()
    assert row == ("server", 16)


def test_input_id_get_or_create_shared_by_program_versions(db):
    v1 = db.program_version_id("proj", "prog", "v1", "{}")
    v2 = db.program_version_id("proj", "prog", "v2", "{}")
    other = db.program_version_id("proj", "other", "v1", "{}")
    fixed = db.input_id(v1, "fixed")
    assert db.input_id(v1, "fixed") == fixed
    assert db.input_id(v2, "fixed") == fixed  # input classes belong to the program
    assert db.input_id(other, "fixed") != fixed
    big = db.input_id(v1, "fixed", size=100)
    assert big != fixed and db.input_id(v1, "fixed", size=100) == big
    f = db.input_id(v1, "files", "/data/a.tsp", 42, {"n": 42})
    assert db.input_id(v1, "files", "/data/a.tsp", 42) == f
    assert db.input_id(v1, "files", "/data/b.tsp", 42) != f
    with pytest.raises(NotFoundError):
        db.input_id(9999, "fixed")


# -------------------------------------------------------------------------------------------- runs

def test_run_round_trip_and_states(db):
    pv = db.program_version_id("proj", "prog", "v1", "{}")
    machine = db.machine_id("host", None, 2)
    run_id, run_uuid = db.create_run(pv, "exp", {"technique": ["A", "B"], "limit": 3.5}, 42, machine,
                                     "MinimizeAttribute('length')")
    info = db.run_info(run_id)
    assert info["uuid"] == run_uuid and len(run_uuid) == 36
    assert info["label"] == "exp" and info["seed"] == 42 and info["machine_id"] == machine
    assert info["args"] == {"technique": ["A", "B"], "limit": 3.5}
    assert info["objective"] == "MinimizeAttribute('length')"
    assert info["state"] == "RUNNING" and info["end_date"] is None and info["start_date"] > 0
    db.set_run_state(run_id, "COMPLETE")
    info = db.run_info(run_id)
    assert info["state"] == "COMPLETE" and info["end_date"] >= info["start_date"]
    db.set_run_state(run_id, "RUNNING")  # resumed
    assert db.run_info(run_id)["end_date"] is None
    with pytest.raises(ValueError, match="run state 'DONE'"):
        db.set_run_state(run_id, "DONE")
    with pytest.raises(NotFoundError):
        db.set_run_state(run_id + 100, "ABORTED")
    with pytest.raises(NotFoundError):
        db.run_info(run_id + 100)


def _complete_all(db, run_id, states):
    for state in states:
        db.complete(db.claim_next(run_id, "w").dr_id, ResultRecord(state, 1.0))


def test_list_runs_joins_program_and_counts_results(db):
    assert db.list_runs() == []
    pv1 = db.program_version_id("projA", "tsp", "v1", '{"a":1}')
    pv2 = db.program_version_id("projB", "gemm", "v2", '{"b":2}')
    r1, u1 = db.create_run(pv1, "first", {}, None, None, "o")
    r2, u2 = db.create_run(pv2, None, {}, None, None, "o")
    r3, u3 = db.create_run(pv1, "third", {}, None, None, "o")
    _request(db, pv1, r1, 3)
    _complete_all(db, r1, ["OK", "ERROR", "TIMEOUT"])
    _request(db, pv2, r2, 2)  # requested but never measured: no results
    _request(db, pv1, r3, 1)
    db.complete(db.claim_next(r3, "w").dr_id, ResultRecord("OK", 2.0))
    db.set_run_state(r1, "COMPLETE")
    runs = db.list_runs()
    assert [r["id"] for r in runs] == [r1, r2, r3]
    assert all(list(r) == ["id", "uuid", "project", "program", "version", "label", "state", "tests",
                           "start_date", "end_date", "seed", "host", "pid", "script_version"] for r in runs)
    assert all(r["script_version"] is None for r in runs)     # create_run was given none
    assert [(r["uuid"], r["project"], r["program"], r["version"], r["label"], r["tests"]) for r in runs] == [
        (u1, "projA", "tsp", "v1", "first", 3), (u2, "projB", "gemm", "v2", None, 0),
        (u3, "projA", "tsp", "v1", "third", 1)]
    for r in runs:
        info = db.run_info(r["id"])
        assert (r["state"], r["start_date"], r["end_date"]) == (info["state"], info["start_date"],
                                                                info["end_date"])
    assert runs[0]["state"] == "COMPLETE" and runs[0]["end_date"] is not None
    assert runs[1]["state"] == "RUNNING" and runs[1]["end_date"] is None
    assert isinstance(runs[0]["tests"], int) and isinstance(runs[0]["start_date"], float)


def test_list_runs_is_one_query(tmp_path):
    path = tmp_path / "q.db"
    with ResultsDB(str(path)) as database:
        pv = database.program_version_id("p", "q", "1", "{}")
        for _ in range(5):
            database.create_run(pv, None, {}, None, None, "o")
        runner = database._runner()  # white box: trace the statements of the direct sqlite3 runner
        seen = []
        runner.db.set_trace_callback(seen.append)
        assert len(database.list_runs()) == 5
        runner.db.set_trace_callback(None)
    selects = [sql for sql in seen if sql.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 1 and "JOIN program" in selects[0]


# ------------------------------------------------------------------- configurations and requests

def test_configuration_id_is_idempotent(db, run):
    pv, _ = run
    a = db.configuration_id(pv, "a" * 64, {"x": 1})
    assert db.configuration_id(pv, "a" * 64, {"x": 1}) == a
    assert db.configuration_id(pv, "b" * 64, {"x": 2}) != a
    pv2 = db.program_version_id("proj", "prog", "v2", "{}")
    assert db.configuration_id(pv2, "a" * 64, {"x": 1}) != a


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children,
                                                                      max_size=4),
    max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=6), extra=json_values)
def test_json_round_trips_through_claim_and_results(db, run, config, extra):
    pv, run_id = run
    dr = db.request_configuration(run_id, pv, json.dumps(config, sort_keys=True), config, "prop", 0)
    claim = db.claim_next(run_id, "w")
    assert claim.dr_id == dr and claim.config_data == config
    # same types (ints stay ints, bools bools); keys sorted: an equal config stored by an earlier example
    # under the same hash may have another key order
    assert json.dumps(claim.config_data, sort_keys=True) == json.dumps(config, sort_keys=True)
    rid = db.complete(dr, ResultRecord("OK", 1.0, extra={"value": extra}))
    row = db.results_after(run_id, rid - 1)[0]
    assert row.config_data == config and row.extra == {"value": extra}


def test_request_claim_complete_flow(db, run):
    pv, run_id = run
    dr = db.request_configuration(run_id, pv, "c" * 64, {"x": 3, "p": [2, 0, 1]}, "DE", 4, limit=2.5)
    cid = db.configuration_id(pv, "c" * 64, None)  # the configuration it created
    assert pending_count(db, run_id) == 1
    claim = db.claim_next(run_id, "worker-1")
    assert (claim.dr_id, claim.run_id, claim.configuration_id, claim.config_hash) == (dr, run_id, cid, "c" * 64)
    assert claim.config_data == {"x": 3, "p": [2, 0, 1]}
    assert (claim.limit, claim.requestor, claim.generation) == (2.5, "DE", 4)
    assert db.claim_next(run_id, "worker-2") is None
    assert pending_count(db, run_id) == 1  # RUNNING still pending
    machine = db.machine_id("host")
    inp = db.input_id(pv, "fixed")
    rid = db.complete(dr, ResultRecord("OK", 0.25, 0.9, 3.0, 17.0, {"length": 1234}, 0.01, machine, inp))
    assert pending_count(db, run_id) == 0
    [row] = db.run_results(run_id)
    assert (row.id, row.desired_result_id, row.configuration_id, row.config_hash) == (rid, dr, cid, "c" * 64)
    assert (row.state, row.time, row.accuracy, row.energy, row.size) == ("OK", 0.25, 0.9, 3.0, 17.0)
    assert (row.extra, row.was_new_best, row.requestor, row.collection_cost) == ({"length": 1234}, False,
                                                                                 "DE", 0.01)
    [d] = db.desired_results(run_id)
    assert (d.id, d.config_hash, d.requestor, d.generation, d.state, d.result_id) == (
        dr, "c" * 64, "DE", 4, "COMPLETE", rid)
    assert db.counts_by_state(run_id) == {"OK": 1}


def test_claim_order_is_request_order_and_per_run(db, run):
    pv, run_id = run
    other_run, _ = db.create_run(pv, None, {}, None, None, "o")
    first = _request(db, pv, run_id, 3)
    _request(db, pv, other_run, 2)
    late = [db.request_configuration(run_id, pv, "e" * 64, {"x": "late"}, "T", g) for g in (9, 10)]
    order = [db.claim_next(run_id, "w").dr_id for _ in range(5)]
    assert order == first + late
    assert db.claim_next(run_id, "w") is None
    assert pending_count(db, other_run) == 2


def test_complete_validates_state_and_writes_nothing_on_error(db, run):
    pv, run_id = run
    [dr] = _request(db, pv, run_id, 1)
    with pytest.raises(ValueError, match="'FAST' is not one of OK, TIMEOUT, ERROR, INFEASIBLE"):
        db.complete(dr, ResultRecord("FAST", 1.0))
    with pytest.raises(NotFoundError):
        db.complete(dr + 999, ResultRecord("OK", 1.0))
    rid = db.complete(dr, ResultRecord("TIMEOUT", None))
    with pytest.raises(DatabaseError, match="already complete"):
        db.complete(dr, ResultRecord("OK", 1.0))
    assert [r.id for r in db.run_results(run_id)] == [rid]
    assert db.counts_by_state(run_id) == {"TIMEOUT": 1}


def test_results_after_is_ordered_by_result_id(db, run):
    pv, run_id = run
    other_run, _ = db.create_run(pv, None, {}, None, None, "o")
    drs = _request(db, pv, run_id, 6, requestor="R")
    [other_dr] = _request(db, pv, other_run, 1)
    for _ in drs:
        db.claim_next(run_id, "w")
    completion_order = [drs[3], drs[0], drs[5], drs[1], drs[4], drs[2]]
    rids = []
    for k, dr in enumerate(completion_order):
        rids.append(db.complete(dr, ResultRecord("OK", float(k))))
        if k == 2:
            db.complete(db.claim_next(other_run, "w").dr_id, ResultRecord("OK", 9.0))
    rows = db.results_after(run_id, 0)
    assert [r.id for r in rows] == sorted(rids)
    assert [r.desired_result_id for r in rows] == completion_order
    assert all(r.requestor == "R" for r in rows) and other_dr not in [r.desired_result_id for r in rows]
    assert [r.id for r in db.results_after(run_id, rids[2])] == rids[3:]
    assert db.results_after(run_id, rids[-1]) == []
    assert db.run_results(run_id) == rows


def test_mark_new_best_batch(db, run):
    pv, run_id = run
    drs = _request(db, pv, run_id, 4)
    rids = [db.complete(db.claim_next(run_id, "w").dr_id, ResultRecord("OK", 1.0)) for _ in drs]
    db.mark_new_best([rids[0], rids[2]])
    db.mark_new_best([])
    assert [r.was_new_best for r in db.run_results(run_id)] == [True, False, True, False]


def test_technique_state_upsert(db, run):
    _, run_id = run
    assert db.load_technique_state(run_id, "AUCBandit") is None
    db.save_technique_state(run_id, "AUCBandit", {"uses": [1, 2], "decay": 0.5})
    assert db.load_technique_state(run_id, "AUCBandit") == {"uses": [1, 2], "decay": 0.5}
    db.save_technique_state(run_id, "AUCBandit", {"uses": [3]})
    db.save_technique_state(run_id, "DE", {"population": [[1, 2]]})
    assert db.load_technique_state(run_id, "AUCBandit") == {"uses": [3]}
    assert db.load_technique_state(run_id, "DE") == {"population": [[1, 2]]}


def test_counts_by_state(db, run):
    pv, run_id = run
    drs = _request(db, pv, run_id, 5)
    for dr, state in zip(drs, ["OK", "ERROR", "OK", "INFEASIBLE", "TIMEOUT"]):
        db.claim_next(run_id, "w")
        db.complete(dr, ResultRecord(state, 1.0 if state == "OK" else None, extra={"traceback": "x"} if state == "ERROR" else None))
    assert db.counts_by_state(run_id) == {"OK": 2, "ERROR": 1, "INFEASIBLE": 1, "TIMEOUT": 1}


def test_json_stays_json_in_the_file(tmp_path):
    path = tmp_path / "t.db"
    database = ResultsDB(str(path))
    pv = database.program_version_id("proj", "prog", "v1", '{"x":"int"}')
    run_id, _ = database.create_run(pv, None, {"technique": ["A"]}, 1, None, "o")
    dr = database.request_configuration(run_id, pv, "e" * 64, {"perm": [2, 0, 1], "flag": True, "f": 0.5}, "A", 0)
    database.complete(dr, ResultRecord("OK", 1.0, extra={"length": 12, "nested": {"a": [1.5]}}))
    database.save_technique_state(run_id, "A", {"k": [1]})
    database.input_id(pv, "files", "/x", None, {"n": 3})
    database.close()
    with sqlite3.connect(path) as conn:
        for table, column, expected in [("configuration", "data", {"perm": [2, 0, 1], "flag": True, "f": 0.5}),
                                        ("tuning_run", "args", {"technique": ["A"]}),
                                        ("result", "extra", {"length": 12, "nested": {"a": [1.5]}}),
                                        ("technique_state", "data", {"k": [1]}),
                                        ("input", "extra", {"n": 3})]:
            kind, text = conn.execute(f"SELECT typeof({column}), {column} FROM {table}").fetchone()
            assert kind == "text" and json.loads(text) == expected
        for table in METADATA.tables:
            for (name, *_rest) in conn.execute(f"SELECT name FROM pragma_table_info('{table}')"):
                blobs = conn.execute(f'SELECT count(*) FROM "{table}" WHERE typeof("{name}")=\'blob\'')
                assert blobs.fetchone()[0] == 0, (table, name)


def test_nan_time_is_stored_without_losing_the_result(db, run):
    pv, run_id = run
    [dr] = _request(db, pv, run_id, 1)
    db.claim_next(run_id, "w")
    db.complete(dr, ResultRecord("OK", math.inf, extra={"note": "inf time"}))
    assert db.run_results(run_id)[0].time == math.inf


# -------------------------------------------------------------------------------------- migrations

def test_locked_database_gives_one_line_error_and_loses_nothing(db, run, tmp_path, monkeypatch):
    """A lock held past the busy timeout and past the patience of the lock wait (0 s here)."""
    monkeypatch.setattr("tunerlib.db.waits.LOCK_PATIENCE", 0.0)
    pv, run_id = run
    [dr] = _request(db, pv, run_id, 1)
    runner = db._runner()  # white box: shorten the 30 s busy timeout for the test
    pragma = "PRAGMA busy_timeout=50"
    runner.db.execute(pragma) if hasattr(runner, "db") else runner.conn.exec_driver_sql(pragma)
    blocker = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DatabaseError) as info:
            db.claim_next(run_id, "w")
        assert "failed: database is locked" in _one_line(info)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert db.claim_next(run_id, "w").dr_id == dr  # usable again once the lock is gone
