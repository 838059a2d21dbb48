"""tunerlib.measure.IsolatedWorker and the state rule, with tiny real Python workloads.

Limits are generous against much longer sleeps (1 s limits vs 100 s sleeps; a quick reply gets 2 s
or more), so a busy machine cannot flip an outcome.
"""
import time

import pytest

import measure_jobs as jobs
from tunerlib.measure import IsolatedWorker, crashed, rejected, timed_out


@pytest.fixture
def worker():
    w = IsolatedWorker(jobs.setup_square, 0.0, startup_timeout_s=120.0)
    yield w
    w.close()


def test_answers_and_the_worker_stays_up(worker):
    assert worker.call(("ok", 3), 60.0).time == 9.0
    pid = worker.call(("pid",), 60.0)
    assert worker.call(("ok", 2), 60.0).time == 4.0 and worker.call(("pid",), 60.0) == pid
    assert worker.restarts == 0


def test_crash_is_error_naming_the_signal_and_the_worker_restarts(worker):
    res = worker.call(("crash",), 60.0)
    assert res.state == "ERROR" and res.extra["error"] == "kernel crashed (SIGSEGV)" and res.extra["crashed"]
    assert worker.call(("ok", 4), 60.0).time == 16.0 and worker.restarts == 1


def test_sleep_past_the_limit_is_timeout_and_the_worker_is_killed(worker):
    first = worker.call(("pid",), 60.0)
    res = worker.call(("sleep", 100.0), 1.0)
    assert res.state == "TIMEOUT" and "killed" in res.extra["error"]
    assert worker.call(("pid",), 60.0) != first and worker.restarts == 1


def test_wrong_output_and_exceptions_are_errors(worker):
    res = worker.call(("wrong", 1, 2), 60.0)
    assert res.state == "ERROR" and res.extra["error"] == "wrong output: got 1, expected 2"
    res = worker.call(("raise",), 60.0)
    assert res.state == "ERROR" and res.extra["error"] == "measurement raised ValueError: bad configuration value"
    assert worker.restarts == 0


def test_start_up_is_not_counted_against_the_limit():
    w = IsolatedWorker(jobs.setup_square, 4.0, startup_timeout_s=120.0)   # 4 s set-up, 2 s limit
    try:
        start = time.monotonic()
        assert w.call(("ok", 5), 2.0).time == 25.0
        assert time.monotonic() - start >= 4.0
    finally:
        w.close()


def test_failed_start_ups():
    w = IsolatedWorker(jobs.setup_fails, None)
    dies = IsolatedWorker(jobs.setup_dies, None)
    slow = IsolatedWorker(jobs.setup_square, 100.0, startup_timeout_s=1.0)
    try:
        res = w.call(("ok", 1), 60.0)
        assert res.state == "ERROR" and res.extra["error"] == \
            "measurement worker start-up failed: RuntimeError: no such device"
        for _ in range(2):
            res = dies.call(("ok", 1), 60.0)
            assert res.extra["error"] == "measurement worker died during start-up (exit status 3)"
        assert dies.restarts == 1
        res = slow.call(("ok", 1), 60.0)
        assert res.state == "TIMEOUT" and "start-up timed out after 1 s" in res.extra["error"]
    finally:
        for each in (w, dies, slow):
            each.close()


def test_state_constructors():
    assert rejected("bad local size", "launch").state == "INFEASIBLE"
    assert rejected("x", "build").extra == {"error": "x", "phase": "build"}
    assert timed_out("too slow", time=2.0).time == 2.0
    assert crashed(-6, "taco").extra["error"] == "taco crashed (SIGABRT)"
    assert crashed(134).extra["error"] == "kernel crashed (exit status 134)"
