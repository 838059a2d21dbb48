"""The SQLite store hands a poll the results its own connection just committed (tunerlib.db.tail): the
rows equal a read's, no result is read back in a serial run, and a commit by any other connection
makes the poll read."""
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tunerlib import MeasurementInterface, MinimizeAttribute, Result, TuningOptions
from tunerlib.db import ResultRecord, ResultsDB
from tunerlib.parameters import ConfigurationManipulator, FloatParameter

from sqltrace import traced_run


def _statements(db):
    """The SQL text of every statement ``db``'s connection runs from now on (a list that grows)."""
    seen = []
    db._runner().db.set_trace_callback(seen.append)
    return seen


def _result_reads(statements):
    return [s for s in statements if s.lstrip().upper().startswith("SELECT") and "FROM result" in s]


def _fresh_read(path, run_id, after=0):
    with ResultsDB(path) as other:
        return other.results_after(run_id, after)


def _setup(path):
    db = ResultsDB(path)
    pv = db.program_version_id("proj", "prog", "v1", '{"x":"float"}')
    run_id, _ = db.create_run(pv)
    return db, pv, run_id


def _measure(db, pv, run_id, i, record=None):
    claim = db.request_and_claim(run_id, pv, f"{i:064x}", {"x": i / 3, "t": (i, "a")}, f"T{i % 2}", i, None,
                                 "main")
    return db.complete(claim.dr_id, record or ResultRecord("OK", time=i, extra={"v": (i, i / 7), 1: None},
                                                           collection_cost=1, worker="main"))


def test_a_serial_poll_reads_no_result_back_and_gets_what_a_read_gives(tmp_path):
    path = str(tmp_path / "t.db")
    db, pv, run_id = _setup(path)
    assert db.results_after(run_id, 0) == []
    statements, polled, last = _statements(db), [], 0
    for i in range(6):
        _measure(db, pv, run_id, i)
        rows = db.results_after(run_id, last)
        assert len(rows) == 1
        polled += rows
        last = rows[-1].id
    assert _result_reads(statements) == []
    assert polled == _fresh_read(path, run_id)  # ints as floats, tuples as lists, keys as strings
    assert isinstance(polled[0].time, float) and polled[0].extra == {"v": [0, 0.0], "1": None}
    db.close()


def test_a_new_best_marked_before_the_poll_is_in_the_row(tmp_path):
    path = str(tmp_path / "t.db")
    db, pv, run_id = _setup(path)
    db.results_after(run_id, 0)
    first, second = _measure(db, pv, run_id, 1), _measure(db, pv, run_id, 2)
    db.mark_new_best([second])
    rows = db.results_after(run_id, 0)
    assert [(r.id, r.was_new_best) for r in rows] == [(first, False), (second, True)]
    assert rows == _fresh_read(path, run_id)
    db.close()


def test_a_result_another_connection_commits_is_read(tmp_path):
    """A worker process's result between two of this connection's own: the poll reads all three."""
    path = str(tmp_path / "t.db")
    db, pv, run_id = _setup(path)
    db.results_after(run_id, 0)
    _measure(db, pv, run_id, 1)
    with ResultsDB(path) as worker:
        dr = worker.request_configuration(run_id, pv, "f" * 64, {"x": 9.0}, "W", 9)
        claim = worker.claim_next(run_id, "w1")
        assert claim is not None and claim.dr_id == dr
        worker.complete(dr, ResultRecord("ERROR", extra={"error": "boom"}, worker="w1"))
    _measure(db, pv, run_id, 2)
    statements = _statements(db)
    rows = db.results_after(run_id, 0)
    assert [r.requestor for r in rows] == ["T1", "W", "T0"] and len(_result_reads(statements)) == 1
    assert rows == _fresh_read(path, run_id)
    db.close()


_OPS = st.lists(st.sampled_from(["own", "own", "other", "other-run", "poll", "poll-from-0", "best"]),
                min_size=1, max_size=25)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_every_poll_equals_a_read_whatever_the_interleaving(tmp_path_factory, ops):
    path = str(tmp_path_factory.mktemp("tail") / "t.db")
    db, pv, run_id = _setup(path)
    other_run, _ = db.create_run(pv)
    last, n = 0, 0
    with ResultsDB(path) as other:
        for op in ops + ["poll"]:
            n += 1
            if op == "own":
                _measure(db, pv, run_id, n)
            elif op in ("other", "other-run"):
                target = run_id if op == "other" else other_run
                dr = other.request_configuration(target, pv, f"{n:063x}e", {"x": float(n)}, "W", n)
                assert other.claim_next(target, "w") is not None
                other.complete(dr, ResultRecord("OK", time=math.pi * n, worker="w"))
            elif op == "best":
                ids = [r.id for r in _fresh_read(path, run_id)]
                db.mark_new_best(ids[-1:])
            else:
                after = 0 if op == "poll-from-0" else last
                rows = db.results_after(run_id, after)
                assert rows == _fresh_read(path, run_id, after)
                last = rows[-1].id if rows else after
    db.close()


class _Quadratic(MeasurementInterface):
    def manipulator(self):
        return ConfigurationManipulator([FloatParameter("x", -1.0, 1.0)])

    def objective(self):
        return MinimizeAttribute("v")

    def run(self, desired_result, input, limit):
        return Result(extra={"v": desired_result.configuration.data["x"] ** 2})


@pytest.mark.parametrize("technique", ["PureRandom", "auto"])
def test_a_serial_run_on_sqlite_never_reads_its_results_back_while_tuning(tmp_path, monkeypatch, technique):
    """The search is fed each result without reading it back (only the first poll reads; the summary
    and the final reads come after the last poll)."""
    opts = TuningOptions(database=str(tmp_path / "r.db"), quiet=True, seed=1, technique=[technique],
                         test_limit=40)
    summary, seen, polls = traced_run(monkeypatch, _Quadratic, opts)
    assert summary.tests == 40
    during = seen[polls[1]:polls[-1]]  # from the second poll (the first reads) to the last one
    assert len(polls) > 40 and _result_reads(during) == []
