"""Restarts of BayesianOptimization's search: fresh random draws once the best has stopped improving
by a meaningful amount.

Expected improvement fitted on a run's first results can hold the search in the basin of an early
good configuration: its proposals are the neighbours of that incumbent, and each improves it by a
fraction of a percent (a recording's measurement noise), so the run never looks stalled, while the
configurations a few percent better lie in another region that no result has come near.
:class:`StallRestart` counts the OK results since the best last improved by a *meaningful* gain: a
relative one of at least ``min_gain`` (values of one sign; an absolute ``min_gain`` times the spread
of the values otherwise).  Once the results without one are at least ``after`` and at least as many
as the run had counted when the last meaningful gain came, the next ``size`` proposals are random
feasible configurations, as in the initial design: with the incumbent's basin fitted, new points
elsewhere give the GP the evidence to leave it.  The second condition makes the wait scale with
the run: a search that is still finding gains every few results (as on a small space in its first
tens of evaluations) is never interrupted, and after a restart the next one waits twice as long.
The counts come from the space: the technique's option ``restart_after`` gives ``after`` in initial
designs (``d + 1`` results), and ``size`` is one design, so a wider space, whose GP needs more
results to compare regions, waits and restarts with more points.  The option is off by default: on
the recordings it was measured on, restarts help where a run sticks in an early basin and cost
where the model would have found the optimum with the evaluations they take (the benchmarks page
of the default technique gives the figures).  The count
starts with the technique's own first proposal (its design's, in a run of its own): results that
other techniques measured before it joined (inside a bandit, or after a hand-over) only set the best.
"""
from __future__ import annotations

import math


class StallRestart:
    """Counts the results since the last meaningful gain and the restart draws due."""

    def __init__(self, after: int, size: int, min_gain: float) -> None:
        self.after, self.size, self.min_gain = after, size, min_gain
        self.best = math.inf          # the best OK value so far
        self.anchor = math.inf        # the best value when it last improved meaningfully
        self.low, self.high = math.inf, -math.inf
        self.since = 0                # OK results since the last meaningful gain
        self.counted = 0              # OK results counted so far
        self.anchor_at = 0            # ``counted`` at the last meaningful gain (or restart)
        self.due = 0                  # restart draws still to make
        self.counting = False         # set by the technique's first proposal (:meth:`begin`)

    def begin(self) -> None:
        """Called before each proposal of the technique: from the first on, results count towards a stall."""
        self.counting = True

    def add(self, value: float, state: str) -> None:
        """Record one result (called once per distinct configuration, in arrival order); a finite OK
        ``value`` arms the restart when the results without a meaningful gain reach ``after`` and the
        count at the last gain."""
        if state != "ok" or not math.isfinite(value):
            return
        self.low, self.high = min(self.low, value), max(self.high, value)
        self.best = min(self.best, value)
        self.counted += self.counting
        if self.meaningful(self.anchor, self.best) or not self.counting:
            self.anchor, self.since, self.anchor_at = self.best, 0, self.counted
            return
        self.since += 1
        if self.after > 0 and self.size > 0 and self.since >= max(self.after, self.anchor_at):
            self.due, self.since = self.size, 0
            self.anchor, self.anchor_at = self.best, self.counted

    def meaningful(self, old: float, new: float) -> bool:
        """Whether ``new`` improves on ``old`` by ``min_gain``: relatively where the values keep one
        sign, else as a share of their spread; any improvement on ``inf`` counts."""
        if not math.isfinite(old):
            return new < old
        if self.low > 0 or self.high < 0:
            return new < old - self.min_gain * abs(old)
        return new < old - self.min_gain * (self.high - self.low)

    def take(self) -> bool:
        """Called before each proposal after the initial design: True (and one draw fewer due) when
        the proposal is to be a restart's random draw."""
        if self.due <= 0:
            return False
        self.due -= 1
        return True
