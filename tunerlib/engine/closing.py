"""The last step of a run: record how it stopped, and say so in one line when the database fails there.

:meth:`TuningRun.finish` cancels the unfinished requests and writes the run's final state. When that
fails because the database does (the disk is full, the file became unwritable), the run stops with one
line that names the error and says whether the run's row records the stop: a row that could not be
written still says RUNNING, which ``tunerlib runs`` shows as KILLED once the process has exited, and
``--resume`` continues that run like one whose tuner was killed.
"""
from __future__ import annotations

import sys
from typing import Any, Optional

from ..db import DatabaseError
from ..interrupts import Interrupts

__all__ = ["finish_run"]


def finish_run(run: Any, reason: str, interrupts: Interrupts) -> None:
    """Called once by ``TuningRun.run`` when the run stops (``reason``): ``run.finish(reason)``, then
    the signals go back to their handlers. Raises a one-line DatabaseError when the database failed
    during finish (it names the error that stopped the run, if that was the database too)."""
    cause = sys.exc_info()[1]  # the error that is stopping the run, if any
    try:
        run.finish(reason)
    except DatabaseError as exc:
        raise DatabaseError(_explain(run, reason, exc, cause)) from exc
    finally:
        interrupts.uninstall()


def _explain(run: Any, reason: str, failure: DatabaseError, cause: Optional[BaseException]) -> str:
    """Write what can still be written of the stop; the line that says what happened."""
    state = run._final_state(reason)
    try:
        run.db.cancel_unfinished(run.run_id)
        run.db.set_run_state(run.run_id, state)
        recorded = f"run {run.uuid} is recorded {state}" + (" (--resume continues it)" if state == "ABORTED" else "")
    except DatabaseError:
        recorded = (f"the state of run {run.uuid} could not be written: its row still says RUNNING "
                    "(`tunerlib runs` shows it KILLED once this process has exited; --resume continues it)")
    first = str(cause) if isinstance(cause, DatabaseError) and str(cause) != str(failure) else None
    return "; ".join(text for text in (first, str(failure), recorded) if text)
