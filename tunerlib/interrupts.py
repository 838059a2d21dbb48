"""Signals, the run's deadline and the per-measurement cap, in the main thread of one process.

The run loop (and every measurement worker) installs one :class:`Interrupts`. A signal (SIGINT, SIGTERM)
or the deadline (``--stop-after``) never breaks the loop's own bookkeeping: outside a measurement it is
only noted, and the loop stops at its next :meth:`Interrupts.check`. Inside a measurement
(:meth:`Interrupts.measuring`) it raises :class:`RunInterrupted` at once, so the measurement is stopped
(``call_program`` kills its process group on the way out) and its request is cancelled, to be measured
again by ``--resume``. A measurement still running after ``--measurement-timeout`` seconds gets
:class:`MeasurementTimedOut` and is recorded TIMEOUT. A second signal while the first is being handled
raises at once, wherever the loop is.

Deadline and cap use ``SIGALRM`` (``setitimer``): a tuner script must not use it for its own purposes.
Code running in C without returning to the interpreter is interrupted when it returns.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from typing import Any, Dict, Optional, Sequence, Set

__all__ = ["Interrupts", "MeasurementTimedOut", "RunInterrupted", "die_with_parent", "kill_children",
           "register_child", "unregister_child"]

#: process groups of the commands ``call_program`` is running in this process
_CHILD_GROUPS: Set[int] = set()


def register_child(pgid: int) -> None:
    """Called by ``call_program`` when it started a command in process group ``pgid``."""
    _CHILD_GROUPS.add(pgid)


def unregister_child(pgid: int) -> None:
    """Called by ``call_program`` when that command has ended."""
    _CHILD_GROUPS.discard(pgid)


def kill_children() -> None:
    """SIGKILL every process group ``call_program`` is running (the measurement is being stopped)."""
    for pgid in list(_CHILD_GROUPS):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class RunInterrupted(BaseException):
    """The run must stop now: a signal (``signum``) or its deadline (``signum`` None)."""

    def __init__(self, signum: Optional[int]) -> None:
        super().__init__(signal_name(signum) if signum else "deadline")
        self.signum = signum


class MeasurementTimedOut(BaseException):
    """The measurement ran past ``--measurement-timeout``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"measurement stopped after {seconds:g} s (--measurement-timeout)")
        self.seconds = seconds


def signal_name(signum: Optional[int]) -> str:
    """``SIGINT`` for 2, ... (``signal N`` for an unknown number)."""
    if signum is None:
        return "signal None"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """Ask Linux to send ``signum`` to this process when its parent dies (no-op elsewhere).

    Called first thing in a measurement worker and in every child of ``call_program``, so that a run
    killed with SIGKILL leaves no measurement behind."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signum), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Interrupts:
    """Called by the run loop: :meth:`install` once, :meth:`check` each iteration, :meth:`measuring`
    around each measurement, :meth:`sleep` for idle waits, :meth:`uninstall` at the end."""

    def __init__(self, deadline: Optional[float] = None,
                 signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM), exit_at_once: bool = False) -> None:
        """``exit_at_once`` (measurement workers): a signal or the deadline during a measurement kills
        its commands and ends the process (``os._exit(0)``) instead of raising; the run loop cancels
        the measurement."""
        #: ``time.monotonic()`` value at which the run stops, or None
        self.deadline = deadline
        self.signals = tuple(signals)
        #: the first signal received (None: none yet)
        self.pending: Optional[int] = None
        self._measuring = False
        #: an alarm is set for the measurement's cap or the deadline (cleared when the measurement ends)
        self._armed = False
        self._cap: Optional[float] = None
        self._cap_at: Optional[float] = None
        self._saved: Dict[int, Any] = {}
        self.active = False
        self.exit_at_once = exit_at_once
        #: set when the cap stopped the current measurement (the driver records TIMEOUT)
        self.cap_hit = False

    # ---- installation -------------------------------------------------------------------------
    def install(self) -> "Interrupts":
        """Take over the signals (only in the main thread; elsewhere the run has no handlers)."""
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in (*self.signals, signal.SIGALRM):
            self._saved[signum] = signal.signal(signum, self._on_signal)
        self.active = True
        return self

    def uninstall(self) -> None:
        """Give the signals back (called once when the run has stopped)."""
        if not self.active:
            return
        signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        self.active = False

    def ignore_signals(self) -> None:
        """Called when the run starts to clean up: further SIGINT/SIGTERM no longer interrupt it."""
        if self.active:
            for signum in self.signals:
                signal.signal(signum, signal.SIG_IGN)

    # ---- queries --------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise RunInterrupted when a signal arrived or the deadline has passed."""
        if self.pending is not None:
            raise RunInterrupted(self.pending)
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise RunInterrupted(None)

    # ---- interruptible regions ---------------------------------------------------------------
    def measuring(self, cap: Optional[float] = None) -> "_Measuring":
        """The block (``with interrupts.measuring(cap):``) may be stopped at once by a signal, the
        deadline, or after ``cap`` seconds."""
        return _Measuring(self, cap)

    def _enter_measuring(self, cap: Optional[float]) -> None:
        self.check()
        self._cap, self._cap_at = cap, (None if cap is None else time.monotonic() + cap)
        self.cap_hit = False
        self._measuring = True
        self._arm()

    def _leave_measuring(self, raised: bool) -> None:
        self._measuring = False
        self._cap = self._cap_at = None
        if self._armed:  # no system call when no alarm was set (no cap, no deadline)
            self._armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
        if not raised:  # a stop that arrived while C code ran (its exception was swallowed) still stops the run
            self.check()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` unless a signal or the deadline comes first (then RunInterrupted)."""
        with self.measuring():
            time.sleep(seconds)

    def _arm(self) -> None:
        if not self.active:
            return
        ends = [t for t in (self.deadline, self._cap_at) if t is not None]
        if ends:
            self._armed = True
            signal.setitimer(signal.ITIMER_REAL, max(1e-4, min(ends) - time.monotonic()))

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if signum == signal.SIGALRM:
            self._on_alarm()
            return
        if self.pending is not None:  # the second signal: stop now, wherever the loop is
            raise RunInterrupted(signum)
        self.pending = signum
        if self._measuring:
            self._stop_measurement(RunInterrupted(signum))

    def _on_alarm(self) -> None:
        if not self._measuring:
            return
        now = time.monotonic()
        if self.deadline is not None and now >= self.deadline:
            self._stop_measurement(RunInterrupted(None))
        elif self._cap is not None and self._cap_at is not None and now >= self._cap_at:
            self.cap_hit = True
            kill_children()
            raise MeasurementTimedOut(self._cap)
        else:
            self._arm()  # woken early (clock granularity): wait for the rest

    def _stop_measurement(self, exc: RunInterrupted) -> None:
        kill_children()
        if self.exit_at_once:
            _reap_children()
            os._exit(0)
        raise exc


def _reap_children() -> None:
    """Wait for the killed commands (so that no zombie outlives a worker that exits at once)."""
    for pgid in list(_CHILD_GROUPS):
        try:
            os.waitpid(pgid, 0)
        except (ChildProcessError, OSError):
            pass


class _Measuring:
    """What :meth:`Interrupts.measuring` returns (a class rather than a generator: one is entered per
    measurement)."""

    __slots__ = ("interrupts", "cap")

    def __init__(self, interrupts: Interrupts, cap: Optional[float]) -> None:
        self.interrupts, self.cap = interrupts, cap

    def __enter__(self) -> None:
        self.interrupts._enter_measuring(self.cap)

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        self.interrupts._leave_measuring(kind is not None)
