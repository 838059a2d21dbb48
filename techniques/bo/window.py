"""The results BayesianOptimization keeps for its surrogate, updated as each result comes in.

The GP is trained on at most ``cap`` OK results: all of them up to ``cap``, beyond that the best
``cap // 2`` and the most recent others (in arrival order), with failures imputed at the worst OK value
when asked.  :class:`TrainingWindow` keeps the best ``cap // 2`` OK results in a sorted list updated
per result (``O(log cap)``), so building the training set costs ``O(cap)`` at any run length, and it
counts what the technique asks per proposal (OK results, failures, results since the best improved)
instead of scanning every result.

The feasibility forest is trained on a window too (:meth:`TrainingWindow.feasibility_set`): beyond
``cap`` results, the ``cap`` most recent results, the best ``cap // 2`` OK results and the ``cap // 2``
most recent failures -- at most ``2 x cap`` rows, so its training cost stays flat as a run grows while it
keeps the region of the incumbent and the failures nearest in time.
"""
from __future__ import annotations

import bisect
import math
from typing import Any, List, Set, Tuple

Config = Any


class TrainingWindow:
    """The OK results, failures and running counts of one BayesianOptimization run."""

    def __init__(self, cap: int, impute_failures: bool, stall_gain: float = 0.0) -> None:
        self.cap, self.impute, self.stall_gain = cap, impute_failures, stall_gain
        self.ok: List[Tuple[Config, float]] = []      # finite OK results, in arrival order
        self.failed: List[Config] = []                # results whose state is not "ok", in arrival order
        self.top: List[Tuple[float, int]] = []        # (value, index in ok) of the best cap // 2, sorted
        self.ok_states = 0                            # results whose state is "ok" (finite or not)
        self.worst = -math.inf
        self.best = math.inf
        self.stalled = 0                              # finite OK results since the best improved (by stall_gain)
        self.stall_best = math.inf                    # the best when the stall count last restarted
        self.labelled: List[Tuple[Config, bool]] = []  # every result as (config, OK?), in arrival order
        self.failed_at: List[int] = []                # indices in labelled of the failures
        self.ok_at: List[int] = []                    # index in labelled of each entry of ok

    def add(self, config: Config, value: float, state: str) -> None:
        """Record one new result (called once per distinct configuration, in arrival order)."""
        self.labelled.append((config, state == "ok"))
        if state != "ok":
            self.failed.append(config)
            self.failed_at.append(len(self.labelled) - 1)
            return
        self.ok_states += 1
        if not math.isfinite(value):
            return
        self.ok_at.append(len(self.labelled) - 1)
        entry = (value, len(self.ok))
        keep = self.cap // 2
        if len(self.top) < keep or (keep and entry < self.top[-1]):
            bisect.insort(self.top, entry)
            del self.top[keep:]
        self.ok.append((config, value))
        self.worst = max(self.worst, value)
        self.best = min(self.best, value)
        if self._gain(value):
            self.stall_best, self.stalled = value, 0
        else:
            self.stalled += 1

    def _gain(self, value: float) -> bool:
        """Whether ``value`` improves the best at the last restart of the stall count by ``stall_gain``
        of it (any improvement where the values change sign or ``stall_gain`` is 0)."""
        old = self.stall_best
        if not math.isfinite(old) or self.stall_gain <= 0 or old * value <= 0:
            return value < old
        return value < old - self.stall_gain * abs(old)

    def best_configs(self, k: int) -> List[Config]:
        """The configurations of the ``k`` best finite OK results, best first (ties: the earlier);
        called for each trust-region step of a stalled search (its centres)."""
        return [self.ok[i][0] for _, i in self.top[:k]]

    def size(self) -> int:
        """Results the training set is chosen from (OK, plus imputed failures when imputing)."""
        return len(self.ok) + (len(self.failed) if self.impute and self.ok else 0)

    def _entry(self, i: int) -> Tuple[Config, float]:
        return self.ok[i] if i < len(self.ok) else (self.failed[i - len(self.ok)], self.worst)

    def training_set(self) -> List[Tuple[Config, float]]:
        """(config, value) of the training set in arrival order (imputed failures after the OK
        results): everything up to ``cap``, else the best ``cap // 2`` (ties: the earlier) and the
        most recent others."""
        total = self.size()
        if total <= self.cap:
            return [self._entry(i) for i in range(total)]
        keep: Set[int] = {i for _, i in self.top}
        # imputed failures sort after every OK result (the worst value, later arrival)
        keep.update(range(len(self.ok), len(self.ok) + max(0, self.cap // 2 - len(keep))))
        i = total - 1
        while len(keep) < self.cap and i >= 0:
            keep.add(i)
            i -= 1
        return [self._entry(i) for i in sorted(keep)]

    def feasibility_set(self) -> Tuple[List[Config], List[bool]]:
        """Called before each feasibility refit: (configs, OK?) of the forest's training window in
        arrival order -- every result up to ``cap``, else the ``cap`` most recent results, the best
        ``cap // 2`` OK results and the ``cap // 2`` most recent failures."""
        total = len(self.labelled)
        if total <= self.cap:
            chosen: Any = range(total)
        else:
            keep = set(range(total - self.cap, total))
            keep.update(self.ok_at[i] for _, i in self.top)
            keep.update(self.failed_at[-(self.cap // 2):] if self.cap // 2 else ())
            chosen = sorted(keep)
        picked = [self.labelled[i] for i in chosen]
        return [c for c, _ in picked], [ok for _, ok in picked]
