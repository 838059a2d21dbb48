"""Adaptive min-of-k timing for noisy machines.

A run's time is the *minimum* over k timed runs after warm-up: on a shared machine noise only ever
adds time, so the minimum is the most repeatable estimate of what the code costs.  k adapts to the
noise: timing stops as soon as the minimum has stabilised -- ``patience`` consecutive runs did not
lower it by more than ``rel_tol`` -- once at least ``min_runs`` runs are in; it never exceeds
``max_runs`` runs, and it stops early when the timed runs together have used ``budget_s`` seconds
(a slow schedule gets fewer runs, never fewer than one).  A quiet machine therefore needs
``min_runs`` runs, a noisy one more.  A warm-up run that alone takes ``budget_s`` or more is not
repeated: it becomes the only sample (such a schedule is far from the best anyway, and repeating
it would waste the tuning budget).

Pure Python, no Halide: :func:`time_min_of_k` times any callable.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional


class TimingError(ValueError):
    """A bad timing policy (one-line message naming the field and the fix)."""


@dataclass(frozen=True)
class TimingPolicy:
    """How many runs to time.  Every field must be positive; ``min_runs <= max_runs``."""

    warmup: int = 1
    min_runs: int = 3
    max_runs: int = 30
    patience: int = 3
    rel_tol: float = 0.02
    budget_s: float = 1.0

    def check(self) -> "TimingPolicy":
        """Return self, or raise TimingError naming the bad field."""
        for name in ("min_runs", "max_runs", "patience"):
            if getattr(self, name) < 1:
                raise TimingError(f"timing {name} must be at least 1, got {getattr(self, name)}")
        if self.warmup < 0:
            raise TimingError(f"timing warmup must be >= 0, got {self.warmup}")
        if self.min_runs > self.max_runs:
            raise TimingError(f"timing min_runs ({self.min_runs}) exceeds max_runs ({self.max_runs}); "
                              "raise max_runs")
        if not (self.rel_tol >= 0 and math.isfinite(self.rel_tol)):
            raise TimingError(f"timing rel_tol must be a finite number >= 0, got {self.rel_tol}")
        if not (self.budget_s > 0):
            raise TimingError(f"timing budget_s must be positive, got {self.budget_s}")
        return self


@dataclass
class Timing:
    """What :func:`time_min_of_k` measured: every timed sample (seconds) and why it stopped."""

    samples: List[float] = field(default_factory=list)
    stopped_because: str = ""

    @property
    def best(self) -> float:
        """The minimum sample (the reported time)."""
        return min(self.samples)

    @property
    def runs(self) -> int:
        """k: the number of timed runs."""
        return len(self.samples)

    @property
    def median(self) -> float:
        """Median sample (a noise indicator next to :attr:`best`)."""
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """(median - min) / min: 0 on a quiet machine, large when noisy."""
        return (self.median - self.best) / self.best if self.best > 0 else 0.0


def time_min_of_k(fn: Callable[[], object], policy: Optional[TimingPolicy] = None,
                  clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Call ``fn`` ``policy.warmup`` times (not counted), then time calls until the minimum stabilises.

    Returns a :class:`Timing` (at least one sample).  Exceptions from ``fn`` propagate.
    """
    policy = (policy or TimingPolicy()).check()
    for _ in range(policy.warmup):
        start = clock()
        fn()
        elapsed = clock() - start
        if elapsed >= policy.budget_s:      # too slow to repeat: the warm-up run is the sample
            return Timing([elapsed], "slow warm-up")
    timing = Timing()
    stale, spent = 0, 0.0
    while True:
        start = clock()
        fn()
        elapsed = clock() - start
        spent += elapsed
        previous = min(timing.samples) if timing.samples else math.inf
        timing.samples.append(elapsed)
        stale = stale + 1 if elapsed >= previous * (1.0 - policy.rel_tol) else 0
        reason = _stop_reason(policy, timing.runs, stale, spent)
        if reason:
            timing.stopped_because = reason
            return timing


def _stop_reason(policy: TimingPolicy, runs: int, stale: int, spent: float) -> str:
    if runs >= policy.max_runs:
        return "max_runs"
    if spent >= policy.budget_s:
        return "budget"
    if runs >= policy.min_runs and stale >= policy.patience:
        return "stable"
    return ""


def time_interleaved(fns: Dict[str, Callable[[], object]], policy: Optional[TimingPolicy] = None,
                     clock: Callable[[], float] = time.perf_counter) -> Dict[str, Timing]:
    """Time several callables fairly on a noisy machine: round after round, each callable runs
    (the starting one rotates), so load changes hit them all alike; each keeps its minimum.

    In every round each callable first runs ``policy.warmup`` times untimed, then once timed, so
    its data is back in cache as it is when :func:`time_min_of_k` times it back to back (the
    others' runs in between would evict it).  Rounds stop when no callable's minimum improved by
    more than ``rel_tol`` for ``patience`` rounds (after ``min_runs`` rounds), at ``max_runs``
    rounds, or once ``budget_s`` times the number of callables has been spent on timed runs.
    """
    policy = (policy or TimingPolicy()).check()
    names = list(fns)
    out = {name: Timing() for name in names}
    stale, spent, rounds = 0, 0.0, 0
    while True:
        improved = False
        for i in range(len(names)):
            name = names[(rounds + i) % len(names)]
            for _ in range(policy.warmup):
                fns[name]()
            start = clock()
            fns[name]()
            elapsed = clock() - start
            spent += elapsed
            previous = min(out[name].samples) if out[name].samples else math.inf
            improved |= elapsed < previous * (1.0 - policy.rel_tol)
            out[name].samples.append(elapsed)
        rounds += 1
        stale = 0 if improved else stale + 1
        reason = _stop_reason(policy, rounds, stale, spent / max(1, len(names)))
        if reason:
            for timing in out.values():
                timing.stopped_because = reason
            return out
