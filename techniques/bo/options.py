"""BayesianOptimization's options (:class:`BOOptions`) and their schema (:data:`BO_OPTIONS`), and
MultiObjectiveBO's schema (:data:`MOBO_OPTIONS`).

The fields of :class:`BOOptions` are the options of ``BayesianOptimization`` (and, with its own additions,
``MultiObjectiveBO``) with their defaults; :data:`BO_OPTIONS` adds the legal and random ranges that
``BayesianOptimization;option,value`` names and random configurations of the technique are checked against.
:data:`MOBO_OPTIONS` is that schema with MultiObjectiveBO's defaults and its own additions.

Additions to BaCO's recipe, each an option (measured on the recorded Kernel Tuner spaces,
``tools/compare.py``; they mattered where the optimum is an isolated configuration):

* ``ordinal_hamming``: numeric parameters with 3-64 values get a second, Hamming distance channel
  with its own lengthscale, so the GP can learn that one value (a block size of 32, say) is good
  while its neighbours are not -- common for hardware parameters;
* ``failure_imputation`` (off by default): failed configurations (ERROR/INFEASIBLE/TIMEOUT) also
  enter the GP with the worst OK value (they never become the incumbent).  It changed little on the
  Kernel Tuner spaces and hurt badly where the optimum sits on the feasibility boundary (the
  HPVM2FPGA model: median best/expert at 100 evaluations 2.8 with it, 1.09 without, 3 seeds);
* ``feasibility_min_leaf`` (default 1, BaCO's fully grown trees): with 3, one failed result no longer
  drives P(feasible) of its region to about 0, which helped on perturbed RISE tables whose missing rows
  counted as failures and cost where the optimum lies on a real feasibility boundary (HPVM2FPGA); the
  docs/benchmarks/bo.md gives both sets of figures.  Results marked unmeasured (``Feedback.unmeasured``: a replayed
  table has no row) never train the classifier; they only exclude their configuration;
* trust-region steps (``stall_after``, ``local_radius``): once ``stall_after`` OK results have not
  improved the best by ``stall_gain`` of it, all but every ``global_every``-th proposal maximise it only over
  configurations within ``local_radius`` changed parameters of the best (on spaces scored whole;
  on larger spaces the local search from the incumbent plays this part);
* ``ridge_channels`` (off by default): distance channels on the sums or differences of pairs of numeric
  parameters' unit values (products and ratios of power-of-two sizes), each with its own lengthscale, so the
  GP can follow a ridge along a diagonal (:mod:`.ridges`); ``ridge_after`` holds them back for the first fits;
* ``surrogate_loo`` (off by default): while the OK results number at most that many initial designs, each BO
  proposal uses the surrogate (power transforms or copula) whose GP ranks them best by leave-one-out prediction
  (:mod:`.loo`);
* ``hyper_samples`` (4 by default): the expected improvement averaged over that many GP hyperparameter settings
  weighted by their posterior (:mod:`.marginal`); ``hyper_after`` (4 by default) holds the average back until the
  OK results number that many initial designs, so short runs propose as with one setting.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field, replace
from typing import Dict, Optional

from ...parameters.trees import MAX_NODES
from ..options import Option, schema_from_dataclass, validate
from .distances import PERMUTATION_DISTANCES
from .ridges import RIDGE_KINDS
from .transforms import exponents


#: nodes of a group's enumeration per second of the deprecated ``max_enumeration_seconds``: the rate
#: at which :data:`~tunerlib.parameters.trees.MAX_NODES` takes about the former default of 10 s
NODES_PER_SECOND = MAX_NODES // 10


@dataclass
class BOOptions:
    """Options of :class:`.technique.BayesianOptimization` (independent of the seed)."""

    #: random feasible configurations before the first model (None: number of parameters + 1, or sized by
    #: ``design_share`` and ``design_cap``)
    initial_samples: Optional[int] = None
    #: with ``initial_samples`` None and a known test limit (``--test-limit``), the initial design is this share
    #: of the limit, at least the number of parameters + 1 (``d + 1``) and at most ``design_cap`` x (d + 1);
    #: without a known limit, or with 0, it is d + 1 (:mod:`.budget`; docs/benchmarks/default-technique.md)
    design_share: float = 0.0
    #: the most initial design points ``design_share`` gives, in multiples of d + 1
    design_cap: float = 2.0
    #: each design point is the farthest of this many random candidates from the configurations so far (:mod:`.design`)
    design_candidates: int = 1
    #: random feasible configurations scored per acquisition optimisation
    n_random_samples: int = 2000
    #: best random samples used as local-search starts (the incumbent is added)
    n_starts: int = 10
    max_local_steps: int = 10  #: local-search steps per start
    #: finite spaces with at most this many feasible configurations have the acquisition scored on
    #: every one of them instead of sampled and locally searched (0 disables)
    exhaustive_acquisition: int = 50_000
    #: neighbours generated per parameter and step
    neighbours_per_parameter: int = 8
    #: random hyperparameter settings scored before refinement (full fits)
    hp_samples: int = 30
    #: hyperparameter settings refined with L-BFGS-B in a full fit
    hp_starts: int = 10
    #: settings refined in a warm fit (the previous optimum and the best random settings)
    hp_warm_starts: int = 2
    #: a full multi-start fit every this many model fits (the first fit is always full)
    hp_full_every: int = 10
    #: penalise GP noise variances above about 2 % of the targets' variance (:data:`.gp.NOISE_PRIOR`)
    noise_prior: bool = False
    #: hyperparameter settings the expected improvement is averaged over, weighted by their marginal
    #: posterior: the best distinct local optima of each hyperparameter search (:mod:`.marginal`; 1: the
    #: most probable setting alone; 4 with ``hyper_after`` 4 measured in docs/benchmarks/default-technique.md)
    hyper_samples: int = 4
    #: with ``hyper_samples`` above 1, the averaged acquisition is used once the OK results number at least this
    #: many initial designs; before, BO proposes exactly as with ``hyper_samples`` 1 (0: from the first fit)
    hyper_after: int = 4
    #: while the OK results number at most this many initial designs, each BO proposal uses the surrogate whose fit
    #: ranks them best by leave-one-out prediction instead of the ``copula_every`` turn (:mod:`.loo`; 0: never)
    surrogate_loo: int = 0
    hp_maxiter: int = 60  #: L-BFGS-B iterations per start
    #: the hyperparameters are searched again (warm or full fit) only once the OK results have grown
    #: by this fraction since the last search (at least one new result); in between, the GP keeps
    #: its hyperparameters and only refactorises on the new data (0: search after every result)
    hp_refit_growth: float = 0.05
    #: log-transform the objective: None = chosen by marginal likelihood when every OK value is
    #: > 0 (identity otherwise); True applies only when every value is > 0
    log_transform: Optional[bool] = None
    #: Box-Cox exponents, comma-separated, compared by marginal likelihood when ``log_transform`` is
    #: None and every OK value is > 0 (1: identity, 0: log, -1: the reciprocal, i.e. throughput)
    power_transforms: str = "0,1"
    #: Gaussian-copula output warping: train the GP on the normal quantiles of the values' ranks
    #: instead of (log-)values, so that a few very slow configurations do not set the GP's scale
    #: (overrides ``log_transform``)
    copula_transform: bool = False
    #: a portfolio of two surrogates: every this-many-th BO proposal uses a GP trained on the copula
    #: of the values, the others one on the power transforms, each with its own hyperparameters
    #: (0: the power transforms only; 1: the copula only, as ``copula_transform``; None: 2 on finite
    #: spaces, 0 where a parameter is continuous -- ranks lose the scale a smooth objective is
    #: refined by near its optimum)
    copula_every: Optional[int] = None
    #: most OK results the GP is trained on (the best half and the most recent others beyond it)
    max_observations: int = 300
    #: add a Hamming (equal / not equal) distance channel for every numeric parameter with 3-64
    #: values beside its smooth distance, so the GP can model irregular per-value effects
    ordinal_hamming: bool = True
    #: distance channels on pairs of numeric parameters with 3 or more values, each with its own lengthscale:
    #: "sum" (products of log-scaled values), "difference" (ratios), "both" or "none" (:mod:`.ridges`)
    ridge_channels: str = "none"
    #: the ``ridge_channels`` join the kernel once the OK results number this many initial designs (0: from the first fit)
    ridge_after: int = 0
    #: d + 1 random draws after this many designs' worth of results without a gain (0: never; :mod:`.restart`)
    restart_after: int = 0
    restart_gain: float = 0.01  #: the relative gain of the best that ends a stall for ``restart_after``
    #: trust-region steps: once this many OK results have not improved the best by ``stall_gain``, all but
    #: every ``global_every``-th proposal maximise the acquisition only over configurations that
    #: differ from the best in at most ``local_radius`` parameters (small finite spaces; 0 disables)
    stall_after: int = 5
    #: an improvement of the best by less than this share of it leaves the stall count running (0: any counts)
    stall_gain: float = 0.01
    local_radius: int = 2  #: radius (number of differing parameters) of the trust-region steps
    #: trust-region steps search near each of the best this many results (1: the best alone; :mod:`.window`)
    local_centres: int = 1
    global_every: int = 3  #: while stalled, every this-many-th proposal is global, the others trust-region steps
    #: default permutation distance: "spearman", "kendall" or "hamming"
    permutation_distance: str = "spearman"
    #: per-parameter override of the permutation distance {name: kind}
    permutation_distances: Dict[str, str] = field(default_factory=dict)
    #: random-forest feasibility model for hidden constraints (errors/infeasible results)
    feasibility_model: bool = True
    #: fewest results in a leaf of the feasibility forest's trees (1: fully grown trees, BaCO's)
    feasibility_min_leaf: int = 1
    #: also train the GP on failed configurations, imputed with the worst OK value
    failure_imputation: bool = False
    #: eps_f is drawn from {0, max/10, ..., max} each iteration
    max_feasibility_threshold: float = 0.1
    #: πBO: with user priors on the space, the acquisition is multiplied by the prior's weight (capped
    #: at the uniform one once results confirm it) ** (prior_beta / n x agreement) after n results: it
    #: steers early proposals, fades with data, stops where results contradict it and, unless they confirm it, on
    #: trust-region steps (:mod:`.prior_use`; 0: ignore the priors in the acquisition; random draws still use them)
    prior_beta: float = 10.0
    #: chain of trees: leaves per group before falling back to rejection sampling
    max_leaves: int = 1_000_000
    #: chain of trees: nodes (values tried at any depth) one group's enumeration visits before falling back
    #: to rejection sampling; counted, not timed, so that the choice depends on the space, not the machine
    max_enumeration_nodes: int = MAX_NODES
    #: deprecated (a time bound made suggestions depend on the machine's speed): read as
    #: ``max_enumeration_nodes`` = this many seconds x NODES_PER_SECOND, with a DeprecationWarning
    max_enumeration_seconds: Optional[float] = None

    def __post_init__(self) -> None:
        if self.max_enumeration_seconds is not None:
            warnings.warn("BayesianOptimization option max_enumeration_seconds is deprecated: the enumeration "
                          "is bounded by visited nodes; use max_enumeration_nodes (read here as "
                          f"{self.enumeration_nodes()} nodes)", DeprecationWarning, stacklevel=3)

    def enumeration_nodes(self) -> int:
        """The chain of trees' bound on one group's visited nodes: ``max_enumeration_nodes``, or the
        deprecated ``max_enumeration_seconds`` converted at :data:`NODES_PER_SECOND` when it is given;
        called when the technique is bound to its space."""
        if self.max_enumeration_seconds is None:
            return self.max_enumeration_nodes
        return max(1, round(self.max_enumeration_seconds * NODES_PER_SECOND))

    def check(self) -> None:
        """Raise TechniqueError naming a bad option value (checked against :data:`BO_OPTIONS`)."""
        validate(BO_OPTIONS, asdict(self), "BayesianOptimization")
        exponents(self.power_transforms)


#: the options as the one technique option schema (:mod:`..options`): types and defaults from the
#: fields of :class:`BOOptions`, legal and random ranges here
BO_OPTIONS = schema_from_dataclass(BOOptions, {
    "initial_samples": dict(lo=1), "design_share": dict(lo=0.0, hi=1.0, random_hi=0.3),
    "design_cap": dict(lo=1.0, hi=100.0, random_lo=1.0, random_hi=4.0), "design_candidates": dict(lo=1, random_hi=50),
    "n_random_samples": dict(lo=1, random_lo=200, random_hi=5000),
    "n_starts": dict(lo=1, random_lo=1, random_hi=20), "max_local_steps": dict(lo=0),
    "exhaustive_acquisition": dict(lo=0), "neighbours_per_parameter": dict(lo=1), "hp_samples": dict(lo=1),
    "hp_starts": dict(lo=1), "hp_warm_starts": dict(lo=0), "hp_full_every": dict(lo=1), "hp_maxiter": dict(lo=1),
    "hp_refit_growth": dict(lo=0.0, hi=10.0, random_lo=0.0, random_hi=0.2), "max_observations": dict(lo=1),
    "stall_after": dict(lo=0, random_lo=0, random_hi=10), "local_radius": dict(lo=1, random_lo=1, random_hi=4),
    "local_centres": dict(lo=1, random_lo=1, random_hi=5),
    "global_every": dict(lo=1), "restart_after": dict(lo=0, random_hi=4), "restart_gain": dict(lo=0.0, hi=1.0),
    "stall_gain": dict(lo=0.0, hi=1.0, random_hi=0.02), "permutation_distance": dict(choices=PERMUTATION_DISTANCES),
    "ridge_channels": dict(choices=RIDGE_KINDS), "ridge_after": dict(lo=0, random_hi=4),
    "permutation_distances": dict(choices=PERMUTATION_DISTANCES),
    "max_feasibility_threshold": dict(lo=0.0, hi=1.0, random_lo=0.0, random_hi=0.3), "max_leaves": dict(lo=1),
    "max_enumeration_nodes": dict(lo=1),
    "max_enumeration_seconds": dict(lo=0.0, doc=f"deprecated: read as {NODES_PER_SECOND:,} max_enumeration_nodes per second"),
    "prior_beta": dict(lo=0.0),
    "feasibility_min_leaf": dict(lo=1, random_lo=1, random_hi=5), "copula_every": dict(lo=0, random_hi=4),
    "surrogate_loo": dict(lo=0, random_hi=8), "hyper_samples": dict(lo=1, random_hi=8),
    "hyper_after": dict(lo=0, random_hi=8)})

#: the initial design's size when ``initial_samples`` is not set: d + 1 up to this many (on 40
#: parameters, 41 of a budget of 100 evaluations would go to random designs)
MAX_INITIAL_DESIGN = 20
INITIAL_DOC = (f"random feasible configurations before the first model (None: number of parameters + 1, "
               f"at most {MAX_INITIAL_DESIGN})")
#: BayesianOptimization's options that MultiObjectiveBO's own acquisition does not use (so naming one is an error)
BO_ONLY_OPTIONS = frozenset({"hyper_samples", "hyper_after"})
#: MultiObjectiveBO's options: BayesianOptimization's but :data:`BO_ONLY_OPTIONS`, each GP modelling the Gaussian
#: copula of its metric by default (metrics such as energy and compile time span orders of magnitude with heavy
#: tails), and its own
MOBO_OPTIONS = tuple(replace(o, default=True) if o.name == "copula_transform" else
                     replace(o, doc=INITIAL_DOC) if o.name == "initial_samples" else o for o in BO_OPTIONS
                     if o.name not in BO_ONLY_OPTIONS) + (
    Option("ehvi_units", str, "metric", choices=("metric", "model"),
           doc="the units the expected hypervolume improvement is computed in: 'model' (the GPs' "
               "standardised units) or 'metric' (the objectives' own, reference 1.1 x the observed "
               "nadir); both exact (Monte Carlo for 'metric' with many objectives)"),
    Option("metric_tail", str, "clamped", choices=("clamped", "linear", "geometric"),
           doc="with ehvi_units 'metric': below the best value seen, the map from the GP's units to the "
               "metric stays at the best value ('clamped') or continues linearly ('linear', so a "
               "prediction beating the front's extreme counts as extending it) or, for a positive "
               "metric, by a constant factor per unit ('geometric')"),
    Option("metric_ehvi", str, "monte_carlo", choices=("exact", "monte_carlo"),
           doc="with ehvi_units 'metric': the expected improvement estimated from 64 posterior samples "
               "per candidate ('monte_carlo') or integrated exactly ('exact'; Monte Carlo anyway with "
               "many objectives)"),
    Option("extreme_every", int, 4, lo=0, random_hi=6,
           doc="every this-many-th BO proposal maximises the expected improvement of one objective "
               "alone, the objectives in turn, to extend the front's extremes (0: never)"),
    Option("extreme_patience", int, 2, lo=0, random_hi=5,
           doc="an objective whose last this-many extreme proposals in a row did not improve its best "
               "value gets no more of them (with extreme_moves, once its radius is down to one "
               "parameter; 0: no limit)"),
    Option("metric_reference", str, "front", choices=("front", "data"),
           doc="with ehvi_units 'metric': the reference point is 1.1 x the nadir of the observed front "
               "('front') or of every OK result ('data'; matters with metric_tail 'linear')"),
    Option("extreme_units", str, "model", choices=("model", "metric"),
           doc="an extreme turn maximises the expected improvement of its objective in the GP's units "
               "('model') or in the metric's own units through metric_tail's map ('metric': how far a "
               "design is expected to beat the best value, not a rank gained)"),
    Option("extreme_copula", bool, True,
           doc="extreme turns use the objective's copula GP (true) or a GP with single-objective BO's "
               "transforms (false)"),
    Option("recombine", bool, True,
           doc="on spaces too large to be scored whole, crossovers of good configurations (the best "
               "non-dominated layers; on an extreme turn, the best in that objective) join the "
               "acquisition's candidates"),
    Option("extreme_moves", bool, True,
           doc="on spaces too large to be scored whole, an extreme turn's candidates include moves that "
               "change several parameters at once around the configurations best in its objective, up to "
               "a radius that doubles after a gain and halves after a miss"),
    Option("extreme_streak", bool, True,
           doc="with extreme_moves, on spaces too large to be scored whole, an extreme proposal that "
               "improved its objective earns that objective the next proposal too"),
    Option("front_moves", bool, True,
           doc="on spaces too large to be scored whole, the hypervolume proposals' candidates include "
               "moves that change up to a quarter of the parameters at once around the front's members"),
    Option("gap_moves", bool, True,
           doc="on spaces too large to be scored whole, the hypervolume proposals' candidates include "
               "moves from a front member towards its neighbour on the front, most across the largest "
               "gaps"),)
