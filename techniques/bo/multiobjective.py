"""MultiObjectiveBO: one GP per objective and the exact expected hypervolume improvement.

Called like :class:`~.technique.BayesianOptimization`, whose machinery it shares: the initial
design, the chain of trees, the random-forest feasibility model (unknown constraints), the
acquisition's local search (or exact scoring of a small finite space) and the fallbacks.  What
differs is the model and the acquisition of a BO proposal:

* every objective of ``Feedback.values`` (lower is better; a single-objective run counts as one
  objective, its value) gets its own GP with its own hyperparameters and fit schedule
  (:class:`~.fitstate.FitState`), all trained on the same configurations: the OK results, capped
  at ``max_observations`` by keeping the best non-dominated layers (up to half) and the most
  recent others.  By default (``copula_transform``, unless set) each GP models the Gaussian copula
  of its objective's values (the normal quantiles of their ranks): time and energy of GPU kernels
  span orders of magnitude with a few extreme values, and on the RISE stencil table the fronts
  found with the copula were far better than with the log or identity transform;
* the acquisition is the expected hypervolume improvement of the candidate's independent
  predictions over the observed front, times P(feasible).  By default (``ehvi_units`` "metric",
  :class:`MetricUnits`) it is measured in the objectives' own units, with the reference point 1.1 x
  the observed front's nadir -- the hypervolume a front is judged by: each GP's posterior is mapped
  back through the (increasing) transform, a piecewise-linear map through the training pairs
  (:mod:`.metric_ehvi`), and the expected improvement is estimated from 64 posterior samples per
  candidate (``metric_ehvi`` "monte_carlo"; "exact" integrates it in closed form over the front's
  boxes at about half the processor time, but on the stencil and a perturbed K-means table it found
  the front's knee in fewer seeds: the samples' noise spreads the proposals).  Below the best value seen
  the map stays at that value (``metric_tail`` "clamped"; "linear" continues it, so a candidate
  predicted to beat the front's extreme in one metric is worth the hypervolume that would add, and
  "geometric" continues it by a constant factor per unit for a positive metric: on the four
  recorded tables of tools/bench_pareto.py neither was better over ten seeds, though the
  convolution's runs miss most at its fast end; docs/benchmarks/multi-objective.md).  In those
  units the gaps of a front weigh what they weigh in its hypervolume (with times spanning orders
  of magnitude, an energy saving among the fast configurations outweighs small differences of
  time), where the
  copula's ranks weigh every gap alike; on the RISE K-means table this found the fast and frugal
  knee within 20 evaluations far more often.  "model" uses the GPs' standardised units instead,
  exactly (:mod:`.ehvi`), with the reference point 10 % of the front's extent beyond its nadir; it
  also breaks ties (a small weight) where the metric-units EHVI underflows to 0;
* every ``extreme_every``-th proposal (4) aims at one objective's own extreme instead, the
  objectives in turn, until an objective's last ``extreme_patience`` (2) such proposals in a row
  did not improve it (:mod:`.extremes`): the EHVI gives nothing to a design beyond the front's
  nadir in another objective, however far it extends the front's end.  Such a turn uses the
  objective's copula GP and its expected improvement in the GP's units (``extreme_units``
  "metric": in the metric's, through the EHVI's map of that objective; not better on the
  convolution table); ``extreme_copula`` false fits it with single-objective BO's power
  transforms instead (the copula's ranks reward a rank gained, not how far a design beats the best:
  without trust-region moves, on HPVM2FPGA the front of 100 evaluations then dominated random
  search's of 1,000 in 6 of 16 pairs rather than 3; with them in 4 rather than 6; on the recorded
  tables it was not better; docs/benchmarks/multi-objective.md);
* on spaces too large to be scored whole, crossovers of the best non-dominated layers (on an
  extreme turn, of the configurations best in that objective) join the acquisition's random
  candidates (``recombine``, :mod:`.recombine`): a good design may take many parameters set
  together that different front members each have part of.  There an extreme turn is also a
  trust-region step (``extreme_moves``, :mod:`.extremes`): its candidates are moves changing up to
  a radius of parameters at once around the configurations best in its objective (the radius
  doubles after a gain, halves after a miss) instead of random draws of the whole space, a gain
  earns the objective the next proposal too (``extreme_streak``), and its misses end the turns
  only once the radius is down to one parameter; the hypervolume proposals' random candidates are
  joined by such moves around the front's members (``front_moves``) and by moves from a front
  member towards its neighbour on the front, most across the largest gaps (``gap_moves``,
  :mod:`.gaps`);
* the initial design is ``d + 1`` random designs up to :data:`.options.MAX_INITIAL_DESIGN` (unless
  ``initial_samples`` is set): on the 40 parameters of HPVM2FPGA, ``d + 1`` would spend 41 of a
  budget of 100 evaluations before the first model;
* results in flight enter the front at their posterior means ("Kriging believer"), so several
  proposals made before their results arrive (``parallelism`` > 1) spread along the front instead
  of piling onto the one region of highest EHVI;
* trust-region steps start when no result has entered the front for ``stall_after`` OK results,
  centred on a front member drawn at random.

Why EHVI rather than ParEGO-style random Chebyshev scalarisations: the hypervolume it improves is
the quantity a front is judged by (tools/bench_pareto.py), it is exact and cheap for the fronts of
a tuning run (two objectives: ``n + 1`` boxes), and it needs no weights: a random weight vector
aims each proposal at one direction of the front, while EHVI weighs every gap of the front by how
much it can still gain, which matters when the front is a few points near a knee.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..base import Config, Feedback
from ..pareto import non_dominated, non_dominated_sort
from .ehvi import box_decomposition
from .ehvi_acquisition import HypervolumeAcquisition
from .extremes import START_RADIUS, ExtremeTurns, extreme_acquisition, perturbations
from .fitstate import FitState
from .gaps import with_gap_moves
from .gp import GaussianProcess
from .metric_ehvi import MetricMap, MetricUnits
from .options import MAX_INITIAL_DESIGN, MOBO_OPTIONS
from .recombine import parents_by_layers, recombinants
from .technique import EPS_STEPS, BayesianOptimization

#: the reference point lies this fraction of the front's extent beyond its nadir
REFERENCE_MARGIN = 0.1
#: front members used as local-search starts
MAX_FRONT_STARTS = 10
#: random draws of the space whose values an extreme turn's trust-region moves take
DONORS = 64


def training_rows(vectors: Sequence[Tuple[float, ...]], cap: int) -> List[int]:
    """Indices (ascending) of the OK results the GPs are trained on: all up to ``cap``; beyond it the
    best non-dominated layers while they fit in ``cap // 2`` (at least the first layer's earliest
    ``cap // 2``), then the most recent others."""
    n = len(vectors)
    if n <= cap:
        return list(range(n))
    keep: List[int] = []
    for layer in non_dominated_sort(vectors):
        if len(keep) + len(layer) > cap // 2:
            if not keep:
                keep = sorted(layer)[: cap // 2]
            break
        keep.extend(layer)
    chosen = set(keep)
    i = n - 1
    while len(chosen) < cap and i >= 0:
        chosen.add(i)
        i -= 1
    return sorted(chosen)


class MultiObjectiveBO(BayesianOptimization):
    """Bayesian optimisation of several objectives: a GP per objective, exact EHVI x P(feasible)."""

    description = ("multi-objective Bayesian optimisation: a GP per objective, exact expected hypervolume "
                   "improvement x RF feasibility")
    multi_objective = True
    #: BayesianOptimization's options; each GP models the Gaussian copula of its metric by default (metrics
    #: such as energy and compile time span orders of magnitude with heavy tails)
    OPTIONS = MOBO_OPTIONS

    def __init__(self, name: Optional[str] = None, options: Any = None, **overrides: Any) -> None:
        """Configure as BayesianOptimization; the GPs keep one hyperparameter setting each (the
        averaged expected improvement of ``hyper_samples`` has no hypervolume counterpart here)."""
        super().__init__(name, options, **overrides)
        self.options = replace(self.options, hyper_samples=1, hyper_after=0)

    def bind(self, manipulator: Any, rng: Any, path: Optional[str] = None) -> None:
        given = self.options
        if given.initial_samples is None:    # d + 1, at most MAX_INITIAL_DESIGN
            self.options = replace(given, initial_samples=min(len(manipulator.names) + 1, MAX_INITIAL_DESIGN))
        try:
            super().bind(manipulator, rng, path)
        finally:
            self.options = given
        self._vectors: List[Tuple[float, ...]] = []     # oriented objective vectors of finite OK results
        self._vector_configs: List[Config] = []
        self._objectives: List[Tuple[FitState, Dict[Any, Any]]] = []   # per objective: fit state, hypers
        self._extreme_fits: List[Tuple[FitState, Dict[Any, Any]]] = []  # the same, for its extreme turns
        self._pending_configs: Dict[str, Config] = {}
        self._front_at = 0                              # OK results when the front last grew
        self._feasibility_at = -1
        self._feasibility_fit: Any = None
        self._fitted: Optional[Tuple[int, Any]] = None     # (OK vectors, _fit_objectives' result)
        self._extremes = ExtremeTurns(self._options.get("extreme_every", 0), self._options.get("extreme_patience", 0),
                                      self._options.get("extreme_streak", True))

    # ---- protocol -----------------------------------------------------------------------------
    def observe(self, feedback: Feedback) -> None:
        """Record a result (every technique's); OK results with a finite vector train the GPs."""
        fresh = feedback.key not in self._results
        super().observe(feedback)
        self._pending_configs.pop(feedback.key, None)
        vec = tuple(float(v) for v in (feedback.values or (feedback.value,)))
        usable = fresh and feedback.ok and feedback.key in self._results and all(math.isfinite(v) for v in vec) \
            and not (self._vectors and len(vec) != len(self._vectors[0]))   # another length: not modelled
        if fresh:
            best = np.min(self._vectors, axis=0) if self._vectors else None
            self._extremes.observed(feedback.key, vec if usable else None, best)
        if not usable:
            return
        if not any(all(a <= b for a, b in zip(p, vec)) for p in self._vectors):
            self._front_at = len(self._vectors) + 1
        self._vectors.append(vec)
        self._vector_configs.append(self._results[feedback.key][0])

    def desired_configuration(self) -> Optional[Config]:
        """The next configuration (see BayesianOptimization); remembers it while it is in flight."""
        cfg = super().desired_configuration()
        if cfg is not None:
            self._pending_configs[self.manipulator.hash_valid(cfg)] = cfg  # type: ignore[union-attr]
        return cfg

    def _stalled(self) -> int:
        """OK results since one last entered the observed Pareto front."""
        return len(self._vectors) - self._front_at

    # ---- model --------------------------------------------------------------------------------
    def _fit_objectives(self) -> Tuple[List[GaussianProcess], List[np.ndarray], np.ndarray, List[Config], np.ndarray]:
        """Fit one GP per objective on the training rows; returns (GPs, encoded training set,
        standardised targets of shape (rows, objectives), training configurations, their values).
        The last fit is reused while no OK result arrived since (proposals of a batch in flight)."""
        if self._fitted is not None and self._fitted[0] == len(self._vectors):
            return self._fitted[1]
        rows = training_rows(self._vectors, self.options.max_observations)
        configs = [self._vector_configs[i] for i in rows]
        raw = np.array([self._vectors[i] for i in rows], dtype=float)
        train = self.encoder.encode(configs)
        D2 = self.encoder.sqdists(train, train)
        while len(self._objectives) < raw.shape[1]:
            self._objectives.append((FitState(copula=self.options.copula_transform), {}))
        gps, ys = [], []
        self._n_ok = len(self._vectors)
        for j, (fs, hypers) in enumerate(self._objectives):
            self._fs, self._hypers = fs, hypers
            gp, y = self._fit_gp(D2, raw[:, j])
            gps.append(gp)
            ys.append(y)
        self._fitted = (len(self._vectors), (gps, train, np.column_stack(ys), configs, raw))
        return self._fitted[1]

    def _feasibility_model(self) -> Any:
        """The feasibility classifier, refitted only when results arrived since the last fit."""
        if self._feasibility_at != len(self._results):
            self._feasibility_fit = self._fit_feasibility()
            self._feasibility_at = len(self._results)
        return self._feasibility_fit

    def _bo_proposal(self) -> Optional[Config]:
        o = self.options
        gps, train, y, configs, raw = self._fit_objectives()
        on_front = non_dominated(y)
        front = y[on_front]
        extent = front.max(axis=0) - front.min(axis=0)
        spread = y.max(axis=0) - y.min(axis=0)
        margin = np.where(extent > 0, extent, np.where(spread > 0, spread, 1.0)) * REFERENCE_MARGIN
        reference = front.max(axis=0) + margin
        feas = self._feasibility_model()
        eps_f = o.max_feasibility_threshold * self.rng.randrange(EPS_STEPS) / (EPS_STEPS - 1)
        features = self.feasibility.features if self.feasibility is not None else None
        moves = self._options.get("extreme_moves", True) and not self.search.scored_whole
        aim = self._extremes.aim(y.shape[1], len(self.names) if moves else None)
        tail = self._options.get("metric_tail", "clamped")
        if aim is not None:
            e_gps, e_train, e_y = self._extreme_model(aim, gps, train, y, raw)
            units = None
            if self._options.get("extreme_units", "model") == "metric":
                units = MetricMap(e_y[:, aim], raw[:, aim], tail != "clamped", tail == "geometric")
            single, ends = extreme_acquisition(aim, e_gps, e_train, e_y, configs, MAX_FRONT_STARTS, self.encoder,
                                               feas, eps_f, features, units)
            cfg = self.search.run(single, self.rng, self.np_rng, self._excluded, ends,
                                  extra=self._candidates(ends, ends, self._extremes.radius_of(aim) if moves else None),
                                  random_pool=not moves) or self._draws.random()
            if cfg is not None:
                self._extremes.proposed(self.manipulator.hash_valid(cfg), aim)  # type: ignore[union-attr]
            return cfg
        metric = None
        if self._options.get("ehvi_units", "metric") == "metric":
            metric = MetricUnits(y, raw, self.np_rng, tail != "clamped",
                                 self._options.get("metric_ehvi", "monte_carlo") == "monte_carlo",
                                 self._options.get("metric_reference", "front") == "data", tail == "geometric")
        acq = HypervolumeAcquisition(self.encoder, gps, train, front, reference, feas, eps_f, features, metric)
        if self._pending_configs:   # Kriging believer: what is in flight counts at its predicted values
            believed, _ = acq.predict(self.encoder.encode(list(self._pending_configs.values())))
            acq.lower, acq.upper = box_decomposition(np.vstack([front, believed]), reference)
            if metric is not None:
                metric.set_front(np.vstack([raw[on_front], metric.to_metric(believed)]))
        starts = [configs[i] for i in on_front]
        self.rng.shuffle(starts)
        radius = 0
        if o.stall_after > 0 and self._stalled() >= o.stall_after:
            self._local_turn = (self._local_turn + 1) % max(o.global_every, 1)
            radius = o.local_radius if self._local_turn else 0
        extra = self._candidates(parents_by_layers(raw, configs), starts,
                                 START_RADIUS if self._options.get("front_moves", True) else None)
        if self._options.get("gap_moves", True):
            extra = with_gap_moves(extra, [configs[i] for i in on_front], y[on_front], self.names, self.rng,
                                   self.cot.is_feasible)
        cfg = self.search.run(acq, self.rng, self.np_rng, self._excluded, starts[:MAX_FRONT_STARTS], radius,
                              extra=extra)
        return cfg if cfg is not None else self._draws.random()

    def _extreme_model(self, aim: int, gps: List[GaussianProcess], train: List[np.ndarray], y: np.ndarray,
                       raw: np.ndarray) -> Tuple[List[GaussianProcess], List[np.ndarray], np.ndarray]:
        """The GPs, training set and targets of an extreme turn for objective ``aim``: the EHVI's
        (copula) GPs with ``extreme_copula``, else that objective's GP refitted with single-objective
        BO's transforms (the power transforms, chosen by marginal likelihood; its own hyperparameters
        and fit schedule).  The copula's ranks give the best value's neighbourhood no more room than
        any other, so its expected improvement over the best asks for a rank gained, not for how far
        a design would beat it: on HPVM2FPGA the copula's turns gained a few per cent of latency each."""
        if self._options.get("extreme_copula", True):
            return gps, train, y
        while len(self._extreme_fits) <= aim:
            self._extreme_fits.append((FitState(copula=False), {}))
        self._fs, self._hypers = self._extreme_fits[aim]
        gp, column = self._fit_gp(self.encoder.sqdists(train, train), raw[:, aim])
        gps, y = list(gps), y.copy()
        gps[aim], y[:, aim] = gp, column
        return gps, train, y

    def _recombinants(self, parents: Sequence[Config]) -> Optional[Any]:
        """The local search's extra candidates (:mod:`.recombine`): crossovers of ``parents``, drawn
        only when called (never on a space scored whole); None with ``recombine`` off."""
        if not self._options.get("recombine", True):
            return None
        return lambda: recombinants(parents, self.names, self.rng, self.cot.is_feasible)

    def _candidates(self, parents: Sequence[Config], centres: Sequence[Config],
                    radius: Optional[float]) -> Optional[Any]:
        """The local search's extra candidates: the recombinants of ``parents`` and, with a ``radius``,
        trust-region moves around ``centres`` (the first most often; :func:`.extremes.perturbations`,
        values from random draws of the space); drawn only when called; None when neither is on."""
        crossed = self._recombinants(parents)
        if radius is None:
            return crossed

        def extra() -> List[Config]:
            donors = self.cot.sample(self.rng, self.np_rng, DONORS)
            moves = perturbations(centres, donors, self.names, radius, self.rng, self.cot.is_feasible)
            return (list(crossed()) if crossed is not None else []) + moves
        return extra

    # ---- persistence --------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, Any]:
        """The last fitted GP hyperparameters of every objective and the extreme turns' position
        (results are replayed on resume)."""
        return {"objectives": [fs.to_state() for fs, _ in self._objectives], "extremes": self._extremes.to_state()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s hyperparameters as warm starts (called after ``bind``)."""
        for part in state.get("objectives") or []:
            fs = FitState(copula=self.options.copula_transform)
            key = fs.load_state(part)
            self._objectives.append((fs, {} if key is None else {key: fs.hyper}))
        self._extremes.load_state(state.get("extremes") or {})
