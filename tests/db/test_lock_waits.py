"""A SQLite lock held past the busy timeout: ResultsDB waits it out (the result is stored), one line per
incident (:class:`tunerlib.db.waits.LockWaits`); ``TUNERLIB_BUSY_TIMEOUT`` sets the busy timeout."""
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kit import core_path
from tunerlib.db import DatabaseError, ResultRecord, ResultsDB
from tunerlib.db.waits import BUSY_TIMEOUT_VARIABLE, LockWaits, busy_timeout

TOY = Path(__file__).parents[1] / "core" / "scripts" / "toy_tuner.py"


def _run_with_one_request(db):
    pv = db.program_version_id("proj", "prog", "v1", '{"x":"int"}')
    run_id, _ = db.create_run(pv, None, {}, 1, None, "MinimizeTime()")
    db.request_configuration(run_id, pv, "0" * 64, {"x": 0}, "T", 0)
    return run_id


@pytest.mark.parametrize("path", ["sqlite3", "core"])
def test_a_result_is_stored_after_a_lock_held_past_the_busy_timeout(tmp_path, monkeypatch, path):
    monkeypatch.setenv(BUSY_TIMEOUT_VARIABLE, "0.05")
    db = ResultsDB(str(tmp_path / "t.db"))
    if path == "core":
        core_path(db)
    run_id = _run_with_one_request(db)
    claim = db.claim_next(run_id, "w")
    holder = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    said = []

    def say(text):  # the first failed try is reported; the holder lets go only then
        said.append(text)
        if len(said) == 1:
            holder.execute("ROLLBACK")
    db.lock_waits = LockWaits(say)
    result_id = db.complete(claim.dr_id, ResultRecord(state="OK", time=1.0))
    assert [row.id for row in db.run_results(run_id)] == [result_id]
    assert len(said) == 1 and "is locked by another process" in said[0]
    db.close()
    holder.close()


def test_a_lock_incident_is_one_line_however_many_wait():
    said = []
    waits = LockWaits(said.append)
    waits.waiting("a", "locked")
    waits.waiting("b", "locked")
    waits.waiting("a", "locked")
    before_end = time.monotonic()
    waits.done("a")
    waits.done("b")
    waits.waiting("c", "locked", since=before_end)  # a late report of the incident that just ended
    waits.done("c")
    assert said == ["locked"]
    waits.waiting("a", "locked again")  # a new incident
    assert said == ["locked", "locked again"]


def test_a_stop_between_tries_ends_the_wait():
    class Stop(Exception):
        pass

    def check():
        raise Stop()
    waits = LockWaits(lambda text: None, check)
    with pytest.raises(Stop):
        waits.waiting("a", "locked")


@pytest.mark.parametrize("value", ["abc", "0", "-1", "inf", "nan"])
def test_a_bad_busy_timeout_is_refused(monkeypatch, tmp_path, value):
    monkeypatch.setenv(BUSY_TIMEOUT_VARIABLE, value)
    with pytest.raises(DatabaseError, match=BUSY_TIMEOUT_VARIABLE):
        ResultsDB(str(tmp_path / "t.db"))
    assert not (tmp_path / "t.db").exists()


def test_the_busy_timeout_is_read_from_the_environment(monkeypatch):
    monkeypatch.delenv(BUSY_TIMEOUT_VARIABLE, raising=False)
    assert busy_timeout() == 30.0
    monkeypatch.setenv(BUSY_TIMEOUT_VARIABLE, "2.5")
    assert busy_timeout() == 2.5


def test_a_bad_busy_timeout_is_one_line_from_the_cli(tmp_path):
    done = subprocess.run([sys.executable, str(TOY), "--database", str(tmp_path / "t.db"), "--test-limit", "3"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, BUSY_TIMEOUT_VARIABLE: "soon"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert BUSY_TIMEOUT_VARIABLE in done.stderr and not (tmp_path / "t.db").exists()
