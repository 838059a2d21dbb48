"""Replaying a tuning run into performance snapshots (thesis §5.3) and the two search-affinity metrics.

A run is replayed in result order. Each result is credited to the technique that requested it (the
first path segment below a bandit root, see :func:`technique_of`); a result is a *new best* when it is
OK and better than every earlier OK result of the run (as the search driver decides live). Its
*improvement* is the relative gain over the previous best, ``(previous - new) / |previous|`` capped at 1
(the first OK result gains nothing). *Requests* count the desired results a technique had made by
then, measured or not.

Snapshots are taken when the run has collected 10, 20, 50, 100, 200, 500, ... results and at the end.

Search affinity (thesis §6.1 and §8.2):

* ``new-bests``: new bests / requests (the thesis' metric);
* ``improvement``: summed relative improvement / requests (credit in proportion to how much better
  each new best was; the thesis' proposed fix for its metric ignoring the quality of new bests).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from ..techniques.recommendation import relative_gain

#: the affinities measured from a run's own results (the store also ranks by run-rank: every metric is
#: :data:`tunerlib.techniques.AFFINITY_METRICS`)
MEASURED_AFFINITIES = ("new-bests", "improvement")


@dataclass(frozen=True)
class Event:
    """One collected result of a run, in collection order."""

    technique: Optional[str]   #: who requested it (None: seed configurations, the ask/tell caller)
    seconds: float             #: seconds into the run when it was collected
    value: float               #: oriented objective value (lower is better); inf when not OK
    request_index: int         #: position of its desired result in request order (0-based)
    #: the run's own new-best flag, used instead of ``value`` when the objective could not be read
    #: (custom objective classes): such a new best counts, with no improvement credit
    flagged: Optional[bool] = None


@dataclass
class Tally:
    """Running totals of one technique (or of the whole run)."""

    requests: int = 0
    new_bests: int = 0
    improvement: float = 0.0
    best_value: Optional[float] = None

    def affinity(self, metric: str) -> float:
        """Search affinity by ``metric`` (0 when nothing was requested)."""
        if self.requests <= 0:
            return 0.0
        gained = self.new_bests if metric == "new-bests" else self.improvement
        return gained / self.requests


@dataclass(frozen=True)
class Snapshot:
    """A tally frozen when ``tests`` results had been collected, ``seconds`` into the run."""

    technique: Optional[str]   #: None for the whole run (MetaTechniquePerformance)
    seconds: float
    tests: int
    requests: int
    new_bests: int
    improvement: float
    best_value: Optional[float]


def checkpoints(total: int) -> List[int]:
    """Result counts at which snapshots are taken: 10, 20, 50, 100, 200, 500, ... below ``total``, and
    ``total``."""
    marks: List[int] = []
    base = 10
    while base < total:
        marks.extend(m for m in (base, 2 * base, 5 * base) if m < total)
        base *= 10
    return sorted(set(marks)) + ([total] if total > 0 else [])


def technique_of(requestor: Optional[str], bandit_root: bool) -> Optional[str]:
    """The technique credited for a request: below a bandit root the sub-technique (second path
    segment), else the root technique; None for seed configurations and the ask/tell caller."""
    if not requestor or requestor in ("seed", "api"):
        return None
    parts = requestor.split("/")
    if bandit_root:
        return parts[1] if len(parts) > 1 else None
    return parts[0]


def improvement(previous: Optional[float], new: float) -> float:
    """Relative improvement of a new best over the previous one, in [0, 1] (the same credit a
    recommendation bandit gives live: :func:`~tunerlib.techniques.recommendation.relative_gain`)."""
    return relative_gain(math.inf if previous is None else previous, new)


@dataclass
class Replay:
    """Replays events; :meth:`snapshots` gives every snapshot in order."""

    requestors: Sequence[Optional[str]]   #: technique of each desired result, in request order
    tallies: Dict[Optional[str], Tally] = field(default_factory=dict)
    total: Tally = field(default_factory=Tally)

    def _requests_upto(self, index: int, done: int) -> int:
        for technique in self.requestors[done:index + 1]:
            self.tallies.setdefault(technique, Tally()).requests += 1
            self.total.requests += 1
        return max(done, index + 1)

    def snapshots(self, events: Sequence[Event]) -> List[Snapshot]:
        """Replay ``events`` (collection order) and return the snapshots at :func:`checkpoints`."""
        marks = set(checkpoints(len(events)))
        out: List[Snapshot] = []
        done = 0
        for tests, event in enumerate(events, 1):
            done = self._requests_upto(event.request_index, done)
            tally = self.tallies.setdefault(event.technique, Tally())
            if event.flagged is None:
                self._credit(tally, event.value)
            elif event.flagged:
                tally.new_bests += 1
                self.total.new_bests += 1
            if tests in marks:
                out.extend(self._freeze(event.seconds, tests))
        return out

    def _credit(self, tally: Tally, value: float) -> None:
        if math.isfinite(value) and (self.total.best_value is None or value < self.total.best_value):
            gain = improvement(self.total.best_value, value)
            for t in (tally, self.total):
                t.new_bests += 1
                t.improvement += gain
            self.total.best_value = value
        if math.isfinite(value) and (tally.best_value is None or value < tally.best_value):
            tally.best_value = value

    def _freeze(self, seconds: float, tests: int) -> List[Snapshot]:
        rows = [Snapshot(name, seconds, tests, t.requests, t.new_bests, t.improvement, t.best_value)
                for name, t in sorted(self.tallies.items(), key=lambda kv: kv[0] or "") if name is not None]
        t = self.total
        return rows + [Snapshot(None, seconds, tests, t.requests, t.new_bests, t.improvement, t.best_value)]


