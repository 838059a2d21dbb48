"""Fault injection into the results database of a real tuner process (tests/faults/scripts/storage_faults.py):

* the workers cannot open the database: the pool restarts them with pauses, then the run stops with one
  line, the tuner exits and the run's row says how it ended;
* another process holds the SQLite write lock longer than the busy timeout: no measurement is lost, and
  the wait is one line;
* the disk fills up: the run stops with one line and its row is not left RUNNING; when not even the row
  can be written, the line says so, and ``--resume`` continues the run once there is space again.

Outcomes only: the tests wait for states (results recorded, a line printed), never for a time window.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbrows import count_results as _count, rows as _query
from procs import processes_in_session, wait_until

SCRIPT = Path(__file__).parent / "scripts" / "storage_faults.py"
TOY = Path(__file__).parents[1] / "core" / "scripts" / "toy_tuner.py"
HOLD_LOCK = ("import sqlite3, sys\n"
             "con = sqlite3.connect(sys.argv[1], timeout=600, isolation_level=None)\n"
             "con.execute('BEGIN IMMEDIATE')\n"
             "print('held', flush=True)\n"
             "sys.stdin.readline()\n"
             "con.execute('ROLLBACK')\n")




def _options(db, parallelism, *more):
    return ["--database", str(db), "--parallelism", str(parallelism), "--quiet", *more]


def _start(args, err_path, env=None):
    with open(err_path, "w") as err:
        return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True, env=env)


def _finish(proc, err_path):
    out, _ = proc.communicate(timeout=300)
    assert wait_until(lambda: not processes_in_session(proc.pid), 30), processes_in_session(proc.pid)
    return out, Path(err_path).read_text()


@pytest.mark.parametrize("parallelism", [2, 3])
def test_workers_that_cannot_open_the_database_stop_the_run_with_one_line(tmp_path, parallelism):
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "t.db"
    proc = _start([str(SCRIPT), "unopenable", *_options(db, parallelism, "--test-limit", "40")],
                  tmp_path / "err")
    out, err = _finish(proc, tmp_path / "err")
    assert proc.returncode == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "measurement workers stopped" in err and "is not a directory" in err, err
    moved = tmp_path / "data.moved" / "t.db"  # where the tuner's own connection kept writing
    assert _query(moved, "select state from tuning_run") == [("FAILED",)]
    assert _query(moved, "select count(*) from desired_result where state in ('REQUESTED', 'RUNNING')") == [(0,)]


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_lock_held_past_the_busy_timeout_loses_no_measurement(tmp_path, parallelism):
    db = tmp_path / "t.db"
    env = dict(os.environ, TUNERLIB_BUSY_TIMEOUT="1")
    proc = _start([str(TOY), *_options(db, parallelism, "--test-limit", "24", "--sleep", "0.1", "--seed", "3")],
                  tmp_path / "err", env)
    assert wait_until(lambda: _count(db) >= 4 or proc.poll() is not None, 120)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        # held until the tuner has run into the lock: it says so (or, failing, prints a traceback or stops)
        assert wait_until(lambda: "locked" in (tmp_path / "err").read_text()
                          or "Traceback" in (tmp_path / "err").read_text() or proc.poll() is not None, 240)
    finally:
        holder.communicate("\n", timeout=60)
    out, err = _finish(proc, tmp_path / "err")
    assert proc.returncode == 0, err
    assert err.count("\n") == 1 and "is locked by another process" in err and "Traceback" not in err, err
    assert _query(db, "select state, count(*) from result group by state") == [("OK", 24)]
    assert _query(db, "select state from tuning_run") == [("COMPLETE",)]


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_full_disk_stops_the_run_with_one_line_and_an_honest_row(tmp_path, parallelism):
    db = tmp_path / "t.db"
    proc = _start([str(SCRIPT), "full:40", *_options(db, parallelism, "--test-limit", "5000")], tmp_path / "err")
    out, err = _finish(proc, tmp_path / "err")
    assert proc.returncode == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "database or disk is full" in err and "free space" in err, err
    recorded = _count(db)
    assert 0 < recorded < 5000
    assert _query(db, "select state from tuning_run") == [("ABORTED",)]
    assert _query(db, "select count(*) from desired_result where state in ('REQUESTED', 'RUNNING')") == [(0,)]
    assert _query(db, "select count(*) from desired_result where state = 'COMPLETE'") == [(recorded,)]


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_disk_too_full_for_the_run_row_says_so_and_resume_continues(tmp_path, parallelism):
    db, flag = tmp_path / "t.db", tmp_path / "disk-full"
    args = _options(db, parallelism, "--test-limit", "30", "--seed", "5", "--sleep", "0.02")
    proc = _start([str(SCRIPT), f"full-all:{flag}", *args], tmp_path / "err")
    assert wait_until(lambda: _count(db) >= 5 or proc.poll() is not None, 120)
    flag.touch()
    out, err = _finish(proc, tmp_path / "err")
    assert proc.returncode == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "database or disk is full" in err and "could not be written: its row still says RUNNING" in err, err
    assert _query(db, "select state from tuning_run") == [("RUNNING",)]
    recorded = _count(db)

    flag.unlink()
    resumed = subprocess.run([sys.executable, str(TOY), *args, "--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert _count(db) == 30 > recorded
    assert _query(db, "select count(*), count(distinct desired_result_id) from result") == [(30, 30)]
    assert _query(db, "select state from tuning_run") == [("COMPLETE",)]


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_a_worker_command_that_cannot_open_the_database_is_one_line(tmp_path, parallelism):
    (tmp_path / "file").write_text("not a folder\n")
    done = subprocess.run([sys.executable, "-m", "tunerlib.cli", "worker", "--database",
                           str(tmp_path / "file" / "t.db"), "--interface", f"{TOY}:ToyTuner",
                           "--parallelism", parallelism], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "is not a directory" in done.stderr, done.stderr


def test_a_lock_held_past_the_busy_timeout_costs_a_worker_command_nothing(tmp_path):
    """A `tunerlib worker` measuring for a --distributed run waits the lock out: one line, no result lost."""
    db = tmp_path / "t.db"
    env = dict(os.environ, TUNERLIB_BUSY_TIMEOUT="1")
    tuner = _start([str(TOY), *_options(db, 1, "--distributed", "--test-limit", "16", "--sleep", "0.1")],
                   tmp_path / "tuner.err", env)
    worker = _start(["-m", "tunerlib.cli", "worker", "--database", str(db), "--interface", f"{TOY}:ToyTuner",
                     "--lease", "30", "--quiet"], tmp_path / "worker.err", env)
    assert wait_until(lambda: _count(db) >= 4 or tuner.poll() is not None, 120)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert wait_until(lambda: "locked" in (tmp_path / "worker.err").read_text()
                          or "retrying" in (tmp_path / "worker.err").read_text() or worker.poll() is not None, 240)
    finally:
        holder.communicate("\n", timeout=60)
    _, tuner_err = _finish(tuner, tmp_path / "tuner.err")
    _, worker_err = _finish(worker, tmp_path / "worker.err")
    assert tuner.returncode == 0 and worker.returncode == 0, (tuner_err, worker_err)
    assert worker_err.count("\n") == 1 and "is locked by another process" in worker_err, worker_err
    assert tuner_err.count("\n") <= 1 and "Traceback" not in tuner_err, tuner_err
    assert _query(db, "select state, count(*) from result group by state") == [("OK", 16)]
    assert _query(db, "select count(distinct desired_result_id) from result") == [(16,)]
