"""The autotuning methodology's performance score for recorded (exhaustive) search spaces.

Willemsen et al. 2024 ("FAIR sharing of data in autotuning research", the methodology of
``AutoTuningAssociation/autotuning_methodology`` that Kernel Tuner's hyperparameter tuner reports) put
a strategy's best-so-far curve on a scale where 0 is random search and 1 is the optimum:

    performance(b) = (random(b) - best(b)) / (random(b) - optimum)

at each budget point ``b``; the score of a space is the mean of that curve over the budget range, and
the aggregate score is the mean over spaces.  Negative means worse than random search.

* ``random(b)`` is *calculated*, not simulated: the exact expected best of ``b`` draws without
  replacement from every feasible configuration of the space (:func:`expected_random_best`, closed
  form from the sorted values).  The optimum is the best recorded value.
* Failed (and feasible but unmeasured) configurations are draws that do not improve: before a run's
  first success its best-so-far is the worst recorded value, for the strategies and for the random
  expectation alike, so that pure random search scores 0 in expectation.
* Budget range (:func:`evaluation_budgets`): the methodology's cutoffs, from the number of
  evaluations random search needs to get 1 % of the way from the median to the optimum (start,
  0.01) to the number it needs to get 95 % of the way (cutoff, 0.95), with the methodology's
  expected-rank estimate ``ceil(i / (N + 1 - i))``; capped at the longest run, since tunerlib's
  replays are counted in evaluations.  The budget axis is **evaluation-based** by default;
  :func:`time_score` gives the time-based variant from recorded simulated seconds per evaluation.
  There random search's expectation at time ``t`` comes from simulated random orders of the
  recorded configurations with their own costs (:func:`random_best_over_time`), not from ``t``
  divided by the mean cost: where slow configurations also take long to measure (the RISE and
  TACO tables: mean cost 3-10x the median) the division credits random search with a draw that
  a real random run has not finished, and random search itself scored -49 on rise_stencil.
* Over runs, the score is the mean of the per-run scores (the standardisation is linear in
  ``best(b)``, so this equals standardising the mean best-so-far curve).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np
from scipy.special import gammaln

#: the methodology's defaults (Kernel Tuner's hyperparameter tuner): cutoff percentiles
START_PERCENTILE, CUTOFF_PERCENTILE = 0.01, 0.95
#: points of the time axis (the methodology uses 10,000; the curve is a step function)
TIME_RESOLUTION = 1000
#: simulated random-search runs behind the time-based baseline (:func:`random_best_over_time`)
TIME_SIMULATIONS = 2000


@dataclass(frozen=True)
class Population:
    """Every feasible configuration of a search space, as the score sees it.

    ``values``: the successful configurations' objective values, sorted ascending (lower is better);
    ``failed``: the number of feasible configurations that failed or were not measured;
    ``mean_cost`` / ``median_cost``: simulated seconds per measured configuration (0 when unknown);
    ``costs``: the simulated seconds of every feasible configuration in the order of ``values``
    followed by the failed ones (0 for those never measured); None when unknown.
    """

    values: np.ndarray
    failed: int = 0
    mean_cost: float = 0.0
    median_cost: float = 0.0
    costs: Optional[np.ndarray] = None

    @property
    def size(self) -> int:
        """Number of feasible configurations (successful + failed)."""
        return int(self.values.size + self.failed)

    @property
    def optimum(self) -> float:
        """The best recorded value."""
        return float(self.values[0])

    @property
    def worst(self) -> float:
        """The worst recorded value: the best-so-far of a run before its first success."""
        return float(self.values[-1])


def make_population(values: Sequence[Optional[float]], costs: Optional[Sequence[float]] = None,
                    unmeasured: int = 0) -> Population:
    """A population from one value per feasible configuration (None or non-finite: failed), the
    simulated seconds each cost, and the number of feasible configurations that were never measured."""
    finite = {i: v for i, v in enumerate(values) if v is not None and math.isfinite(v)}
    if not finite:
        raise ValueError("a score needs at least one successful configuration")
    good = sorted(finite, key=finite.__getitem__)       # stable: ties keep their order, with their costs
    ok = np.array([finite[i] for i in good], dtype=float)
    cost = np.asarray(costs if costs is not None else [], dtype=float)
    aligned = None
    if cost.size:
        bad = sorted(set(range(len(values))) - set(good))
        aligned = np.concatenate([cost[good], cost[bad], np.zeros(unmeasured)])
    return Population(ok, len(values) - ok.size + unmeasured, float(cost.mean()) if cost.size else 0.0,
                      float(np.median(cost)) if cost.size else 0.0, aligned)


def replay_population(bench: Any, table_space: bool = False) -> Optional[Population]:
    """The population of a :class:`tunerlib.replay.ReplayBenchmark`: its recorded configurations
    that lie in the search space, plus (unless ``table_space``, where the space is the table) the
    feasible configurations it never measured, as failed.  None when the feasible space is too large
    to count (a sparse sample: random search over the space is not known from the table)."""
    space = bench.manipulator()
    values, costs = [], []
    for key, rec in bench.table.items():
        cfg = bench.table.config_of(key)
        if space.is_valid(cfg) and space.is_feasible(cfg):
            values.append(rec.value)
            costs.append(rec.simulated_s)
    feasible = len(values) if table_space else bench.feasible_count()
    if feasible is None:
        return None
    return make_population(values, costs, max(0, feasible - len(values)))


def _sorted_with_failed(pop: Population) -> np.ndarray:
    return np.concatenate([pop.values, np.full(pop.failed, pop.worst)])


def expected_random_best(pop: Population, budgets: Union[Sequence[int], np.ndarray]) -> np.ndarray:
    """Expected best value of ``k`` uniform draws without replacement, for each ``k`` in ``budgets``.

    With the population sorted ascending, ``a_1 <= ... <= a_N`` (failed as the worst value),
    ``E[min] = a_1 + sum_{i >= 2} (a_i - a_{i-1}) P(all k draws lie in positions i..N)`` and that
    probability is ``C(N - i + 1, k) / C(N, k)`` (computed in logs)."""
    a = _sorted_with_failed(pop)
    n = a.size
    gaps = np.diff(a)
    remaining = n - np.arange(1, n)          # N - i + 1 for positions i = 2..N
    out = np.empty(len(budgets))
    for j, k in enumerate(budgets):
        k = min(max(int(k), 1), n)
        ok = remaining >= k
        log_p = (gammaln(remaining[ok] + 1) - gammaln(remaining[ok] - k + 1)
                 - gammaln(n + 1) + gammaln(n - k + 1))
        out[j] = a[0] + float(np.dot(gaps[ok], np.exp(log_p)))
    return out


def cutoff_evaluations(pop: Population, percentile: float) -> int:
    """Evaluations random search needs to get ``percentile`` of the way from the median successful
    value to the optimum (the methodology's cutoff point: first position ``i`` in the worst-first
    order at that value or better, then ``ceil(i / (N + 1 - i))``, over the successful values)."""
    values = pop.values
    target = pop.optimum + (float(np.median(values)) - pop.optimum) * (1 - percentile)
    worst_first = values[::-1]
    i = int(np.argmax(worst_first <= target))
    return max(1, math.ceil(i / (values.size + 1 - i)))


def evaluation_budgets(pop: Population, max_evaluations: int, start: float = START_PERCENTILE,
                       cutoff: float = CUTOFF_PERCENTILE) -> np.ndarray:
    """The budget points of the score: start .. min(cutoff, ``max_evaluations``) evaluations."""
    first = min(cutoff_evaluations(pop, start), max_evaluations)
    last = max(first, min(cutoff_evaluations(pop, cutoff) - 1, max_evaluations))
    return np.arange(first, last + 1)


def best_so_far(values: Sequence[float], budgets: np.ndarray, fill: float) -> np.ndarray:
    """A run's best value within each budget (failures do not improve; ``fill`` before the first
    success; a run shorter than a budget keeps its last best)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return np.full(len(budgets), fill)
    best = np.minimum.accumulate(np.where(np.isfinite(v), v, np.inf))
    best = np.where(np.isfinite(best), best, fill)
    return best[np.minimum(np.asarray(budgets), v.size) - 1]


def standardise(best: np.ndarray, random: np.ndarray, optimum: float) -> np.ndarray:
    """``(random - best) / (random - optimum)`` per budget point (1 where random search is already
    at the optimum)."""
    span = random - optimum
    safe = np.where(span > 0, span, 1.0)
    return np.where(span > 0, (random - best) / safe, 1.0)


def evaluation_score(values: Sequence[float], pop: Population, budgets: np.ndarray,
                     random: Optional[np.ndarray] = None) -> float:
    """The evaluation-based score of one run over ``budgets`` (``random``: the precomputed
    :func:`expected_random_best` of ``budgets``)."""
    random = expected_random_best(pop, budgets) if random is None else random
    return float(standardise(best_so_far(values, budgets, pop.worst), random, pop.optimum).mean())


@dataclass(frozen=True)
class TimeAxis:
    """The time-based budget points (simulated seconds) and random search's expectation at each."""

    times: np.ndarray
    random: np.ndarray


def time_axis(pop: Population, budgets: np.ndarray, resolution: int = TIME_RESOLUTION) -> TimeAxis:
    """The budget range in evaluations times the median simulated seconds per configuration, at
    ``resolution`` points (the methodology's range), with random search's expectation at each
    (:func:`random_best_over_time`)."""
    if pop.median_cost <= 0 or pop.mean_cost <= 0 or pop.costs is None:
        raise ValueError("a time-based score needs the simulated seconds of the recorded configurations")
    times = np.linspace(budgets[0] * pop.median_cost, budgets[-1] * pop.median_cost, resolution)
    return TimeAxis(times, random_best_over_time(pop, times))


def random_best_over_time(pop: Population, times: np.ndarray, sims: int = TIME_SIMULATIONS,
                          seed: int = 0) -> np.ndarray:
    """Random search's expected best-so-far at each of ``times`` (simulated seconds, ascending),
    estimated from ``sims`` random orders (without replacement) of the feasible configurations: a
    draw counts once its recorded cost has elapsed, and before the first success the best is the
    worst recorded value, exactly as :func:`time_score` treats a run, so that random search scores 0
    in expectation.  The fixed ``seed`` makes the score repeatable."""
    if pop.costs is None:
        raise ValueError("random search over time needs the simulated seconds of every configuration")
    values, costs = _sorted_with_failed(pop), pop.costs
    n, horizon = values.size, float(times[-1])
    rng = np.random.default_rng(seed)
    total = np.zeros(len(times))
    length = min(n, 64)
    for _ in range(sims):
        while True:                          # enough draws to pass the horizon (or every configuration)
            order = rng.choice(n, length, replace=False)
            spent = np.cumsum(costs[order])
            if spent[-1] > horizon or length == n:
                break
            length = min(n, 2 * length)
        best = np.concatenate([[pop.worst], np.minimum.accumulate(values[order])])
        total += best[np.searchsorted(spent, times, side="right")]
    return total / sims


def time_score(values: Sequence[float], costs: Sequence[float], pop: Population, axis: TimeAxis) -> float:
    """The time-based score of one run: its best at time ``t`` is that of its evaluations completed
    by ``t`` (cumulative ``costs``, simulated seconds per evaluation)."""
    done = np.searchsorted(np.cumsum(np.asarray(costs, dtype=float)), axis.times, side="right")
    best = np.where(done > 0, best_so_far(values, np.maximum(done, 1), pop.worst), pop.worst)
    return float(standardise(best, axis.random, pop.optimum).mean())


def rank_score(runs: Sequence[Sequence[float]], pop: Population, budgets: np.ndarray) -> float:
    """The score by the methodology's own estimators, over all ``runs`` at once: random search is the
    value at its expected rank (``round(k (N + 1) / (k + 1))`` from the worst of the N successful
    values), a technique the value at the median over runs of its best-so-far's rank (runs without a
    success yet are left out of that median, as the methodology's NaN).  Less sensitive to the few
    very bad early values than :func:`evaluation_score`, but not an expectation."""
    values = pop.values
    n = values.size
    k = np.asarray(budgets, dtype=float)
    random = values[n - 1 - np.minimum(n - 1, np.round(k * (n + 1) / (k + 1)).astype(int))]
    bests = np.array([best_so_far(r, budgets, np.nan) for r in runs])
    ranks = np.where(np.isnan(bests), np.nan, np.searchsorted(values, np.nan_to_num(bests, nan=np.inf)))
    ranks = np.where(np.isnan(ranks).all(axis=0), n - 1, ranks)
    with np.errstate(all="ignore"):
        median = np.nanmedian(ranks, axis=0)
    curve = values[np.minimum(n - 1, np.round(median).astype(int))]
    return float(standardise(curve, random, pop.optimum).mean())


@dataclass(frozen=True)
class SpaceScore:
    """A technique's score on one space: mean and standard deviation over runs, the number of runs,
    the budget range (evaluations), the time-based mean (None without recorded costs) and the score by
    the methodology's median-rank estimators (:func:`rank_score`)."""

    mean: float
    std: float
    runs: int
    budgets: tuple
    time_mean: Optional[float] = None
    rank: Optional[float] = None


def space_score(runs: Sequence[Sequence[float]], pop: Population, max_evaluations: int,
                costs: Optional[Sequence[Sequence[float]]] = None) -> SpaceScore:
    """The score of a technique's ``runs`` (values per evaluation, inf when failed) on one space;
    with ``costs`` (simulated seconds per evaluation, one list per run) also the time-based one."""
    budgets = evaluation_budgets(pop, max_evaluations)
    random = expected_random_best(pop, budgets)
    scores = np.array([evaluation_score(r, pop, budgets, random) for r in runs])
    timed = None
    if costs and len(costs) == len(runs) and pop.median_cost > 0:
        axis = time_axis(pop, budgets)
        timed = float(np.mean([time_score(r, c, pop, axis) for r, c in zip(runs, costs)]))
    return SpaceScore(float(scores.mean()), float(scores.std()), len(runs), (int(budgets[0]), int(budgets[-1])),
                      timed, rank_score(runs, pop, budgets))


def aggregate(scores: Mapping[str, float]) -> float:
    """The aggregate score: the mean of the per-space scores."""
    return float(np.mean(list(scores.values()))) if scores else math.nan


def within(runs: Sequence[Sequence[float]], budget: int, optimum: float, tolerance: float) -> int:
    """How many runs found a value within ``tolerance`` (0.05: 5 %) of ``optimum`` by ``budget``."""
    return sum(min(r[:budget], default=math.inf) <= optimum * (1 + tolerance) for r in runs)


@dataclass(frozen=True)
class TableRow:
    """One technique in the aggregate table: its score per space, their mean, and the means of the
    time-based and median-rank scores (None unless every space has one)."""

    technique: str
    per_space: Dict[str, float]
    mean: float
    time_mean: Optional[float]
    rank_mean: Optional[float]


def score_table(per_space: Dict[str, Dict[str, SpaceScore]], techniques: Sequence[str]) -> list:
    """The aggregate table's rows (:class:`TableRow`), one per technique."""
    rows = []
    for tech in techniques:
        cells = {s: per_space[s][tech] for s in sorted(per_space) if tech in per_space[s]}
        timed = {s: c.time_mean for s, c in cells.items() if c.time_mean is not None}
        ranked = {s: c.rank for s, c in cells.items() if c.rank is not None}
        rows.append(TableRow(tech, {s: c.mean for s, c in cells.items()}, aggregate({s: c.mean for s, c in cells.items()}),
                             aggregate(timed) if len(timed) == len(cells) else None,
                             aggregate(ranked) if len(ranked) == len(cells) else None))
    return rows
