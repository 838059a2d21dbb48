"""The dashboard's JSON API against runs written result by result: the runs list, one run, its results
since an id, importance, the Pareto front of a run with several objectives, escaping, the refusals,
and that serving pages never writes to the database (SQLite and PostgreSQL)."""
import hashlib
import json
import threading

import pytest
from hypothesis import given, settings, strategies as st
from sqlalchemy import create_engine, text
from sqlalchemy.pool import QueuePool

from tunerlib.dashboard.follow import extend_front
from tunerlib.dashboard.server import json_bytes
from tunerlib.dashboard.source import ReadOnlyDatabase
from tunerlib.db import DatabaseError
from tunerlib.db.migrations import open_engine

from dashkit import get, get_json, serving

SCRIPT = "<script>alert(1)</script>"


def _filled(writer, url=None, **kwargs):
    run = writer(url, **kwargs)
    for n in (9, 5, 7, 3, 8):
        run.add(n)
    run.add(4, state="ERROR", extra={"error": f"RuntimeError: {SCRIPT} failed"})
    run.add(6, kind=SCRIPT, requestor="auto/DifferentialEvolution")
    return run


def test_the_runs_list_shows_state_progress_and_the_best_with_its_unit(writer, tmp_path):
    run = _filled(writer, label="first", args={"objective_unit": "s", "test_limit": 14})
    with serving(str(tmp_path / "results.db")) as base:
        status, doc = get_json(base + "/api/runs")
    assert status == 200 and doc["databases"] == [{"url": str(tmp_path / "results.db"), "runs": 1, "error": None}]
    [summary] = doc["runs"]
    assert summary["id"] == run.uuid and summary["label"] == "first" and summary["stored_state"] == "RUNNING"
    assert summary["results"] == 7 and summary["counts"] == {"OK": 6, "ERROR": 1}
    assert summary["progress"]["test_limit"] == 14 and summary["progress"]["fraction"] == pytest.approx(0.5)
    assert summary["best"]["value"] == 3.0 and summary["best"]["n"] == 4 and summary["best"]["technique"] == "PureRandom"
    assert summary["unit"] == "s" and summary["unit_text"] == "in s"
    assert summary["objectives"] == [{"direction": "minimize", "metric": "time", "unit": "s"}]


def test_results_since_an_id_give_only_newer_results_and_follow_new_ones(writer, tmp_path):
    run = _filled(writer)
    with serving(str(tmp_path / "results.db")) as base:
        _, first = get_json(f"{base}/api/runs/{run.uuid}/results?since=0")
        assert [r["n"] for r in first["results"]] == list(range(1, 8)) and first["last_id"] == first["results"][-1]["id"]
        error = first["results"][5]
        assert error["state"] == "ERROR" and error["value"] is None and SCRIPT in error["error"]
        _, nothing = get_json(f"{base}/api/runs/{run.uuid}/results?since={first['last_id']}")
        assert nothing["results"] == [] and nothing["last_id"] == first["last_id"]
        run.add(1)
        run.add(2)
        _, newer = get_json(f"{base}/api/runs/{run.uuid[:8]}/results?since={first['last_id']}")
        _, runs = get_json(base + "/api/runs")
    assert [(r["n"], r["value"]) for r in newer["results"]] == [(8, 1.0), (9, 2.0)]
    assert runs["runs"][0]["results"] == 9 and runs["runs"][0]["best"]["value"] == 1.0


def test_one_run_has_techniques_new_bests_errors_and_parameters(writer, tmp_path):
    run = _filled(writer)
    run.db.save_technique_state(run.run_id, "auto", {"state": {"decisions": [
        {"evaluation": 0, "technique": "PureRandom", "reason": f"because {SCRIPT}"}]}})
    with serving(str(tmp_path / "results.db")) as base:
        _, doc = get_json(f"{base}/api/runs/{run.uuid}")
    techniques = {t["technique"]: t for t in doc["techniques"]}
    assert techniques["PureRandom"]["requests"] == 6 and techniques["PureRandom"]["new_bests"] == 3
    assert techniques["DifferentialEvolution"]["ok"] == 1
    assert [b["value"] for b in doc["new_bests"]] == [9.0, 5.0, 3.0]
    assert doc["errors"]["count"] == 1 and SCRIPT in doc["errors"]["shown"][0]["text"]
    assert doc["decisions"] == [{"evaluation": 0, "technique": "PureRandom", "reason": f"because {SCRIPT}"}]
    assert [p["name"] for p in doc["parameters"]] == ["kind", "n"]
    assert doc["pareto_front"] is None
    assert doc["workers"] == [{"worker": "unknown", "results": 7}]      # written without a worker
    assert "database" not in doc["args"]


def test_importance_needs_enough_results_then_ranks_the_parameter_that_matters(writer, tmp_path):
    run = _filled(writer)
    with serving(str(tmp_path / "results.db")) as base:
        _, few = get_json(f"{base}/api/runs/{run.uuid}/importance")
        for n in range(10, 30):
            run.add(n, kind="fast" if n % 2 else SCRIPT)
        _, enough = get_json(f"{base}/api/runs/{run.uuid}/importance")
    assert "at least 10" in few["error"]
    assert enough["parameters"][0]["name"] == "n" and enough["fit_results"] == 26


def test_a_run_with_two_objectives_has_its_pareto_front(writer, tmp_path):
    """As a multi-objective run records them: the objective text, and in its args each objective and
    each metric's unit."""
    run = writer(objective="minimize time, maximize accuracy",
                 args={"objective_unit": "s", "objective_list": ["minimize time", "maximize accuracy"],
                       "objective_units": {"time": "s", "accuracy": None}})
    points = {1: (1.0, 0.5), 2: (2.0, 0.9), 3: (1.5, 0.4), 4: (3.0, 0.95), 5: (2.5, 0.8), 6: (2.0, 0.9)}
    for n, (seconds, accuracy) in points.items():
        run.add(n, time=seconds, accuracy=accuracy)
    with serving(str(tmp_path / "results.db")) as base:
        _, doc = get_json(f"{base}/api/runs/{run.uuid}")
        _, results = get_json(f"{base}/api/runs/{run.uuid}/results")
    assert [(p["n"], p["values"]) for p in doc["pareto_front"]] == [(1, [1.0, 0.5]), (2, [2.0, 0.9]),
                                                                     (4, [3.0, 0.95])]
    assert doc["objectives"] == [{"direction": "minimize", "metric": "time", "unit": "s"},
                                 {"direction": "maximize", "metric": "accuracy", "unit": None}]
    assert results["results"][2]["values"] == [1.5, 0.4]


def test_every_answer_escapes_markup_and_forbids_inline_scripts(writer, tmp_path):
    _filled(writer, label=SCRIPT)
    with serving(str(tmp_path / "results.db")) as base:
        status, kind, body = get(base + "/api/runs")
        _, _, page = get(base + "/")
        request_headers = get(base + "/api/runs")
    assert status == 200 and b"<" not in body and b">" not in body
    assert json.loads(body)["runs"][0]["label"] == SCRIPT     # escaped, not altered
    assert b"<script src=\"/static/plotly.min.js\"></script>" in page and b"<script>" not in page
    assert request_headers[0] == 200
    assert json_bytes({"v": float("nan"), "w": [float("inf")], "t": "a&b"}) == b'{"v":null,"w":[null],"t":"a\\u0026b"}'


def test_bad_requests_are_answered_with_one_line(writer, tmp_path):
    run = _filled(writer)
    with serving(str(tmp_path / "results.db")) as base:
        assert get_json(f"{base}/api/runs/nosuchrun")[0] == 404
        assert get_json(f"{base}/api/runs/{run.uuid}/results?since=x") == (
            400, {"error": "since='x': pass a result id (a whole number)"})
        assert get_json(f"{base}/api/nothing")[0] == 404
        assert get(base + "/static/plotly.min.js")[0] == 404      # served without a bundle
        assert get(base + "/api/runs", headers={"Host": "attacker.example:80"})[0] == 403
        assert get(base + "/api/runs", headers={"Host": "localhost"})[0] == 200


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _serve_everything(base, uuid):
    for path in ("/", "/static/dashboard.js", "/api/runs", f"/api/runs/{uuid}", f"/api/runs/{uuid}/results",
                 f"/api/runs/{uuid}/importance"):
        assert get(base + path)[0] == 200, path


def test_serving_pages_leaves_a_sqlite_database_byte_identical(writer, tmp_path):
    run = _filled(writer)
    run.close()
    path = tmp_path / "results.db"
    before = _sha(path)
    with serving(str(path)) as base:
        _serve_everything(base, run.uuid)
    assert _sha(path) == before
    database = ReadOnlyDatabase(str(path))
    try:
        with pytest.raises(Exception, match="readonly|read-only|read only"):
            with database.engine.connect() as conn:
                conn.execute(text("DELETE FROM result"))
    finally:
        database.close()
    assert _sha(path) == before


def _counts(url):
    engine, _ = open_engine(url)
    try:
        with engine.connect() as conn:
            return [conn.execute(text(f"SELECT count(*), max(id) FROM {table}")).one()
                    for table in ("tuning_run", "result", "desired_result", "technique_state", "configuration")]
    finally:
        engine.dispose()


def test_serving_pages_adds_no_row_to_a_postgresql_database(writer, postgres_url):
    run = _filled(writer, postgres_url)
    before = _counts(postgres_url)
    with serving(postgres_url) as base:
        _serve_everything(base, run.uuid)
    assert _counts(postgres_url) == before
    database = ReadOnlyDatabase(postgres_url)
    try:
        with pytest.raises(Exception, match="read-only"):
            with database.engine.connect() as conn:
                conn.execute(text("DELETE FROM result"))
    finally:
        database.close()
    assert _counts(postgres_url) == before


def test_what_is_no_results_database_is_refused_with_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("not a database\n" * 100)
    (tmp_path / "empty.db").write_bytes(b"")
    cases = {str(tmp_path / "missing.db"): "no results database at",
             str(tmp_path / "notes.txt"): "not a database",
             "mysql://user@host/db": "reads SQLite and PostgreSQL",
             "sqlite:/x": "malformed database URL"}
    for url, words in cases.items():
        with pytest.raises(DatabaseError, match=words):
            ReadOnlyDatabase(url)
    assert not (tmp_path / "missing.db").exists()


def test_a_connection_one_request_holds_stays_open_while_other_requests_read(writer, tmp_path):
    """Each request thread of the server reads through the same ReadOnlyDatabase: what other threads
    read, however many there are, never closes the connection one thread is querying (closing a
    sqlite3 connection that another thread is using crashed the dashboard)."""
    _filled(writer)
    database = ReadOnlyDatabase(str(tmp_path / "results.db"))
    read = []
    try:
        with database.engine.connect() as held:
            for _ in range(40):     # one request after another, each in a thread of its own
                request = threading.Thread(target=lambda: read.append(len(database.runs())))
                request.start()
                request.join()
            still = held.execute(text("SELECT count(*) FROM result")).scalar()
    finally:
        database.close()
    assert read == [1] * 40 and still == 7


def test_a_request_that_finds_every_pooled_connection_busy_gets_a_one_line_error(writer, tmp_path):
    """A PostgreSQL engine's pool has a limit: a request that cannot get a connection in time is
    answered with the dashboard's one-line DatabaseError (503), not an uncaught pool exception."""
    _filled(writer)
    database = ReadOnlyDatabase(str(tmp_path / "results.db"))
    limited = create_engine("sqlite://", creator=database.engine.pool._creator, poolclass=QueuePool, pool_size=1,
                            max_overflow=0, pool_timeout=0.05)
    database.engine.dispose()
    database.engine = limited
    try:
        with limited.connect():
            with pytest.raises(DatabaseError, match="busy"):
                database.runs()
        assert len(database.runs()) == 1
    finally:
        database.close()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 3)), max_size=40),
       st.integers(2, 3))
def test_the_front_kept_result_by_result_is_the_non_dominated_set(points, objectives):
    """Extending the front one result at a time gives exactly the results that no other dominates (the
    first of equal ones)."""
    vectors = [list(map(float, p[:objectives])) for p in points]
    front = []
    for i, values in enumerate(vectors):
        front = extend_front(front, i, values)

    def dominated(b):
        return any(all(x <= y for x, y in zip(a, b)) and a != b for a in vectors)
    first = [i for i, v in enumerate(vectors) if v not in vectors[:i]]
    assert sorted(i for i, _ in front) == [i for i in first if not dominated(vectors[i])]


def test_a_run_whose_objective_cannot_be_read_back_is_listed_without_values(writer, tmp_path):
    run = writer(objective="weighted sum of time and size")
    run.add(3)
    with serving(str(tmp_path / "results.db")) as base:
        _, doc = get_json(f"{base}/api/runs/{run.uuid}")
        _, results = get_json(f"{base}/api/runs/{run.uuid}/results")
    assert "cannot be read back" in doc["objective_error"] and doc["best"] is None and doc["objectives"] == []
    assert [(r["state"], r["value"]) for r in results["results"]] == [("OK", None)]


def test_what_a_run_saves_after_it_stopped_is_shown(writer, tmp_path):
    """A run records its final state first and then saves its technique's state and re-timed best:
    the dashboard reads them whenever the run saved a technique state since it last looked."""
    run = _filled(writer)
    with serving(str(tmp_path / "results.db")) as base:
        assert get_json(f"{base}/api/runs/{run.uuid}")[1]["decisions"] == []
        run.db.set_run_state(run.run_id, "COMPLETE")
        assert get_json(f"{base}/api/runs/{run.uuid}")[1]["stored_state"] == "COMPLETE"
        run.db.save_technique_state(run.run_id, "auto", {"state": {"decisions": [
            {"evaluation": 0, "technique": "PureRandom", "reason": "the last word"}]}})
        _, doc = get_json(f"{base}/api/runs/{run.uuid}")
    assert [d["reason"] for d in doc["decisions"]] == ["the last word"]
