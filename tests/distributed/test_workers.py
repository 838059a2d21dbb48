"""Distributed measurement with real processes: a ``--distributed`` toy tuner run and ``tunerlib worker``
processes sharing a SQLite file or a PostgreSQL database (tests/helpers/pg.py; skipped without it).

Invariants checked after each run: every request ends COMPLETE with exactly one result (no duplicate,
none lost), the run stops at exactly ``--test-limit`` results and is COMPLETE, and every result names
the machine (with its class) and the worker that measured it. Leases are a few seconds against
measurements of a fraction of one, and every wait is generous: a loaded machine slows the tests down
but does not make them fail.
"""
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import zygote
from sqlalchemy import text

from tunerlib.db.migrations import open_engine

from procs import wait_until

TOY = Path(__file__).parents[1] / "core" / "scripts" / "toy_tuner.py"
LEASE = "3"
WAIT = int(os.environ.get("TUNERLIB_TEST_WAIT", "300"))


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_url")
    return str(tmp_path / "shared.db")


def _query(url, sql, **params):
    engine, _ = open_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), params)]
    finally:
        engine.dispose()


def _worker(url, *extra, script=TOY, cls="ToyTuner"):
    args = [sys.executable, "-m", "tunerlib.cli", "worker", "--database", url, "--interface", f"{script}:{cls}",
            "--lease", LEASE, "--machine-class", "testers", *extra]
    return zygote.popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        start_new_session=True)


def _tuner(url, *extra):
    args = [sys.executable, str(TOY), "--database", url, "--distributed", "--quiet", *extra]
    return zygote.popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        start_new_session=True)


def _claimed_by(url, pid):
    """Ids of the requests a worker process holds (its id is host:pid:xxxx); [] before the tables exist."""
    try:
        rows = _query(url, "SELECT id, worker FROM desired_result WHERE state = 'RUNNING'")
    except Exception:  # noqa: BLE001  (not created yet)
        return []
    return [dr for dr, worker in rows if worker and worker.split(":")[-2] == str(pid)]


def _stopped_holding(url, pid):
    """Stop the worker (SIGSTOP) if it holds a claim then, else let it go on; True once stopped holding one."""
    os.killpg(pid, signal.SIGSTOP)
    if _claimed_by(url, pid):
        return True
    os.killpg(pid, signal.SIGCONT)
    return False


def _requests(url):
    try:
        return _query(url, "SELECT count(*) FROM desired_result")[0][0]
    except Exception:  # noqa: BLE001  (not created yet)
        return 0


def _finish(proc, timeout=WAIT):
    """(exit code, stdout, stderr) of ``proc``; exit code None when it had to be killed after ``timeout``."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
        return None, out, err
    return proc.returncode, out, err


def _stop_all(procs):
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


def _check_invariants(url, limit):
    """Every request COMPLETE with exactly one result; ``limit`` results; the run COMPLETE."""
    states = dict(_query(url, "SELECT state, count(*) FROM desired_result GROUP BY state"))
    assert states == {"COMPLETE": limit}
    per_request = _query(url, "SELECT desired_result_id, count(*) FROM result GROUP BY desired_result_id")
    assert len(per_request) == limit and all(count == 1 for _, count in per_request)
    assert _query(url, "SELECT count(*) FROM result")[0][0] == limit
    assert _query(url, "SELECT state FROM tuning_run") == [("COMPLETE",)]
    rows = _query(url, "SELECT r.worker, m.name, c.name FROM result r JOIN machine m ON r.machine_id = m.id "
                       "JOIN machine_class c ON m.machine_class_id = c.id")
    assert len(rows) == limit and all(w and (w.count(":") == 2 or w.startswith("worker-")) and c == "testers"
                                      for w, _, c in rows)
    return rows


def test_a_worker_killed_mid_measurement_loses_nothing(url, tmp_path):
    """4 workers (started before the run exists: they wait for it), one SIGKILLed while it measures:
    its claim is re-queued after the lease and measured by another worker.  Every worker's first
    measurement waits for the other three (--rendezvous), so all take part however slowly they start;
    the victim is stopped before its claim is read, so the claim cannot finish in between."""
    workers = [_worker(url) for _ in range(4)]
    tuner = None
    try:
        tuner = _tuner(url, "--test-limit", "24", "--seed", "3", "--sleep", "0.4", "--rendezvous", "4",
                       "--marker", str(tmp_path / "pids.txt"))
        victim = workers[0]
        assert wait_until(lambda: _stopped_holding(url, victim.pid), WAIT), "the victim never claimed a request"
        [lost] = _claimed_by(url, victim.pid)
        os.killpg(victim.pid, signal.SIGKILL)
        code, out, err = _finish(tuner)
        assert code == 0, err
        assert "stopped (test limit reached) after 24 tests" in out
        rows = _check_invariants(url, 24)
        [(by,)] = _query(url, "SELECT worker FROM result WHERE desired_result_id = :dr", dr=lost)
        assert by.split(":")[-2] != str(victim.pid)  # measured again by a survivor
        assert len({w for w, _, _ in rows}) >= 3  # the survivors shared the work
        for proc in workers[1:]:
            code, _, err = _finish(proc)
            assert code == 0, err  # they leave when the run is over
    finally:
        _stop_all(workers + ([tuner] if tuner else []))


def test_a_worker_with_another_script_version_is_refused(url, tmp_path):
    edited = tmp_path / "toy_tuner.py"
    shutil.copy(TOY, edited)
    with open(edited, "a") as fh:
        fh.write("\n# an edit: another version of the tuner script\n")
    tuner = _tuner(url, "--stop-after", "120", "--sleep", "0.05")
    try:
        assert wait_until(lambda: _requests(url) > 0, WAIT)
        code, out, err = _finish(_worker(url, script=edited))
        assert code == 2
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "tuner script version" in lines[0] and "differs" in lines[0], err
        assert _query(url, "SELECT count(*) FROM result")[0][0] == 0  # it measured nothing
        assert _query(url, "SELECT count(*) FROM measurement_worker")[0][0] == 0
    finally:
        tuner.send_signal(signal.SIGTERM)
        _finish(tuner)


def test_a_worker_cut_off_past_its_lease_loses_nothing_and_adds_no_duplicate(url):
    """Network loss long enough for the lease to expire (simulated by SIGSTOP): the claim goes to the
    other worker; when the first comes back (SIGCONT) its result for it is dropped, or it wins and the
    other's is; either way one result per request."""
    workers = [_worker(url) for _ in range(2)]
    tuner = None
    try:
        tuner = _tuner(url, "--test-limit", "10", "--seed", "5", "--sleep", "1.0")
        frozen = workers[0]
        assert wait_until(lambda: _claimed_by(url, frozen.pid), WAIT)
        [held] = _claimed_by(url, frozen.pid)
        os.killpg(frozen.pid, signal.SIGSTOP)
        requeued = wait_until(lambda: not _claimed_by(url, frozen.pid), WAIT)
        os.killpg(frozen.pid, signal.SIGCONT)
        assert requeued, "the frozen worker's claim was never re-queued"
        code, out, err = _finish(tuner)
        assert code == 0, err
        _check_invariants(url, 10)
        assert _query(url, "SELECT state FROM desired_result WHERE id = :dr", dr=held) == [("COMPLETE",)]
        for proc in workers:
            code, _, err = _finish(proc)
            assert code == 0, err
    finally:
        _stop_all(workers + ([tuner] if tuner else []))


def test_a_worker_whose_connections_are_closed_mid_claim_reconnects(postgres_server, postgres_url):
    """The server ends the worker's sessions while it measures: it reconnects, reports its result, and
    goes on measuring."""
    schema = postgres_url.rsplit("application_name=", 1)[1]
    worker_url = postgres_url.replace(f"application_name={schema}", f"application_name={schema}w")
    worker = _worker(worker_url)
    tuner = None
    try:
        tuner = _tuner(postgres_url, "--test-limit", "5", "--seed", "2", "--sleep", "1.0")
        assert wait_until(lambda: _claimed_by(postgres_url, worker.pid), WAIT)
        [held] = _claimed_by(postgres_url, worker.pid)
        assert postgres_server.end_sessions(f"{schema}w") >= 1
        code, out, err = _finish(tuner)
        assert code == 0, (err, _finish(worker, 5) if code is None else "")
        rows = _check_invariants(postgres_url, 5)
        assert {w.split(":")[-2] for w, _, _ in rows} == {str(worker.pid)}  # it measured everything
        [(by,)] = _query(postgres_url, "SELECT worker FROM result WHERE desired_result_id = :dr", dr=held)
        assert by.split(":")[-2] == str(worker.pid)
        code, _, err = _finish(worker)
        assert code == 0 and "retrying" in err, err
    finally:
        _stop_all([worker] + ([tuner] if tuner else []))


def test_local_and_remote_workers_share_a_run(tmp_path):
    """`tunerlib worker --parallelism 2` (forked workers) next to the run's own --parallelism 2 pool."""
    url = str(tmp_path / "mixed.db")
    tuner = _tuner(url, "--test-limit", "16", "--seed", "4", "--sleep", "0.3", "--parallelism", "2",
                   "--machine-class", "testers")
    remote = _worker(url, "--parallelism", "2")
    try:
        code, out, err = _finish(tuner)
        assert code == 0, err
        rows = _check_invariants(url, 16)
        local = {w for w, _, _ in rows if w.startswith("worker-")}
        assert local <= {"worker-0", "worker-1"}
        code, _, err = _finish(remote)
        assert code == 0, err
    finally:
        _stop_all([tuner, remote])


@pytest.mark.parametrize("spec, message", [("no_such_module_x:Tuner", "cannot import"),
                                           (f"{TOY}:NoSuchClass", "no MeasurementInterface subclass"),
                                           ("missing-colon", "expected module:Class")])
def test_a_bad_interface_is_one_line(tmp_path, spec, message):
    done = zygote.run([sys.executable, "-m", "tunerlib.cli", "worker", "--database", str(tmp_path / "x.db"),
                       "--interface", spec], capture_output=True, text=True, timeout=WAIT)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and message in lines[0], done.stderr
