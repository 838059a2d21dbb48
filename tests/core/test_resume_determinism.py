"""Crash/resume against a real database file, and determinism across processes."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from pathlib import Path

import zygote

SCRIPT = Path(__file__).parent / "scripts" / "toy_tuner.py"


def _sequence(db):
    con = sqlite3.connect(db)
    return [row[0] for row in con.execute(
        "select c.hash from desired_result d join configuration c on c.id = d.configuration_id "
        "order by d.id")]


def test_same_seed_same_configurations_in_separate_processes(tmp_path, run_script):
    for name in ("a.db", "b.db"):
        proc = run_script("--test-limit", 80, "--seed", 11, "--database", tmp_path / name, "--quiet",
                          fresh=True)
        assert proc.returncode == 0, proc.stderr
    seq_a, seq_b = _sequence(tmp_path / "a.db"), _sequence(tmp_path / "b.db")
    assert len(seq_a) >= 80 and seq_a == seq_b
    proc = run_script("--test-limit", 80, "--seed", 12, "--database", tmp_path / "c.db", "--quiet")
    assert _sequence(tmp_path / "c.db") != seq_a


def test_kill_minus_9_then_resume_keeps_every_result(tmp_path):
    db, summ = tmp_path / "k.db", tmp_path / "s.json"
    args = [sys.executable, str(SCRIPT), "--database", str(db), "--test-limit", "60", "--seed", "4",
            "--parallelism", "2", "--sleep", "0.05", "--quiet"]
    proc = zygote.popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 60
    done_before = 0
    while time.time() < deadline:
        time.sleep(0.2)
        if db.exists():
            try:
                done_before = sqlite3.connect(db).execute("select count(*) from result").fetchone()[0]
            except sqlite3.OperationalError:
                continue
        if done_before >= 15:
            break
    assert done_before >= 15, "run did not make progress"
    os.kill(proc.pid, signal.SIGKILL)  # the main process only: workers must notice and stop
    proc.wait()
    time.sleep(1.0)  # let workers finish the measurement they hold, then exit
    con = sqlite3.connect(db)
    before = {row[0]: row[1:] for row in con.execute("select id, configuration_id, state, extra from result")}
    assert len(before) >= done_before
    con.close()
    resumed = zygote.run(args + ["--resume", "--summary-json", str(summ)], capture_output=True,
                         text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    con = sqlite3.connect(db)
    after = {row[0]: row[1:] for row in con.execute("select id, configuration_id, state, extra from result")}
    assert all(after[rid] == row for rid, row in before.items()), "a completed result changed or vanished"
    s = json.loads(summ.read_text())
    assert s["tests"] == 60 == len(after)
    assert con.execute("select count(*) from tuning_run").fetchone()[0] == 1
    assert con.execute("select state from tuning_run").fetchone()[0] == "COMPLETE"
    assert con.execute("select count(*) from desired_result where state='RUNNING'").fetchone()[0] == 0


def test_resume_without_earlier_run_is_a_one_line_error(tmp_path, run_script):
    proc = run_script("--resume", "--database", tmp_path / "none.db", "--test-limit", 5)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "drop --resume" in proc.stderr
