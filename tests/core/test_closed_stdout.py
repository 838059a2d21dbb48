"""Entry points whose stdout reader has gone (``tuner.py --list-techniques | head``): they end quietly,
as SIGPIPE ends other commands, and keep what they recorded.  The reader is closed before the process
starts, so every write to stdout fails however fast or slow the machine is."""
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tunerlib.cli import quiet_when_stdout_closes

ROOT = Path(__file__).parents[2]
TOY = Path(__file__).parent / "scripts" / "toy_tuner.py"


def _with_closed_stdout(*args):
    """(exit status, stderr) of ``python ARGS`` whose stdout is a pipe nobody reads."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, *map(str, args)], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=300, cwd=ROOT)
    finally:
        os.close(write_end)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("args", [(ROOT / "examples" / "tsp" / "tsp_tuner.py", "--list-techniques"),
                                  ("-m", "tunerlib.cli", "techniques")], ids=["tuner-script", "tunerlib-command"])
def test_listing_into_a_closed_pipe_ends_quietly(args):
    code, err = _with_closed_stdout(*args)
    assert (code, err) == (128 + signal.SIGPIPE, "")


def test_a_run_whose_summary_cannot_be_printed_keeps_its_results(tmp_path):
    db = tmp_path / "p.db"
    code, err = _with_closed_stdout(TOY, "--test-limit", 5, "--seed", 1, "--database", db, "--quiet")
    assert (code, err) == (128 + signal.SIGPIPE, "")
    con = sqlite3.connect(db)
    assert con.execute("select state from tuning_run").fetchall() == [("COMPLETE",)]
    assert con.execute("select count(*) from result").fetchall() == [(5,)]


def test_a_broken_pipe_elsewhere_is_still_an_error():
    @quiet_when_stdout_closes
    def entry():
        raise BrokenPipeError("a worker's pipe")
    with pytest.raises(BrokenPipeError, match="a worker's pipe"):
        entry()
