"""The two regions entered around every measurement: ``Interrupts.measuring`` (a stop ends the block, and
one that arrived while C code swallowed it stops the run when the block ends) and ``command_clock``
(the wall times of the commands run under the limit, per measurement)."""
import signal

import pytest

from tunerlib.interrupts import Interrupts, RunInterrupted
from tunerlib.process import command_clock, note_limited_command


def _idle(interrupts):
    return not interrupts._measuring and interrupts._cap is None and interrupts._cap_at is None


def test_a_stop_swallowed_inside_a_measurement_stops_the_run_when_it_ends():
    interrupts = Interrupts()
    with pytest.raises(RunInterrupted) as raised:
        with interrupts.measuring(5.0):
            assert interrupts._measuring and interrupts._cap == 5.0 and interrupts._cap_at is not None
            interrupts.pending = signal.SIGINT  # as the handler leaves it when C code swallowed its exception
    assert raised.value.signum == signal.SIGINT and _idle(interrupts)


def test_an_error_inside_a_measurement_is_the_one_raised_and_the_region_is_left():
    interrupts = Interrupts()
    with pytest.raises(ValueError, match="broken"):
        with interrupts.measuring(2.0):
            interrupts.pending = signal.SIGTERM
            raise ValueError("broken")
    assert _idle(interrupts)


def test_a_stop_before_a_measurement_keeps_it_from_starting():
    interrupts = Interrupts()
    interrupts.pending = signal.SIGTERM
    entered = []
    with pytest.raises(RunInterrupted):
        with interrupts.measuring():
            entered.append(True)
    assert not entered and _idle(interrupts)


def test_a_quiet_measurement_leaves_no_trace():
    interrupts = Interrupts()
    with interrupts.measuring() as region:
        assert region is None and interrupts._measuring and interrupts._cap is None
    assert _idle(interrupts) and not interrupts.cap_hit


def test_command_clock_counts_the_commands_of_its_own_measurement():
    note_limited_command(9.0)  # outside any measurement: kept nowhere
    with command_clock() as outer:
        note_limited_command(1.0)
        with command_clock() as inner:
            note_limited_command(2.0)
        note_limited_command(3.0)
    note_limited_command(4.0)
    assert outer == [1.0, 3.0] and inner == [2.0]
    with pytest.raises(KeyError):
        with command_clock() as walls:
            raise KeyError("x")
    note_limited_command(5.0)
    assert walls == []
