"""Callbacks: what a run calls after each new result (like Optuna's ``callbacks=[...]``).

A callback is any callable ``callback(run, event)``: ``run`` is the run's read-only :class:`RunView` (its
``best``, ``tests``, ``states``, ``outstanding``, ``run_id``, ``uuid`` and ``db`` are there to read),
``event`` a :class:`ResultEvent`. Callbacks
are called in the process that drives the search, after the result is stored and fed to the technique,
once per result in result order, and never for the results a ``--resume`` replays. A callback that raises
stops the run like any other error. Pass them as ``TuningRun(interface, options, callbacks=[...])`` or
``TuningRunManager(..., callbacks=[...])``; the CSV log (``--results-log``), the technique-state
snapshots and the status line are callbacks too.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional

__all__ = ["Callback", "Events", "ResultEvent", "ResultsLog", "RunView", "TechniqueSnapshots"]


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


class RunView:
    """What a callback sees of the run: its identity and the search's progress, read-only."""

    __slots__ = ("_progress", "run_id", "uuid", "db")

    def __init__(self, progress: Any, run_id: int, uuid: str, db: Any) -> None:
        self._progress = progress
        #: the run's id in its results database, its UUID, and the results database (to read)
        self.run_id, self.uuid, self.db = run_id, uuid, db

    @property
    def best(self) -> Any:
        """The search's best so far (``value``, ``config``, ``result_id``), or None before the first OK."""
        return self._progress.best

    @property
    def tests(self) -> int:
        """Results of the run so far."""
        return self._progress.tests

    @property
    def states(self) -> Mapping[str, int]:
        """Results per state so far (a copy)."""
        return dict(self._progress.states)

    @property
    def outstanding(self) -> int:
        """Requests written and not yet measured."""
        return self._progress.outstanding


class Events:
    """The run's event sink: the search driver calls it once per new result.  From :meth:`start` on it
    builds each :class:`ResultEvent` and calls every callback with the run's :class:`RunView`; before
    that (the history a ``--resume`` replays) it does nothing."""

    def __init__(self, objective: Any) -> None:
        self.objective, self.start_time = objective, 0.0
        self.view: Optional[RunView] = None
        self.callbacks: List[Callback] = []

    def start(self, view: RunView, callbacks: List[Callback], start_time: float) -> None:
        """Called once by the run before its loop: from now on call ``callbacks`` (the run's own list);
        events count elapsed seconds from ``start_time`` (``time.perf_counter``)."""
        self.view, self.callbacks, self.start_time = view, callbacks, start_time

    def __call__(self, row: Any, value: float, new_best: bool) -> None:
        view = self.view
        if view is None:
            return
        display = self.objective.display
        best = view.best
        event = ResultEvent(row.id, row.config_data, row.state, display(value) if row.state == "OK" else None,
                            None if best is None else display(best.value), new_best, view.tests,
                            time.perf_counter() - self.start_time)
        for callback in self.callbacks:
            callback(view, event)


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
    """Saves the technique's state in the results database every ``every`` results, at most one per
    ``seconds`` (on ``clock``), with ``save`` (the run's own saver; the run saves it once more when it
    ends), so that ``tunerlib report`` shows a running run's technique and ``--resume`` can restore it
    where the history cannot be replayed.  The time bound keeps a state of many kilobytes from being
    encoded and written every few milliseconds when measurements take microseconds."""

    def __init__(self, save: Callable[[], None], every: int = 25, seconds: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.save, self.every, self.seconds, self.clock = save, every, seconds, clock
        self.last: Optional[float] = None

    def __call__(self, run: Any, event: ResultEvent) -> None:
        if event.tests % self.every:
            return
        now = self.clock()
        if self.last is None or now - self.last >= self.seconds:
            self.last = now
            self.save()


def close_callbacks(callbacks: list) -> None:
    """Called once when the run ends: close every callback that has a ``close()``."""
    for callback in callbacks:
        close: Optional[Callable[[], None]] = getattr(callback, "close", None)
        if callable(close):
            close()
