"""The last step of a run: record how it stopped, save the tuner's final configuration and re-timed best,
and say so in one line when the database fails there.

:func:`finish` cancels the unfinished requests and writes the run's final state. When that
fails because the database does (the disk is full, the file became unwritable), the run stops with one
line that names the error and says whether the run's row records the stop: a row that could not be
written still says RUNNING, which ``tunerlib runs`` shows as KILLED once the process has exited, and
``--resume`` continues that run like one whose tuner was killed.
"""
from __future__ import annotations

import logging
import sys
from typing import Any, Optional

from ..db import DatabaseError
from ..interrupts import Interrupts
from ..logs import tell
from .cross_session import upload_finished_run
from .callbacks import close_callbacks
from .final_config import FINAL_BEST, FINAL_FORM, MAX_CHARS, call_captured_returning, settle_final_best

log = logging.getLogger(__name__)

__all__ = ["finish", "finish_run", "final_state"]

#: stop reasons after which the run is COMPLETE
_COMPLETE = ("test limit reached", "time limit reached", "search space exhausted",
             "technique has nothing more to propose", "finished by caller")


def finish_run(run: Any, reason: str, interrupts: Interrupts) -> None:
    """Called once by ``TuningRun.run`` when the run stops (``reason``): :func:`finish`, then
    the signals go back to their handlers. Raises a one-line DatabaseError when the database failed
    during finish (it names the error that stopped the run, if that was the database too)."""
    cause = sys.exc_info()[1]  # the error that is stopping the run, if any
    try:
        finish(run, reason)
    except DatabaseError as exc:
        raise DatabaseError(_explain(run, reason, exc, cause)) from exc
    finally:
        interrupts.uninstall()


def _explain(run: Any, reason: str, failure: DatabaseError, cause: Optional[BaseException]) -> str:
    """Write what can still be written of the stop; the line that says what happened."""
    state = final_state(run, reason)
    try:
        run.db.cancel_unfinished(run.run_id)
        run.db.set_run_state(run.run_id, state)
        recorded = f"run {run.uuid} is recorded {state}" + (" (--resume continues it)" if state == "ABORTED" else "")
    except DatabaseError:
        recorded = (f"the state of run {run.uuid} could not be written: its row still says RUNNING "
                    "(`tunerlib runs` shows it KILLED once this process has exited; --resume continues it)")
    first = str(cause) if isinstance(cause, DatabaseError) and str(cause) != str(failure) else None
    return "; ".join(text for text in (first, str(failure), recorded) if text)


def finish(run: Any, reason: str) -> None:
    """Called once at the end: cancel what was not measured, record the run's state, save the best."""
    run.db.cancel_unfinished(run.run_id)
    run.db.set_run_state(run.run_id, final_state(run, reason))
    run.snapshot()
    upload_finished_run(run.options, run.db, run.run_id, run.say)
    close_callbacks(run.callbacks)
    if run.search.progress.best is not None:
        text, returned = call_captured_returning(run.interface.save_final_config, run.search.progress.best.config)
        if text.strip():
            run.db.save_run_artifact(run.run_id, FINAL_FORM, {"text": text[-MAX_CHARS:]})
        keep_final_best(run, returned)
    else:
        run.interface.finish_without_best()


def keep_final_best(run: Any, returned: Any) -> None:
    """What ``save_final_config`` returned: a :class:`RetimedBest` becomes the run's best everywhere
    (:func:`tunerlib.engine.final_config.settle_final_best`); anything else but None is a tuner-script mistake,
    reported on stderr and ignored (nothing recorded is lost)."""
    run.final_best, why = settle_final_best(returned, run.manipulator, run.objective, run.search.progress,
                                             lambda: run.db.run_results(run.run_id))
    if why is not None:
        tell(log, logging.WARNING, f"save_final_config of {type(run.interface).__name__} {why}; the "
             "summary reports the search's recorded best instead")
    if run.final_best is not None or run.resumed:   # a resumed run drops an older finish's re-timing
        run.db.save_run_artifact(run.run_id, FINAL_BEST, run.final_best)


def final_state(run: Any, reason: str) -> str:
    if reason in _COMPLETE:
        return "COMPLETE"
    if run.search.progress.tests == 0 and not run.resumed:
        return "FAILED"
    return "ABORTED"
