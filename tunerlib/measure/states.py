"""The one rule that turns a measurement's failure into a :class:`~tunerlib.Result` state.

Every backend and every worker uses these constructors, so a failure means the same everywhere:

=====================================================  ==============  ==========================
what happened                                          state           ``extra``
=====================================================  ==============  ==========================
the backend rejects the configuration before it runs   ``INFEASIBLE``  ``error``, ``phase``
(build / compile error, invalid launch geometry)
the run passes its wall-clock limit                    ``TIMEOUT``     ``error`` (worker killed
                                                                       and restarted)
the process running it dies (signal or exit status)    ``ERROR``       ``error`` names the signal,
                                                                       ``crashed: True``
the output differs from the reference                  ``ERROR``       ``error`` starts with
                                                                       ``wrong output``
the measuring code raises                              ``ERROR``       ``error`` (type: message)
=====================================================  ==============  ==========================

A crash is ERROR, not INFEASIBLE: the configuration was accepted and ran; a crash is a fault of the
generated code or the runtime, and techniques must not learn it as a constraint of the space.
"""
from __future__ import annotations

import signal
from typing import Any, Optional

from ..result import Result


def death(exitcode: Optional[int]) -> str:
    """How a process ended, for messages: ``SIGSEGV`` for a signal, ``exit status 3`` otherwise."""
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit status {exitcode}"


def rejected(error: str, phase: str, **extra: Any) -> Result:
    """INFEASIBLE: the backend refused the configuration in ``phase`` (build, compile, launch)."""
    return Result(state="INFEASIBLE", extra=dict(extra, error=error, phase=phase))


def timed_out(error: str, time: Optional[float] = None, **extra: Any) -> Result:
    """TIMEOUT: the run passed its wall-clock limit (``time``: how long it ran, when known)."""
    return Result(state="TIMEOUT", time=time, extra=dict(extra, error=error))


def over_limit(seconds: float, limit: float, **extra: Any) -> Result:
    """TIMEOUT: the configuration is slower than the run's time limit (its warm run, or a check run
    past :func:`~tunerlib.measure.check_run_limit`, took ``seconds``); the timing function said
    :data:`~tunerlib.measure.OVER_LIMIT`."""
    return timed_out(f"{seconds:.3g} s, over the time limit of {limit:.3g} s", time=seconds, **extra)


def crashed(exitcode: Optional[int], what: str = "kernel", **extra: Any) -> Result:
    """ERROR: the process running ``what`` died; the message names the signal or exit status."""
    return Result(state="ERROR", extra=dict(extra, error=f"{what} crashed ({death(exitcode)})", crashed=True))


def wrong_output(detail: str, **extra: Any) -> Result:
    """ERROR: the output differs from the reference (``detail``: by how much)."""
    return Result(state="ERROR", extra=dict(extra, error=f"wrong output: {detail}"))


def failed(error: str, **extra: Any) -> Result:
    """ERROR: anything else that went wrong while measuring (``error``: one line)."""
    return Result(state="ERROR", extra=dict(extra, error=error))
