"""Run an external command with a time limit and an optional memory limit."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Sequence, Union

from .interrupts import die_with_parent, register_child, unregister_child
from .result import Result


@dataclass
class ProgramResult:
    """What :func:`call_program` returns."""

    time: float
    returncode: Optional[int]
    stdout: str
    stderr: str
    timeout: bool

    def __getitem__(self, key: str):  # OpenTuner scripts index the result like a dict
        return getattr(self, key)


class _NotGiven:
    def __repr__(self) -> str:
        return "NOT_GIVEN"


#: the default ``limit`` of :func:`call_program`: a call that passes none (not even None) is not the
#: measured command, so its wall time is no basis of the run's time limit (a compile step, say)
NOT_GIVEN: Any = _NotGiven()

#: while a measurement runs (:func:`command_clock`): the wall times (s) of the commands run under the limit
_LIMITED_WALL: Optional[List[float]] = None


class command_clock:  # noqa: N801 - used as a function: ``with command_clock() as walls``
    """Called around one measurement (``run()``): the list it yields gets the wall time, in seconds, of
    every command that ran to its end under the run's limit meanwhile (:func:`call_program` given a
    ``limit``, even None). The run's time limit is derived from them (:mod:`tunerlib.engine.limits`).
    A class rather than a generator: one is entered per measurement."""

    __slots__ = ("saved",)

    def __enter__(self) -> List[float]:
        global _LIMITED_WALL
        self.saved, _LIMITED_WALL = _LIMITED_WALL, []
        return _LIMITED_WALL

    def __exit__(self, *exc: Any) -> None:
        global _LIMITED_WALL
        _LIMITED_WALL = self.saved


def note_limited_command(seconds: float) -> None:
    """Called when a command run under the limit has ended within it, with its wall time."""
    if _LIMITED_WALL is not None:
        _LIMITED_WALL.append(seconds)


#: signals held back while a command is started: a stop then interrupts the wait, never the fork
_HELD = {signal.SIGINT, signal.SIGTERM, signal.SIGALRM}


def _child_setup(memory_limit: Optional[int], mask: set):
    """What the child runs before exec: the tuner's signal mask, die with the tuner (Linux), then the
    memory limit."""

    def apply() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        die_with_parent(signal.SIGKILL)
        if memory_limit is not None:
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    return apply


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def call_program(cmd: Union[str, Sequence[str]], limit: Optional[float] = NOT_GIVEN,
                 memory_limit: Optional[int] = None, cwd: Optional[str] = None,
                 stdin: Optional[str] = None) -> ProgramResult:
    """Run ``cmd`` in its own process group; kill the whole group after ``limit`` seconds.

    A call given ``limit`` (the one ``run()`` received, even None) runs the measured command: its wall
    time (``ProgramResult.time``, from start to exit) is recorded with the result, and the next
    requests' limit is derived from that of the best configuration (see :mod:`tunerlib.engine.limits`).

    ``cmd`` is an argument list, or a string run by the shell.  ``memory_limit`` is an
    address-space limit in bytes.  Output is decoded as UTF-8 (invalid bytes replaced).
    When the run stops while the command runs (its deadline, Ctrl-C, SIGTERM, the measurement
    cap), the whole process group is killed before the exception goes on; on Linux the command
    is also killed when the tuner process dies (SIGKILL included).
    """
    shell = isinstance(cmd, str)
    measured = limit is not NOT_GIVEN
    limit = limit if measured else None
    start = time.perf_counter()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        proc = subprocess.Popen(cmd, shell=shell, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_child_setup(memory_limit, mask))
        register_child(proc.pid)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    timed_out = False
    try:
        out, err = proc.communicate(stdin.encode() if stdin is not None else None, timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, err = proc.communicate()
    except BaseException:  # the run stops: leave nothing behind
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        unregister_child(proc.pid)
    elapsed = time.perf_counter() - start
    if measured and not timed_out:
        note_limited_command(elapsed)
    return ProgramResult(elapsed, None if timed_out else proc.returncode,
                         out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), timed_out)


@contextlib.contextmanager
def captured_stderr(sink: List[str]) -> Iterator[None]:
    """Send file descriptor 2 to a temporary file for the block and append its text (stripped,
    when not empty) to ``sink`` at the end.

    For libraries measured in-process that print to the C-level stderr (Halide's warnings, an
    OpenCL compiler's "N warnings generated."): ``sys.stderr`` redirection does not catch them.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode("utf-8", "replace").strip()
            if text:
                sink.append(text)


#: the key of ``Result.extra`` that records the wall time of the measured command (see
#: :mod:`tunerlib.engine.limits`, which derives the next request's limit from it)
COMMAND_SECONDS = "command_seconds"


def with_command_seconds(result: Result, walls: List[float]) -> Result:
    """``result`` with the longest of ``walls`` (the commands run under the limit while it was measured)
    recorded as :data:`COMMAND_SECONDS`; unchanged when none ran or the script recorded it itself.
    Called by the measurement driver after each ``run()``."""
    if not walls or COMMAND_SECONDS in result.extra:
        return result
    result.extra = {**result.extra, COMMAND_SECONDS: max(walls)}
    return result
