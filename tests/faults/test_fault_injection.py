"""Fault injection: real tuner processes get SIGKILL, SIGINT or SIGTERM at random moments, then resume.

Each case starts the toy tuner script (serial or ``--parallelism 4``, a SQLite file; some cases add
measurements that hang, crash with SIGSEGV, run out of memory or raise), delivers a signal once a
seeded-random number of results is recorded, resumes with ``--resume`` and checks the database:

* every result recorded before the signal is still there, unchanged, and nothing is measured twice;
* every request ends in exactly one state (COMPLETE with exactly one result, or CANCELLED), none
  REQUESTED or RUNNING, and the run is COMPLETE;
* the resumed run ends at exactly ``--test-limit`` results, in one tuning run;
* no process of the tuner's session outlives it (workers, measured commands);
* serial runs continue exactly as an uninterrupted run with the same seed does (same requests in the
  same order), SIGKILL included: every technique here is deterministic given the seed.

``TUNERLIB_FAULT_CASES=N`` runs N cases (default 12: each signal x parallelism x fault-mix combination
once, at a seeded-random moment); ``TUNERLIB_FAULT_SEED`` picks another draw.
"""
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import zygote

from dbrows import count_results as _count, rows as _query
from procs import processes_in_session, wait_until

TOY = Path(__file__).parents[1] / "core" / "scripts" / "toy_tuner.py"
TEST_LIMIT = 24
SIGNALS = (signal.SIGKILL, signal.SIGINT, signal.SIGTERM)
FAULT_MIXES = ("", "hang,segv,memory,raise")


def _cases():
    rng = random.Random(int(os.environ.get("TUNERLIB_FAULT_SEED", "2026")))
    cases = []
    for i in range(int(os.environ.get("TUNERLIB_FAULT_CASES", "12"))):
        cases.append(dict(signum=SIGNALS[i % 3], parallelism=(1, 4)[(i // 3) % 2],
                          faults=FAULT_MIXES[(i // 6) % 2], after=rng.randint(1, TEST_LIMIT - 4),
                          seed=rng.randrange(4), extra_delay=rng.uniform(0.0, 0.05)))
    return cases


def _case_id(case):
    mix = "faults" if case["faults"] else "plain"
    return (f"{signal.Signals(case['signum']).name}-p{case['parallelism']}-{mix}-after{case['after']}"
            f"-seed{case['seed']}")


CASES = _cases()


def _args(db, case):
    args = [sys.executable, str(TOY), "--database", str(db), "--test-limit", str(TEST_LIMIT),
            "--seed", str(case["seed"]), "--parallelism", str(case["parallelism"]),
            "--child-sleep", str(0.03 * case["parallelism"]),
            "--hang-limit", "0.5", "--measurement-timeout", "60", "--quiet"]   # a cap no healthy one meets
    return args + (["--faults", case["faults"]] if case["faults"] else [])




def _sequence(db):
    return [row for row in _query(db, "select c.hash, r.state from desired_result d join configuration c "
                                      "on c.id = d.configuration_id join result r on r.id = d.result_id "
                                      "order by d.id")]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The request sequence of an uninterrupted serial run, per (seed, faults); seeds come from a small
    set so that the cases share these reference runs."""
    cache = {}

    def get(case):
        key = (case["seed"], case["faults"])
        if key not in cache:
            db = tmp_path_factory.mktemp("reference") / "ref.db"
            proc = subprocess.run(_args(db, dict(case, parallelism=1)), capture_output=True, text=True,
                                  timeout=120)
            assert proc.returncode in (0, 1), proc.stderr
            cache[key] = _sequence(db)
        return cache[key]
    return get


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_signal_then_resume_keeps_every_invariant(tmp_path, case, uninterrupted):
    db = tmp_path / "f.db"
    proc = zygote.popen(_args(db, case), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        start_new_session=True)
    reached = wait_until(lambda: _count(db) >= case["after"] or proc.poll() is not None, 120)
    assert reached, "the run made no progress"
    wait_until(lambda: False, case["extra_delay"])
    if proc.poll() is None:
        proc.send_signal(case["signum"])  # the main process only: it must stop its workers itself
    out, err = proc.communicate(timeout=120)
    if case["signum"] != signal.SIGKILL and proc.returncode == 128 + case["signum"]:
        assert err.count("\n") == 1 and "Traceback" not in err, err
    assert wait_until(lambda: not processes_in_session(proc.pid), 15), processes_in_session(proc.pid)
    before = {row[0]: row[1:] for row in _query(db, "select id, desired_result_id, configuration_id, state, "
                                                    "time, extra from result")}
    print(f"FAULTCASE {_case_id(case)} rc={proc.returncode} results_before={len(before)}")

    resumed = zygote.run(_args(db, case) + ["--resume", "--summary-json", str(tmp_path / "s.json")],
                         capture_output=True, text=True, timeout=180, start_new_session=True)
    assert resumed.returncode in (0, 1), resumed.stderr  # 1: no configuration succeeded
    _check_database(db, before)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["tests"] == TEST_LIMIT
    if case["parallelism"] == 1:
        assert _sequence(db) == uninterrupted(case)
        assert summary["extra"]["history_replay"] == "exact"


def _check_database(db, before):
    after = {row[0]: row[1:] for row in _query(db, "select id, desired_result_id, configuration_id, state, "
                                                   "time, extra from result")}
    assert all(after.get(rid) == row for rid, row in before.items()), "a completed result changed or vanished"
    assert len(after) == TEST_LIMIT
    assert _query(db, "select count(*), count(distinct configuration_id), count(distinct desired_result_id) "
                      "from result") == [(TEST_LIMIT, TEST_LIMIT, TEST_LIMIT)]
    assert _query(db, "select count(*), min(state) from tuning_run") == [(1, "COMPLETE")]
    states = dict(_query(db, "select state, count(*) from desired_result group by state"))
    assert set(states) <= {"COMPLETE", "CANCELLED"} and states["COMPLETE"] == TEST_LIMIT, states
    assert _query(db, "select count(*) from desired_result d left join result r on r.id = d.result_id "
                      "where d.state = 'COMPLETE' and (r.id is null or r.desired_result_id != d.id)") == [(0,)]
    assert _query(db, "select count(*) from desired_result where state != 'COMPLETE' and result_id is not null") \
        == [(0,)]


#: the request from which the configuration that kills its measuring process is chosen (seeded draw)
KILL_FROM = random.Random(int(os.environ.get("TUNERLIB_FAULT_SEED", "2026")) + 1).randint(2, TEST_LIMIT - 4)


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_configuration_that_kills_its_measuring_process_is_an_error_and_blocks_no_resume(tmp_path, parallelism):
    """OOM-style: run() SIGKILLs its own process for one configuration, each time it is measured. Serial, the
    tuner dies; one --resume completes the run with that configuration ERROR (measured again in a separate
    process, which dies too). With worker processes the run completes at once, the configuration ERROR."""
    db, marker = tmp_path / "o.db", tmp_path / "killer"
    case = dict(seed=1, parallelism=parallelism, faults="")
    args = _args(db, case) + ["--kill-config", str(marker), "--kill-from", str(KILL_FROM)]
    first = zygote.run(args, capture_output=True, text=True, timeout=120, start_new_session=True)
    assert first.returncode == (-signal.SIGKILL if parallelism == 1 else 0), first.stderr
    before = {row[0]: row[1:] for row in _query(db, "select id, desired_result_id, configuration_id, state, "
                                                    "time, extra from result")}
    if parallelism == 1:
        assert len(before) < TEST_LIMIT
        resumed = zygote.run(args + ["--resume"], capture_output=True, text=True, timeout=180,
                             start_new_session=True)
        assert resumed.returncode == 0, resumed.stderr
    _check_database(db, before)
    killer = marker.read_text()
    rows = _query(db, f"select r.state, r.extra from result r join configuration c on c.id = r.configuration_id "
                      f"where c.hash = '{killer}'")
    assert len(rows) == 1 and rows[0][0] == "ERROR", rows
    error = json.loads(rows[0][1])["error"]
    if parallelism == 1:
        assert error.startswith("the tuner process died while measuring this configuration") and \
            "killed by SIGKILL" in error and "--seed-configuration" in error, error
    else:
        assert "was killed by SIGKILL while measuring this configuration" in error, error
    assert _query(db, "select state, count(*) from result group by state") == [("ERROR", 1), ("OK", TEST_LIMIT - 1)]


def test_a_serial_tuner_killed_once_mid_measurement_continues_exactly(tmp_path, uninterrupted):
    """SIGKILL from outside during a serial measurement (the script kills itself once): --resume measures
    that request again, in a separate process, and the run is the uninterrupted one (same requests, same
    states, in the same order)."""
    db, marker = tmp_path / "k.db", tmp_path / "once"
    case = dict(seed=2, parallelism=1, faults="")
    first = zygote.run(_args(db, case) + ["--kill-once", str(marker)], capture_output=True, text=True,
                       timeout=120, start_new_session=True)
    assert first.returncode == -signal.SIGKILL, first.stderr
    killed = int(marker.read_text().split()[0])
    assert _query(db, f"select state from desired_result where id = {killed}") == [("RUNNING",)]
    resumed = zygote.run(_args(db, case) + ["--resume", "--summary-json", str(tmp_path / "s.json")],
                         capture_output=True, text=True, timeout=180, start_new_session=True)
    assert resumed.returncode == 0, resumed.stderr
    assert _query(db, f"select r.state from desired_result d join result r on r.id = d.result_id "
                      f"where d.id = {killed}") == [("OK",)]
    assert _sequence(db) == uninterrupted(case)
    assert json.loads((tmp_path / "s.json").read_text())["extra"]["history_replay"] == "exact"


def test_the_deadline_during_a_separate_remeasurement_stops_it_and_leaves_nothing(tmp_path):
    """--stop-after while the orphaned request is measured again in its separate process (which sleeps
    100 s): the run stops at the deadline, the process is gone and the request is CANCELLED."""
    db, marker = tmp_path / "d.db", tmp_path / "killer"
    base = [sys.executable, str(TOY), "--database", str(db), "--test-limit", "6", "--seed", "1", "--quiet",
            "--kill-config", str(marker), "--kill-from", "3"]
    first = zygote.run(base, capture_output=True, text=True, timeout=120, start_new_session=True)
    assert first.returncode == -signal.SIGKILL, first.stderr
    (killed,) = [row[0] for row in _query(db, "select id from desired_result where state = 'RUNNING'")]
    proc = zygote.popen(base + ["--resume", "--sleep", "100", "--stop-after", "1"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert wait_until(lambda: not processes_in_session(proc.pid), 15), processes_in_session(proc.pid)
    assert _query(db, f"select state, result_id from desired_result where id = {killed}") == [("CANCELLED", None)]


KILL_IN = Path(__file__).parent / "scripts" / "kill_in_transaction.py"
#: (requests by state, results) right after the kill inside the n-th call of each transaction, n = KILLED_AT
KILLED_AT = 7
AFTER_THE_KILL = {("request_and_claim", "before"): ({"COMPLETE": 6}, 6),
                  ("request_and_claim", "after"): ({"COMPLETE": 6, "RUNNING": 1}, 6),
                  ("complete", "before"): ({"COMPLETE": 6, "RUNNING": 1}, 6),
                  ("complete", "after"): ({"COMPLETE": 7}, 7)}


@pytest.mark.parametrize("method,when", sorted(AFTER_THE_KILL), ids=[f"{m}-{w}" for m, w in sorted(AFTER_THE_KILL)])
def test_a_serial_tuner_killed_inside_a_write_transaction_continues_exactly(tmp_path, uninterrupted, method, when):
    """SIGKILL inside each write transaction of the serial loop (the request written already claimed, the
    result stored), before and after its commit: what was committed is all there, what was not is absent,
    and --resume continues as the uninterrupted run (a request left RUNNING is measured again)."""
    db = tmp_path / "t.db"
    case = dict(seed=3, parallelism=1, faults="")
    args = _args(db, case)
    first = zygote.run([args[0], str(KILL_IN), f"{method}:{when}:{KILLED_AT}", *args[2:]], capture_output=True,
                       text=True, timeout=120, start_new_session=True)
    assert first.returncode == -signal.SIGKILL, first.stderr
    states = dict(_query(db, "select state, count(*) from desired_result group by state"))
    assert (states, _count(db)) == AFTER_THE_KILL[(method, when)]
    before = {row[0]: row[1:] for row in _query(db, "select id, desired_result_id, configuration_id, state, "
                                                    "time, extra from result")}
    resumed = zygote.run(args + ["--resume", "--summary-json", str(tmp_path / "s.json")], capture_output=True,
                         text=True, timeout=180, start_new_session=True)
    assert resumed.returncode == 0, resumed.stderr
    _check_database(db, before)
    assert _sequence(db) == uninterrupted(case)
    assert json.loads((tmp_path / "s.json").read_text())["extra"]["history_replay"] == "exact"
