"""An isolated worker process that builds and runs one configuration at a time with a wall-clock limit.

A kernel may crash its process or never return; measured in the tuner's own process, either ends
the tuning run.  :class:`IsolatedWorker` keeps one worker process (``spawn``: a fresh interpreter,
no forked OpenMP or OpenCL state) that calls ``setup(payload)`` once and answers ``"ready"``; the
handshake is awaited up to ``startup_timeout_s``, so start-up (imports, inputs; seconds on a loaded
machine) is never charged to a measurement.  Each :meth:`IsolatedWorker.call` sends one request,
which the worker hands to the handler that ``setup`` returned, and waits ``limit_s`` seconds:

* an answer: returned as it is (usually a :class:`~tunerlib.Result`);
* the handler raises: ERROR naming the exception (the worker stays up);
* the worker dies: ERROR ``<what> crashed (SIGSEGV)`` (:func:`~tunerlib.measure.states.crashed`);
* no answer in time: the worker is killed, TIMEOUT;
* start-up fails: ERROR ``measurement worker died during start-up (...)`` or TIMEOUT.

After a death or a timeout the next call starts a fresh worker (:attr:`IsolatedWorker.restarts`).
``setup`` must be importable by name (a module-level function) and ``payload`` picklable.
"""
from __future__ import annotations

import multiprocessing
import threading
import time
from multiprocessing.connection import wait as wait_for
from typing import Any, Callable, Optional

from ..result import Result
from .states import crashed, death, failed, timed_out

#: what ``setup(payload)`` returns: the handler called with each request in the worker
Handler = Callable[[Any], Any]


def _serve(conn: Any, setup: Callable[[Any], Handler], start_delay_s: float) -> None:
    """The worker's loop: the payload once (answered "ready"), then requests until EOF."""
    if start_delay_s > 0:
        time.sleep(start_delay_s)
    try:
        payload = conn.recv()
    except EOFError:
        return
    try:
        handler = setup(payload)
    except Exception as exc:  # reported as a failed start-up
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send("ready")
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        try:
            reply = handler(request)
        except Exception as exc:   # this configuration's ERROR; the worker goes on
            reply = failed(f"measurement raised {type(exc).__name__}: {exc}")
        conn.send(reply)


def _send_quietly(conn: Any, msg: Any) -> None:
    """Send ``msg``; a worker that died or was killed meanwhile is noticed by the caller."""
    try:
        conn.send(msg)
    except (OSError, EOFError, ValueError):
        pass


class IsolatedWorker:
    """One worker process serving requests for one payload (see the module docstring).

    Construct it once per tuning run (nothing starts until the first :meth:`call`); call
    :meth:`close` at the end.
    """

    def __init__(self, setup: Callable[[Any], Handler], payload: Any, startup_timeout_s: float = 120.0,
                 what: str = "kernel", start_delay_s: float = 0.0) -> None:
        self.setup, self.payload, self.what = setup, payload, what
        self.startup_timeout_s, self.start_delay_s = startup_timeout_s, start_delay_s
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None
        #: workers started after the first (one per crash, timeout or failed start-up)
        self.restarts = 0

    @property
    def pid(self) -> Optional[int]:
        """The running worker's process id (None before the first call or after a stop)."""
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def _start(self) -> Optional[Result]:
        """Start a worker and wait for its "ready": None, or the ERROR/TIMEOUT of a failed start-up."""
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child, self.setup, self.start_delay_s), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        # the payload may exceed the pipe's buffer: sent from a thread, so a worker that never reads
        # it cannot block the tuner past the start-up limit (killing it ends the send)
        sender = threading.Thread(target=_send_quietly, args=(parent, self.payload), daemon=True)
        sender.start()
        reply, timed = self._await_ready(self.startup_timeout_s)
        if reply == "ready":
            sender.join()
            return None
        if timed:
            self._proc.kill()
        self._proc.join(5)
        code = self._proc.exitcode
        sender.join(5)
        self._stop()
        if timed:
            return timed_out(f"measurement worker start-up timed out after {self.startup_timeout_s:g} s; "
                             "worker killed")
        if isinstance(reply, tuple) and reply and reply[0] == "error":
            return failed(f"measurement worker start-up failed: {reply[1]}")
        return failed(f"measurement worker died during start-up ({death(code)})")

    def _await_ready(self, limit: float) -> "tuple[Any, bool]":
        """(the worker's first message or None, whether ``limit`` passed first)."""
        ready = wait_for([self._conn, self._proc.sentinel], limit)
        if self._conn in ready:
            try:
                return self._conn.recv(), False
            except (EOFError, OSError):
                return None, False          # the worker's end of the pipe closed: it is dying
        return None, not ready

    def call(self, request: Any, limit_s: float) -> Any:
        """Send ``request`` to the worker and return its answer, or the ERROR / TIMEOUT Result of a
        crash, a timeout or a failed start-up (see the module docstring).  ``limit_s`` counts from
        the moment the worker is ready.  Called once per measurement."""
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self.restarts += 1
            failure = self._start()
            if failure is not None:
                return failure
        try:
            self._conn.send(request)
            if self._conn.poll(limit_s):
                return self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            self._proc.join(5)
            code = self._proc.exitcode
            self._stop()
            return crashed(code, self.what)
        self._stop()
        return timed_out(f"no result within {limit_s:g} s; worker killed")

    def _stop(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def close(self) -> None:
        """Stop the worker (called when the tuning run is done; safe to call twice)."""
        self._stop()
        self._proc = None
