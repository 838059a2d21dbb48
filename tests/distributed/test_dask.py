"""The Dask executor (``--executor dask --scheduler ADDRESS``) on a real local Dask cluster: a
``distributed.LocalCluster`` of 2 worker processes with one thread each, started once for the module
(skipped with the reason where Dask is not installed).

The runs go through the real command line (the toy tuner script, run as ``python toy_tuner.py``, so the
workers load it by its path). After each run every request is COMPLETE with exactly one result and the
run stopped at its ``--test-limit``. The executor's handling of lost, killed and stale tasks is also
checked without a cluster, with stand-in futures.
"""
import importlib.util
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import text

import zygote

from tunerlib import Result
from tunerlib.db.migrations import open_engine
from tunerlib.result import Configuration, DesiredResult, Input

if importlib.util.find_spec("distributed") is None:
    pytest.skip("Dask is not installed (pip install 'tunerlib[dask]')", allow_module_level=True)

from tunerlib.executors import dask as dask_executor  # noqa: E402  (after the skip)
from tunerlib.executors.dask import DaskExecutor  # noqa: E402
from tunerlib.executors.dask_worker import DaskJob, WorkerReply, measure_on_worker  # noqa: E402

TOY = Path(__file__).parents[1] / "core" / "scripts" / "toy_tuner.py"
#: a line of Dask's logging (its default format: time - logger - level - message)
_DASK_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - distributed\.[\w.]+ - [A-Z]+ - ")
WAIT = int(os.environ.get("TUNERLIB_TEST_WAIT", "300"))


@pytest.fixture(scope="module")
def cluster():
    """A local Dask cluster: 2 worker processes (each restarted by its nanny when it dies), 1 thread each
    (skips the module's cluster tests, with the reason, where it cannot be started)."""
    try:
        import distributed  # imported here: collecting this module stays light
        local = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                         dashboard_address=":0", silence_logs=50)
    except Exception as exc:  # noqa: BLE001  (no sockets, no processes: say why and skip)
        pytest.skip(f"a local Dask cluster could not be started: {type(exc).__name__}: {exc}")
    with local:
        yield local


def _query(url, sql, **params):
    engine, _ = open_engine(str(url))
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), params)]
    finally:
        engine.dispose()


def _tune(db, *extra, env=None):
    """Run the toy tuner through its command line; (exit code, stdout, stderr)."""
    args = [sys.executable, str(TOY), "--database", str(db), "--quiet", "--seed", "5", *extra]
    done = zygote.run(args, capture_output=True, text=True, timeout=WAIT, env=env)
    return done.returncode, done.stdout, done.stderr


def _check_invariants(db, limit):
    """Every request COMPLETE with exactly one result, ``limit`` results, the run COMPLETE, each result
    measured by a Dask worker process (``host:pid:dask``) on a machine of class ``testers``."""
    assert dict(_query(db, "SELECT state, count(*) FROM desired_result GROUP BY state")) == {"COMPLETE": limit}
    per_request = _query(db, "SELECT desired_result_id, count(*) FROM result GROUP BY desired_result_id")
    assert len(per_request) == limit and all(count == 1 for _, count in per_request)
    assert _query(db, "SELECT state FROM tuning_run") == [("COMPLETE",)]
    rows = _query(db, "SELECT r.desired_result_id, r.worker, c.name FROM result r JOIN machine m "
                      "ON r.machine_id = m.id JOIN machine_class c ON m.machine_class_id = c.id")
    assert len(rows) == limit
    assert all(worker.endswith(":dask") and cls == "testers" for _, worker, cls in rows)
    return {dr: int(worker.split(":")[-2]) for dr, worker, _ in rows}


def test_a_run_on_a_dask_cluster_gets_one_result_per_request(cluster, tmp_path):
    db = tmp_path / "dask.db"
    code, out, err = _tune(db, "--executor", "dask", "--scheduler", cluster.scheduler_address,
                           "--test-limit", "12", "--sleep", "0.05", "--machine-class", "testers")
    assert code == 0, err
    assert "stopped (test limit reached) after 12 tests" in out
    pids = _check_invariants(db, 12)
    from distributed import Client
    with Client(cluster, set_as_default=False) as client:
        workers = set(client.run(os.getpid).values())
    assert set(pids.values()) <= workers  # measured in the cluster's worker processes, never in the run's


def test_a_dask_worker_killed_mid_measurement_loses_nothing(cluster, tmp_path):
    """The first measurement kills its own Dask worker process (SIGKILL): Dask runs the task again on
    a live worker; the request still gets exactly one result, from another process."""
    db, marker = tmp_path / "killed.db", tmp_path / "killed"
    code, out, err = _tune(db, "--executor", "dask", "--scheduler", cluster.scheduler_address,
                           "--test-limit", "10", "--sleep", "0.1", "--kill-once", str(marker),
                           "--machine-class", "testers")
    assert code == 0, err
    assert "stopped (test limit reached) after 10 tests" in out
    pids = _check_invariants(db, 10)
    request, killed = map(int, marker.read_text().split())
    assert pids[request] != killed  # measured again by a live worker process
    assert _query(db, "SELECT state FROM result WHERE desired_result_id = :dr", dr=request) == [("OK",)]


def test_a_broken_run_contract_on_a_dask_worker_stops_the_run(cluster, tmp_path):
    code, out, err = _tune(tmp_path / "broken.db", "--executor", "dask", "--scheduler",
                           cluster.scheduler_address, "--test-limit", "5", "--mode", "bad-return")
    assert code == 2
    # Dask's own log lines (a loaded machine can make the client reschedule a gather and warn) are not the
    # tuner's output: the tuner's is the one-line error
    ours = [line for line in err.strip().splitlines() if not _DASK_LOG_LINE.match(line)]
    assert ours == ["ToyTuner: error: ToyTuner.run() returned float, not a tunerlib.Result: "
                    "return Result(time=...) or Result(extra={...})"]


def test_an_unreachable_scheduler_is_one_line(tmp_path):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="2s")
    code, out, err = _tune(tmp_path / "none.db", "--executor", "dask", "--scheduler", address,
                           "--test-limit", "5", env=env)
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.startswith(f"ToyTuner: error: --scheduler {address}: cannot reach a Dask scheduler there")
    assert "dask scheduler" in line and "--scheduler tcp://HOST:8786" in line
    assert _query(tmp_path / "none.db", "SELECT count(*) FROM result") == [(0,)]
    assert _query(tmp_path / "none.db", "SELECT count(*) FROM tuning_run") == [(0,)]  # no FAILED run left


def test_the_local_executor_never_imports_dask(tmp_path):
    code = f"""
import runpy, sys
sys.argv = ["toy_tuner.py", "--database", {str(tmp_path / "local.db")!r}, "--parallelism", "2",
            "--test-limit", "4", "--quiet"]
try:
    runpy.run_path({str(TOY)!r}, run_name="__main__")
except SystemExit as exc:
    assert exc.code == 0, exc.code
assert not {{"dask", "distributed"}} & set(sys.modules), "Dask was imported"
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr


# ---- the worker side and the executor's bookkeeping, without a cluster ------------------------------------
def _job(version):
    return DaskJob(None, str(TOY), "ToyTuner", '{"sleep": 0.0}', version)


def _desired(dr_id):
    return DesiredResult(Configuration({"x": 3, "y": 1.5, "mode": "a", "order": ["i", "j", "k", "l"]}, "h"),
                         dr_id)


def test_a_dask_worker_with_another_script_version_refuses():
    reply = measure_on_worker(_job("not-the-run's"), _desired(1))
    assert reply.result is None and "differs from not-the-run's of the run" in reply.refused
    from tunerlib.executors.remote import load_interface
    version = load_interface(f"{TOY}:ToyTuner")().script_version()
    reply = measure_on_worker(_job(version), _desired(1))
    assert reply.refused is None and reply.result.state == "OK" and reply.worker.endswith(":dask")


class _Future:
    def __init__(self, key, status="pending", value=None, error=None):
        self.key, self.status, self._value, self._error = key, status, value, error

    def result(self, timeout=None):
        return self._value

    def exception(self):
        return self._error

    def done(self):
        return self.status != "pending"


class _Client:
    def __init__(self):
        self.submitted = []

    def submit(self, func, job, desired, key, pure):
        self.submitted.append(_Future(key))
        return self.submitted[-1]


def _executor():
    """A DaskExecutor of a toy run whose client is a stand-in (nothing is sent anywhere)."""
    from tunerlib.executors.remote import load_interface
    cls = load_interface(f"{TOY}:ToyTuner")
    opts = cls.Options(executor="dask", scheduler="tcp://x:1")
    store = SimpleNamespace(machine_id=lambda host, cls, cpus: 7, input_id=lambda *args: 9)
    run = SimpleNamespace(options=opts, db=store, pv_id=1, uuid="abcdef12-0000", interface=cls(opts))
    executor = DaskExecutor(run, interrupts=None)
    executor.client = _Client()
    executor._ended_tasks = SimpleNamespace(add=lambda future: None)
    return executor


def _end(executor, status, value=None, error=None):
    """End the newest task as the client reports it (``value``: what its fetch gave)."""
    future = executor.client.submitted[-1]
    future.status, future._value, future._error = status, value, error
    fetched = value if status == "finished" else (type(error), error, None) if error else error
    return executor._ended(future, fetched, fetched=True)


def test_a_lost_task_is_submitted_again_then_recorded_error():
    executor = _executor()
    executor.submit(_desired(4))
    for attempt in range(2, dask_executor.MAX_ATTEMPTS + 1):
        assert _end(executor, "cancelled") is None  # lost: submitted again under a new key
        assert executor.client.submitted[-1].key == f"tunerlib-abcdef12-4-{attempt}"
    done = _end(executor, "error", error=OSError("connection closed"))
    assert done.desired_id == 4 and done.record.state == "ERROR"
    assert "lost this measurement 4 times (last: OSError: connection closed)" in done.record.extra["error"]
    assert executor.in_flight() == 0 and executor.resubmitted == dask_executor.MAX_ATTEMPTS - 1


def test_killed_worker_is_error_and_only_the_newest_submission_counts():
    executor = _executor()
    executor.submit(_desired(5))
    first = executor.client.submitted[-1]
    assert _end(executor, "cancelled") is None
    first.status = "finished"  # an earlier submission ending late counts for nothing
    assert executor._ended(first, "late", fetched=True) is None
    reply = WorkerReply(Result(time=1.0), Input(), 0.5, "h", 2, "h:1:dask")
    done = _end(executor, "finished", value=reply)
    assert (done.desired_id, done.record.state, done.record.worker, done.record.machine_id) == (5, "OK", "h:1:dask", 7)
    assert executor._ended(executor.client.submitted[-1], reply, fetched=True) is None  # reported once only
    executor.submit(_desired(6))
    from distributed import KilledWorker
    killed = KilledWorker("tunerlib-abcdef12-6-1", SimpleNamespace(address="tcp://w:1"), 3)
    done = _end(executor, "error", error=killed)
    assert done.record.state == "ERROR" and "killed every Dask worker" in done.record.extra["error"]
    assert executor.in_flight() == 0


def test_a_task_that_ended_unreported_is_fetched_by_the_check():
    executor = _executor()
    executor.submit(_desired(8))
    future = executor.client.submitted[-1]
    reply = WorkerReply(Result(time=2.0), Input(), 0.5, "h", 2, "h:1:dask")
    future.status, future._value = "finished", reply
    assert executor._check_unreported() == []  # just ended: the client's own fetch gets time
    [done] = executor._check_unreported()
    assert (done.desired_id, done.record.state) == (8, "OK") and executor.in_flight() == 0
    assert executor._ended(future, reply, fetched=True) is None  # the late report counts for nothing


def test_closing_the_client_does_not_print_the_in_flight_futures_closed_comm_errors():
    """After a run stops with futures in flight, closing the client fails their tracking callbacks with
    CommClosedError, which Tornado logs as an error; the executor's filter drops exactly those records."""
    import logging
    import sys
    from distributed.comm.core import CommClosedError
    from tunerlib.executors.dask import _closed_comm_filter

    def record(exc):
        try:
            raise exc
        except Exception:
            return logging.LogRecord("tornado.application", logging.ERROR, __file__, 1, "Exception in callback",
                                     None, sys.exc_info())
    assert not _closed_comm_filter(record(CommClosedError("in <TCP (closed)>: Stream is closed")))
    assert _closed_comm_filter(record(RuntimeError("a real failure")))
    assert _closed_comm_filter(logging.LogRecord("tornado.application", logging.ERROR, __file__, 1, "x", None, None))
