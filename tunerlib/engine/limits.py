"""The time limit of a request, compared with like: derived from the time the limit is enforced on.

``call_program(cmd, limit=limit)`` kills the command when its wall time (start to exit: exec, input
set-up, every repetition) passes ``limit``. Many scripts report less than that as ``Result.time`` (a
kernel timed by the program's own timer). So each measurement records the wall time of its longest
command run under the limit as ``Result.extra["command_seconds"]`` (:data:`COMMAND_SECONDS`; a script
that runs its command otherwise may set it itself), and the limit of a new request is
``--limit-multiplier`` x that of the best configuration. Only when the best configuration ran no command
under the limit is the limit derived from its reported time: the script then judges the limit itself on
what it reports (``tunerlib.measure.time_after_check`` on a kernel's own runs, or a whole measurement it
times). ``--measurement-timeout`` caps every limit.

:func:`timeout_notice` is the summary's line for a run in which over a third of the results are TIMEOUT.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from ..objectives import MinimizeTime, Objective
from ..process import COMMAND_SECONDS
from ..result import Result

__all__ = ["limit_basis", "request_limit", "timeout_notice"]

def limit_basis(result: Result) -> Tuple[Optional[float], str]:
    """(seconds, what they are) the limit is derived from for a configuration measured as ``result``:
    its command's wall time when recorded, else its reported time (None when neither is positive)."""
    wall = result.extra.get(COMMAND_SECONDS) if isinstance(result.extra, dict) else None
    if isinstance(wall, (int, float)) and not isinstance(wall, bool) and wall > 0:
        return float(wall), "command wall time"
    reported = result.time
    return (reported if reported is not None and reported > 0 else None), "reported time"


def request_limit(options: Any, objective: Objective, best: Any) -> Optional[float]:
    """The time limit of a new request (called for each one): ``--limit-multiplier`` x the best
    configuration's :func:`limit_basis` (time objectives), capped by ``--measurement-timeout``; None when
    neither applies. ``best`` is the search's best (with ``.result``) or None."""
    limits = [options.measurement_timeout]
    if isinstance(objective, MinimizeTime) and best is not None:
        basis, _ = limit_basis(best.result)
        if basis is not None:
            limits.append(options.limit_multiplier * basis)
    found = [v for v in limits if v is not None]
    return min(found) if found else None


def timeout_notice(options: Any, objective: Objective, best: Any, states: Dict[str, int],
                   tests: int) -> Optional[str]:
    """One line with the fix when over a third of the run's ``tests`` results are TIMEOUT, else None
    (called when the summary is made)."""
    timeouts = states.get("TIMEOUT", 0)
    if tests <= 0 or 3 * timeouts <= tests:
        return None
    head = f"{timeouts} of {tests} results are TIMEOUT"
    basis, what = limit_basis(best.result) if best is not None else (None, "")
    if isinstance(objective, MinimizeTime) and basis is not None:
        return (f"{head}: each limit is --limit-multiplier {options.limit_multiplier:g} x the best "
                f"configuration's {what} ({basis:.3g} s); raise --limit-multiplier if these configurations "
                f"are not that slow, and pass `limit` to call_program only for the measured command")
    cap = options.measurement_timeout
    if cap is not None:
        return f"{head}: --measurement-timeout {cap:g} stopped them; raise it if these configurations are not that slow"
    return f"{head}: run() returned them (the script's own limits); check how it decides TIMEOUT"
