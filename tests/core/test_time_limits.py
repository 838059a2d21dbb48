"""The time limit of a request is compared with like: derived from the wall time of the command it is
enforced on (recorded as ``Result.extra["command_seconds"]``), not from the time the script reports.

The end-to-end test runs the common HPC pattern (kernel_timer_tuner.py: a C program that sets up for
200 ms, runs its kernel 3 times and prints its own kernel time): a limit derived from the reported kernel
time is below the set-up alone, so every configuration but the first would be TIMEOUT, whatever the load.
"""
import json
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import zygote
from dbrows import rows as _rows

from tunerlib import MinimizeAttribute, MinimizeTime, Result
from tunerlib.engine.limits import limit_basis, request_limit, timeout_notice
from tunerlib.process import COMMAND_SECONDS, call_program, command_clock

SCRIPTS = Path(__file__).parent / "scripts"
KERNEL, SLEEPER = SCRIPTS / "kernel_timer_tuner.py", SCRIPTS / "sleep_tuner.py"



@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_program_that_times_its_own_kernel_gets_limits_from_its_wall_time(tmp_path):
    db = tmp_path / "k.db"
    proc = zygote.run([sys.executable, str(KERNEL), "--database", str(db), "--test-limit", "8", "--seed", "1",
                       "--limit-multiplier", "10", "--quiet"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = _rows(db, "select state, time, extra from result order by id")
    walls = [json.loads(extra)[COMMAND_SECONDS] for state, _, extra in results if state == "OK"]
    assert walls and all(w >= 0.2 for w in walls)          # the set-up's sleep is in the wall time
    assert all(t < 0.2 for state, t, _ in results if state == "OK")   # the kernel time is reported
    limits = [row[0] for row in _rows(db, 'select "limit" from desired_result where "limit" is not null')]
    assert limits and all(any(lim == pytest.approx(10 * w, rel=1e-9) for w in walls) for lim in limits)
    timeouts = sum(state == "TIMEOUT" for state, _, _ in results)
    assert 3 * timeouts <= len(results) and "note:" not in proc.stdout, proc.stdout


def test_a_run_mostly_timeout_says_so_in_one_line_with_the_fix(tmp_path):
    db = tmp_path / "s.db"
    proc = zygote.run([sys.executable, str(SLEEPER), "--database", str(db), "--test-limit", "3",
                       "--measurement-timeout", "3", "--quiet"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stdout.splitlines() if "note:" in line]
    assert len(notes) == 1 and "2 of 3 results are TIMEOUT" in notes[0], proc.stdout
    assert "--limit-multiplier 2 x the best configuration's command wall time" in notes[0]


def test_only_commands_given_the_limit_are_the_basis(tmp_path):
    with command_clock() as walls:
        call_program(["true"])                              # a build step: no limit given
        assert walls == []
        call_program(["true"], limit=None)                  # the measured command, before any best
        call_program(["sleep", "0.05"], limit=60)
    assert len(walls) == 2 and max(walls) >= 0.05
    call_program(["true"], limit=60)                        # outside a measurement: nowhere to record
    assert len(walls) == 2


def test_the_basis_is_the_command_wall_time_else_the_reported_time():
    options = SimpleNamespace(measurement_timeout=None, limit_multiplier=3.0)
    timed = SimpleNamespace(result=Result(time=0.01, extra={COMMAND_SECONDS: 0.5}))
    reported = SimpleNamespace(result=Result(time=0.01))
    assert limit_basis(timed.result) == (0.5, "command wall time")
    assert request_limit(options, MinimizeTime(), timed) == pytest.approx(1.5)
    assert request_limit(options, MinimizeTime(), reported) == pytest.approx(0.03)
    assert request_limit(options, MinimizeAttribute("cost"), timed) is None
    options.measurement_timeout = 1.0
    assert request_limit(options, MinimizeTime(), timed) == 1.0
    assert request_limit(options, MinimizeTime(), None) == 1.0


@pytest.mark.parametrize("timeouts,shown", [(3, False), (4, True)])
def test_the_timeout_notice_needs_over_a_third(timeouts, shown):
    options = SimpleNamespace(measurement_timeout=None, limit_multiplier=2.0)
    best = SimpleNamespace(result=Result(time=0.01))
    text = timeout_notice(options, MinimizeTime(), best, {"OK": 9 - timeouts, "TIMEOUT": timeouts}, 9)
    assert (text is not None) == shown
    if shown:
        assert "reported time (0.01 s)" in text and "raise --limit-multiplier" in text
