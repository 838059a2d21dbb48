"""Callbacks: what a run calls after each new result (like Optuna's ``callbacks=[...]``).

A callback is any callable ``callback(run, event)``: ``run`` is the :class:`~tunerlib.engine.run.TuningRun`
(its ``search.best``, ``db`` and ``run_id`` are there to read), ``event`` a :class:`ResultEvent`. Callbacks
are called in the process that drives the search, after the result is stored and fed to the technique,
once per result in result order, and never for the results a ``--resume`` replays. A callback that raises
stops the run like any other error. Pass them as ``TuningRun(interface, options, callbacks=[...])`` or
``TuningRunManager(..., callbacks=[...])``; the CSV log (``--results-log``), the technique-state
snapshots and the status line are callbacks too.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

__all__ = ["Callback", "ResultEvent", "ResultsLog", "TechniqueSnapshots"]


@dataclass(frozen=True)
class ResultEvent:
    """One new result of the run."""

    result_id: int
    configuration: Dict[str, Any]
    state: str                 # OK / TIMEOUT / ERROR / INFEASIBLE
    value: Optional[float]     # the objective's metric as the user sees it (None unless OK)
    best: Optional[float]      # the best value so far, in the same terms (None before the first OK)
    new_best: bool
    tests: int                 # results of the run so far, this one included
    elapsed: float             # seconds since this process started the run


Callback = Callable[[Any, ResultEvent], None]


class ResultsLog:
    """``--results-log PATH``: one CSV line per result (elapsed s, test, value, best)."""

    def __init__(self, path: str) -> None:
        new = not os.path.exists(path)
        self.fh = open(path, "a")
        if new:
            self.fh.write("elapsed_s,test,value,best\n")

    def __call__(self, run: Any, event: ResultEvent) -> None:
        value = "" if event.value is None else event.value
        best = "" if event.best is None else event.best
        self.fh.write(f"{event.elapsed:.4f},{event.tests},{value},{best}\n")

    def close(self) -> None:
        """Called when the run ends."""
        self.fh.close()


class TechniqueSnapshots:
    """Saves the technique's state in the results database every ``every`` results (and the run saves
    it once more when it ends), so that ``--resume`` can restore it where the history cannot be replayed."""

    def __init__(self, every: int = 25) -> None:
        self.every = every

    def __call__(self, run: Any, event: ResultEvent) -> None:
        if event.tests % self.every == 0:
            run.snapshot()


def close_callbacks(callbacks: list) -> None:
    """Called once when the run ends: close every callback that has a ``close()``."""
    for callback in callbacks:
        close: Optional[Callable[[], None]] = getattr(callback, "close", None)
        if callable(close):
            close()
