"""Run-loop reliability through the real CLI: the right run resumed, time limits that stop measurements,
deadlines and signals that leave nothing behind, bad option values, runs in which nothing succeeds.

No test here depends on how fast the machine is: deadlines are short and the measurements they stop
would run for 100 s, so a test either sees the stop or hits its own generous subprocess timeout.
"""
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import zygote

from dbrows import rows as _rows
from procs import processes_in_session, wait_until

SCRIPTS = Path(__file__).parent / "scripts"
TOY, SLEEPER = SCRIPTS / "toy_tuner.py", SCRIPTS / "sleep_tuner.py"


def _run(script, *args, timeout=90, fresh=False):
    """Run a tuner script as a real process: a zygote child, or a new interpreter with ``fresh=True``."""
    return (subprocess.run if fresh else zygote.run)([sys.executable, str(script), *map(str, args)],
                                                     capture_output=True, text=True, timeout=timeout)



def _sequence(db):
    return [h for (h,) in _rows(db, "select c.hash from desired_result d join configuration c on "
                                    "c.id = d.configuration_id where d.state = 'COMPLETE' order by d.id")]


# ------------------------------------------------------------------------------------ 1. --resume
def test_failed_start_leaves_no_run_and_resume_continues_the_real_one(tmp_path):
    db = tmp_path / "r.db"
    assert _run(TOY, "--test-limit", 40, "--seed", 1, "--database", db, "--quiet").returncode == 0
    bad = _run(TOY, "--test-limit", 40, "--seed", 1, "--database", db, "--technique", "NoSuch")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "NoSuch" in bad.stderr
    assert _rows(db, "select count(*) from tuning_run") == [(1,)]
    [(uuid,)] = _rows(db, "select uuid from tuning_run")
    resumed = _run(TOY, "--test-limit", 60, "--resume", "--database", db, "--summary-json", tmp_path / "s.json")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming run {uuid} (40 tests so far, seed 1, state COMPLETE)" in resumed.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert (summary["run_uuid"], summary["tests"], summary["seed"]) == (uuid, 60, 1)
    assert summary["extra"]["history_replay"] == "exact"
    assert _rows(db, "select state from tuning_run") == [("COMPLETE",)]


def test_failed_resume_keeps_the_run_complete(tmp_path):
    db = tmp_path / "r.db"
    assert _run(TOY, "--test-limit", 20, "--seed", 1, "--database", db, "--quiet").returncode == 0
    for bad in (["--technique", "NoSuch"], ["--seed", "2"], ["--seed-configuration", tmp_path / "none.json"]):
        proc = _run(TOY, "--test-limit", 30, "--resume", "--database", db, *bad)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "pass --seed 1" in _run(TOY, "--resume", "--seed", 2, "--database", db).stderr
    assert _rows(db, "select state, end_date is not null from tuning_run") == [("COMPLETE", 1)]


def test_resume_by_uuid_and_its_errors(tmp_path):
    db = tmp_path / "r.db"
    for seed in (1, 2):
        assert _run(TOY, "--test-limit", 10, "--seed", seed, "--database", db, "--quiet").returncode == 0
    [(first,), (second,)] = _rows(db, "select uuid from tuning_run order by id")
    proc = _run(TOY, "--test-limit", 15, "--resume", first[:8], "--database", db, "--quiet",
                "--summary-json", tmp_path / "s.json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert (summary["run_uuid"], summary["seed"], summary["tests"]) == (first, 1, 15)
    assert _rows(db, "select count(*) from result r join tuning_run t on t.id = r.tuning_run_id "
                     f"where t.uuid = '{second}'") == [(10,)]
    missing = _run(TOY, "--resume", "ffffffff", "--database", db)
    assert missing.returncode == 2 and "no run with this UUID" in missing.stderr
    other = _run(SLEEPER, "--resume", first, "--database", db)
    assert other.returncode == 2 and "another program or search space" in other.stderr


def test_resume_after_the_script_was_edited_is_refused_unless_allowed(tmp_path):
    """A run's results come from one version of its tuner script: --resume with an edited script is a
    one-line error that changes nothing, unless --allow-version-change (then one line says so)."""
    db, script = tmp_path / "v.db", tmp_path / "toy_tuner.py"
    script.write_text(TOY.read_text())
    assert _run(script, "--test-limit", 10, "--seed", 1, "--database", db, "--quiet").returncode == 0
    [(uuid,)] = _rows(db, "select uuid from tuning_run")
    with open(script, "a") as fh:
        fh.write("\n# an edit: another version of the tuner script\n")
    refused = _run(script, "--test-limit", 15, "--resume", "--database", db, "--quiet")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert f"run {uuid} was measured by tuner script version" in refused.stderr
    assert "--allow-version-change" in refused.stderr
    assert _rows(db, "select state, end_date is not null from tuning_run") == [("COMPLETE", 1)]
    assert _rows(db, "select count(*) from result") == [(10,)]
    allowed = _run(script, "--test-limit", 15, "--resume", "--allow-version-change", "--database", db, "--quiet")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stderr.count("\n") == 1 and f"--allow-version-change: run {uuid} pools results" in allowed.stderr
    assert _rows(db, "select count(*) from result") == [(15,)]
    again = _run(script, "--test-limit", 20, "--resume", "--database", db, "--quiet")   # now of this version
    assert again.returncode == 0 and again.stderr == "", again.stderr


def test_interrupted_and_resumed_run_continues_like_an_uninterrupted_one(tmp_path):
    """Same seed: 30 tests, then --resume to 60, propose exactly what one run of 60 proposes (the
    default technique: BayesianOptimization at this budget, whose proposals take a while on a loaded
    machine, hence the long timeouts)."""
    assert _run(TOY, "--test-limit", 60, "--seed", 5, "--database", tmp_path / "a.db", "--quiet",
                fresh=True, timeout=600).returncode == 0
    assert _run(TOY, "--test-limit", 30, "--seed", 5, "--database", tmp_path / "b.db", "--quiet",
                timeout=600).returncode == 0
    assert _run(TOY, "--test-limit", 60, "--resume", "--database", tmp_path / "b.db", "--quiet",
                timeout=600).returncode == 0
    assert _sequence(tmp_path / "a.db") == _sequence(tmp_path / "b.db")
    assert len(_sequence(tmp_path / "a.db")) == 60


def test_tunerlib_runs_shows_a_killed_run(tmp_path):
    db = tmp_path / "k.db"
    proc = zygote.popen([sys.executable, str(TOY), "--database", str(db), "--child-sleep", "0.05",
                         "--test-limit", "500", "--quiet"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
    assert wait_until(lambda: db.exists() and _count(db) >= 3, 60)
    proc.kill()
    proc.wait()
    out = zygote.run([sys.executable, "-m", "tunerlib.cli", "runs", str(db)], capture_output=True,
                     text=True, timeout=60).stdout
    assert "  KILLED  " in out, out


def _count(db):
    try:
        return _rows(db, "select count(*) from result")[0][0]
    except sqlite3.OperationalError:
        return 0


# ------------------------------------------------------------------------------- 2. time limits
def test_time_limit_is_a_multiple_of_the_best_and_the_cap_stops_a_stuck_measurement(tmp_path):
    db = tmp_path / "t.db"
    proc = _run(SLEEPER, "--database", db, "--test-limit", 3, "--measurement-timeout", 2, "--quiet")
    assert proc.returncode == 0, proc.stderr
    rows = _rows(db, 'select c.data, d."limit", r.state, r.time, r.extra from desired_result d '
                     "join result r on r.desired_result_id = d.id join configuration c on "
                     "c.id = d.configuration_id order by d.id")
    by_kind = {json.loads(data)["kind"]: (limit, state, t, json.loads(extra))
               for data, limit, state, t, extra in rows}
    fast_time = by_kind["fast"][2]
    assert by_kind["fast"][1] == "OK"
    limit, state, _, extra = by_kind["slow"]
    assert state == "TIMEOUT" and limit == pytest.approx(2.0 * fast_time) and extra["limit"] == limit
    limit, state, _, extra = by_kind["stuck"]
    assert state == "TIMEOUT" and "--measurement-timeout" in extra["error"]


def test_limit_multiplier_option(tmp_path):
    db = tmp_path / "m.db"
    proc = _run(SLEEPER, "--database", db, "--test-limit", 2, "--limit-multiplier", 3, "--quiet")
    assert proc.returncode == 0, proc.stderr
    [(fast,)] = _rows(db, "select r.time from result r where r.state = 'OK'")
    [(slow_limit,)] = _rows(db, 'select d."limit" from desired_result d join result r on '
                                "r.desired_result_id = d.id where r.state = 'TIMEOUT'")
    assert slow_limit == pytest.approx(3.0 * fast)


# ----------------------------------------------------------------------- 3. deadline stops measurements
@pytest.mark.parametrize("parallelism", [1, 2])
def test_stop_after_stops_measurements_in_flight(tmp_path, parallelism):
    db = tmp_path / "d.db"
    proc = zygote.popen([sys.executable, str(TOY), "--database", str(db), "--child-sleep", "97.31",
                         "--test-limit", "4", "--stop-after", "4", "--parallelism", str(parallelism),
                         "--seed", "1", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True, start_new_session=True)
    out, err = proc.communicate(timeout=60)  # the measurements would take 97 s
    assert proc.returncode == 1 and "time limit reached" in out, err  # nothing succeeded: exit 1
    assert wait_until(lambda: not processes_in_session(proc.pid), 10), processes_in_session(proc.pid)
    [(state, uuid)] = _rows(db, "select state, uuid from tuning_run")
    assert state == "COMPLETE" and f"  continue it with --resume {uuid} --database {db}\n" in out
    states = dict(_rows(db, "select state, count(*) from desired_result group by state"))
    assert states == {"CANCELLED": parallelism}
    # the printed --resume measures the cancelled requests again (quickly this time), never twice
    again = _run(TOY, "--resume", uuid, "--database", db, "--test-limit", 4, "--quiet")
    assert again.returncode == 0, again.stderr
    assert dict(_rows(db, "select state, count(*) from desired_result group by state")) == {"COMPLETE": 4}
    assert _rows(db, "select count(*), count(distinct desired_result_id) from result") == [(4, 4)]


# ------------------------------------------------------------------------------------- 4. signals
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_with_workers_is_one_line_and_leaves_nothing_behind(tmp_path, signum, code):
    db = tmp_path / "i.db"
    proc = zygote.popen([sys.executable, str(TOY), "--database", str(db), "--child-sleep", "0.2",
                         "--parallelism", "3", "--test-limit", "500", "--seed", "2", "--quiet"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert wait_until(lambda: db.exists() and _count(db) >= 4, 60)
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)  # Ctrl-C reaches every process of the foreground group
    else:
        os.kill(proc.pid, signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"interrupted by {signal.Signals(signum).name}" in err and "--resume" in err
    assert wait_until(lambda: not processes_in_session(proc.pid), 10), processes_in_session(proc.pid)
    assert _rows(db, "select state from tuning_run") == [("ABORTED",)]
    assert _rows(db, "select count(*) from desired_result where state in ('REQUESTED', 'RUNNING')") == [(0,)]


# ---------------------------------------------------------------------------------- 5. bad values
@pytest.mark.parametrize("option, value", [("--test-limit", -5), ("--test-limit", 0), ("--stop-after", -1),
                                           ("--stop-after", "nan"), ("--parallelism", 0),
                                           ("--limit-multiplier", 0.5), ("--measurement-timeout", 0),
                                           ("--display-frequency", -1)])
def test_bad_option_values_are_one_line_errors_that_create_nothing(tmp_path, option, value):
    db = tmp_path / "bad.db"
    proc = _run(TOY, option, value, "--database", db)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and option in proc.stderr, proc.stderr
    assert not db.exists()


@pytest.mark.parametrize("args, needle", [(["--executor", "dask"], "--executor dask needs --scheduler ADDRESS"),
                                          (["--scheduler", "tcp://h:8786"], "add --executor dask"),
                                          (["--executor", "dask", "--scheduler", "tcp://h:8786",
                                            "--parallelism", "2"], "drop --distributed and --parallelism")])
def test_executor_options_that_cannot_work_are_one_line_errors_that_create_nothing(tmp_path, args, needle):
    db = tmp_path / "bad.db"
    proc = _run(TOY, *args, "--database", db)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and needle in proc.stderr, proc.stderr
    assert not db.exists()


# ------------------------------------------------------------------------------- 6. nothing succeeds
def test_run_in_which_every_measurement_raises(tmp_path):
    db = tmp_path / "e.db"
    proc = _run(TOY, "--database", db, "--test-limit", 6, "--mode", "raise-all")
    assert proc.returncode == 1
    assert "RuntimeError: simulated crash in run()" in proc.stdout and f"tunerlib errors {db}" in proc.stdout
    assert "no measurement succeeded (ERROR 6)" in proc.stderr
    errors = zygote.run([sys.executable, "-m", "tunerlib.cli", "errors", str(db)], capture_output=True,
                        text=True, timeout=60)
    assert errors.returncode == 0 and errors.stdout.count("Traceback (most recent call last)") == 6


def test_a_worker_that_dies_is_replaced_and_its_measurement_is_an_error(tmp_path):
    db = tmp_path / "w.db"
    proc = _run(TOY, "--database", db, "--test-limit", 24, "--parallelism", 2, "--faults", "die",
                "--technique", "PureRandom", "--seed", 3, "--quiet")
    assert proc.returncode == 0, proc.stderr
    died = [json.loads(extra)["error"] for (extra,) in _rows(db, "select extra from result where state='ERROR'")]
    assert died and all("killed by SIGSEGV" in text for text in died)
    assert _rows(db, "select count(*) from result") == [(24,)]
