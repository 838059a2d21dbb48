"""Adaptive min-of-k timing for noisy machines, and interleaved re-timing of finalists and baselines.

A configuration's time is the *minimum* over k timed runs after warm-up: on a shared machine noise
only ever adds time, so the minimum is the most repeatable estimate of what the code costs.  k adapts
to the noise: timing stops as soon as the minimum has stabilised -- ``patience`` consecutive runs did
not lower it by more than ``rel_tol`` -- once at least ``min_runs`` runs are in; it never exceeds
``max_runs`` runs, and it stops early once the timed runs together used ``budget_s`` seconds (a slow
configuration gets fewer runs, never fewer than one).  A warm-up run that alone takes ``budget_s`` or
more is not repeated: it becomes the only sample.

Two ways to take a sample: :func:`time_min_of_k` times a callable with a clock;
:func:`sample_min_of_k` calls a function that returns its own seconds (an OpenCL profiling event, a
kernel's own timer).  :func:`time_interleaved` re-times several callables in rotating rounds, so load
changes hit finalists and baselines alike.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple, Type

#: the reason recorded when the check run alone used the budget (see :func:`time_after_check`)
SLOW_CHECK = "slow check run"
#: the reason recorded when a configuration is slower than the run's time limit (a TIMEOUT)
OVER_LIMIT = "over the time limit"
#: a check run pays one-time costs a warm run does not (thread pools, first touch of memory, cold
#: caches, a fresh JIT-compiled pipeline): on kernels of a few milliseconds those alone exceed twice
#: the best warm time (Halide blur 1024: 3.3 ms cold, 0.54 ms warm).  So the check run may take this
#: many times the time limit; past the limit it is judged by up to WARM_TRIES warm runs (one run on a
#: loaded machine is often 2-3x the minimum: with one try, 163 of 200 blur results still timed out).
COLD_LIMIT_FACTOR, WARM_TRIES = 10.0, 3


class TimingError(ValueError):
    """A bad timing policy (one-line message naming the field and the fix)."""


@dataclass(frozen=True)
class TimingPolicy:
    """How many runs to time.  Every count must be positive; ``min_runs <= max_runs``.

    Built once per tuning run (from the tuner's options) and passed to every timing call.
    """

    warmup: int = 1
    min_runs: int = 3
    max_runs: int = 30
    patience: int = 3
    rel_tol: float = 0.02
    budget_s: float = 1.0

    def check(self) -> "TimingPolicy":
        """Return self, or raise :class:`TimingError` naming the bad field (called by every timing
        function; call it early to reject bad options before tuning starts)."""
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
    """What a timing function measured: every timed sample (seconds) and why it stopped.

    ``error`` is set by :func:`time_interleaved` for a callable that raised and was dropped.
    """

    samples: List[float] = field(default_factory=list)
    stopped_because: str = ""
    error: Optional[str] = None

    @property
    def best(self) -> float:
        """The minimum sample (the reported time); ``inf`` when there is none."""
        return min(self.samples) if self.samples else math.inf

    @property
    def runs(self) -> int:
        """k: the number of timed runs."""
        return len(self.samples)

    @property
    def median(self) -> float:
        """Median sample (a noise indicator next to :attr:`best`)."""
        return statistics.median(self.samples) if self.samples else math.inf

    @property
    def spread(self) -> float:
        """(median - min) / min: 0 on a quiet machine, large when noisy."""
        return (self.median - self.best) / self.best if self.samples and self.best > 0 else 0.0


def clocked(fn: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> Callable[[], float]:
    """A sampler that calls ``fn`` and returns the seconds ``clock`` saw it take."""
    def sample() -> float:
        start = clock()
        fn()
        return clock() - start
    return sample


def time_min_of_k(fn: Callable[[], object], policy: Optional[TimingPolicy] = None,
                  clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Call ``fn`` ``policy.warmup`` times (not counted), then time calls until the minimum
    stabilises (see the module docstring).

    Called once per configuration after its check run.  Returns a :class:`Timing` (at least one
    sample).  Exceptions from ``fn`` propagate.
    """
    return sample_min_of_k(clocked(fn, clock), policy)


def sample_min_of_k(sample: Callable[[], float], policy: Optional[TimingPolicy] = None) -> Timing:
    """Like :func:`time_min_of_k` for a ``sample`` that runs the code once and returns its seconds."""
    policy = (policy or TimingPolicy()).check()
    for _ in range(policy.warmup):
        elapsed = sample()
        if elapsed >= policy.budget_s:      # too slow to repeat: the warm-up run is the sample
            return Timing([elapsed], "slow warm-up")
    timing = Timing()
    stale, spent = 0, 0.0
    while True:
        elapsed = sample()
        spent += elapsed
        previous = timing.best
        timing.samples.append(elapsed)
        stale = stale + 1 if elapsed >= previous * (1.0 - policy.rel_tol) else 0
        reason = stop_reason(policy, timing.runs, stale, spent)
        if reason:
            timing.stopped_because = reason
            return timing


def check_run_limit(limit: Optional[float]) -> Optional[float]:
    """The wall-clock limit of a configuration's check run under the run's time ``limit`` (None:
    none): :data:`COLD_LIMIT_FACTOR` times it.  Called before the check run, to stop one that hangs."""
    return None if limit is None else COLD_LIMIT_FACTOR * limit


def time_after_check(sample: Callable[[], float], first_s: float, policy: TimingPolicy,
                     limit: Optional[float] = None) -> Timing:
    """The timing of a configuration whose check run (which doubles as the warm-up) took
    ``first_s``: that run alone when it used the budget, else :func:`sample_min_of_k` without
    further warm-up.  Called right after a configuration's output was checked.

    With a time ``limit`` (the run's ``--limit-multiplier`` x the best time, passed to ``run()``),
    a configuration is judged by its warm runs, as the best time was: when the check run passed the
    limit, up to :data:`WARM_TRIES` more runs decide (the first within the limit ends them); the
    result stops with :data:`OVER_LIMIT` (the caller records TIMEOUT; its samples are those runs)
    when all of them passed it too, or when the check run alone passed :func:`check_run_limit`."""
    policy = policy.check()
    if limit is not None and first_s > limit:
        if first_s > COLD_LIMIT_FACTOR * limit:
            return Timing([first_s], OVER_LIMIT)
        warm = [sample()]
        while warm[-1] > limit and len(warm) < WARM_TRIES:
            warm.append(sample())
        if warm[-1] > limit:
            return Timing(warm, OVER_LIMIT)
    if first_s >= policy.budget_s:
        return Timing([first_s], SLOW_CHECK)
    return sample_min_of_k(sample, TimingPolicy(0, policy.min_runs, policy.max_runs, policy.patience,
                                                policy.rel_tol, policy.budget_s))


def stop_reason(policy: TimingPolicy, runs: int, stale: int, spent: float) -> str:
    """Why timing stops after ``runs`` samples (``stale`` of them without a new minimum, ``spent``
    seconds in all): ``"max_runs"``, ``"budget"``, ``"stable"``, or ``""`` to go on."""
    if runs >= policy.max_runs:
        return "max_runs"
    if spent >= policy.budget_s:
        return "budget"
    if runs >= policy.min_runs and stale >= policy.patience:
        return "stable"
    return ""


def interleaving_order(names: List[str], round_index: int) -> List[str]:
    """The order callables run in round ``round_index``: the starting one rotates each round."""
    if not names:
        return []
    k = round_index % len(names)
    return names[k:] + names[:k]


def time_interleaved(fns: Dict[str, Callable[[], object]], policy: Optional[TimingPolicy] = None,
                     clock: Callable[[], float] = time.perf_counter,
                     errors: Tuple[Type[BaseException], ...] = ()) -> Dict[str, Timing]:
    """Re-time finalists and baselines fairly: round after round each callable runs (in
    :func:`interleaving_order`), so load changes hit them all alike; each keeps its minimum.

    Called once at the end of a tuning run.  In every round each callable first runs
    ``policy.warmup`` times untimed, then once timed, so its data is back in cache.  Rounds stop
    when no minimum improved by more than ``rel_tol`` for ``patience`` rounds (after ``min_runs``
    rounds), at ``max_runs`` rounds, or once ``budget_s`` times the number of callables has been
    spent.  A fixed number of rounds R: ``min_runs = max_runs = R`` and a large budget.  A callable
    raising one of ``errors`` is dropped (its Timing's ``error`` says why); others propagate.
    """
    return sample_interleaved({name: clocked(fn, clock) for name, fn in fns.items()}, policy, errors)


def sample_interleaved(samplers: Dict[str, Callable[[], float]], policy: Optional[TimingPolicy] = None,
                       errors: Tuple[Type[BaseException], ...] = ()) -> Dict[str, Timing]:
    """Like :func:`time_interleaved` for samplers that run their code once and return its seconds
    (warm-up runs call the sampler too and ignore its value)."""
    policy = (policy or TimingPolicy()).check()
    names = list(samplers)
    out = {name: Timing() for name in names}
    stale, spent, rounds = 0, 0.0, 0
    while names:
        improved = False
        for name in interleaving_order(names, rounds):
            try:
                for _ in range(policy.warmup):
                    samplers[name]()
                elapsed = samplers[name]()
            except errors as exc:
                out[name].error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                names.remove(name)
                continue
            spent += elapsed
            improved |= elapsed < out[name].best * (1.0 - policy.rel_tol)
            out[name].samples.append(elapsed)
        rounds += 1
        stale = 0 if improved else stale + 1
        reason = stop_reason(policy, rounds, stale, spent / max(1, len(samplers)))
        if reason:
            for timing in out.values():
                timing.stopped_because = reason
            break
    return out


def fixed_rounds(rounds: int, warmup: int = 1) -> TimingPolicy:
    """The policy of exactly ``rounds`` interleaved rounds (no budget, no early stop), each timed
    run after ``warmup`` untimed ones: for re-timing the finalists at the end of a run."""
    return TimingPolicy(warmup=warmup, min_runs=rounds, max_runs=rounds, budget_s=math.inf)
