"""The BayesianOptimization technique (BaCO-style GP + RF feasibility + chain of trees).

Call pattern (see :mod:`tunerlib.techniques.base`): ``bind`` builds the distance encoders, the chain
of trees and the neighbour generator; ``observe`` records every result of the run, whichever
technique asked for it (inside a bandit BO learns from all arms); ``propose`` returns

1. the initial design: ``initial_samples`` random feasible configurations (by default ``d + 1``; with
   ``design_share`` a share of a known test limit: :mod:`.budget`), each
   the farthest of ``design_candidates`` uniform draws from those so far (:mod:`.design`), all
   proposed up front; it is cut short when other techniques have already supplied that many OK
   results.  With user priors the prior's mode comes first and the rest stays uniform, or near the
   prior while no result inside its high region is measured or pending (:class:`.prior_use.PriorDesign`);
2. afterwards one BO proposal per call.  Whenever new results have arrived the GP is refitted on
   the OK results (ERROR, TIMEOUT and INFEASIBLE results train the feasibility classifier instead
   and never become the incumbent): a full multi-start hyperparameter fit on the first fit and
   every ``hp_full_every`` fits, a warm fit from the previous optimum otherwise.  The objective is
   standardised after a transform; with ``log_transform=None`` full fits pick the Box-Cox exponent
   (``power_transforms``, default the log or the identity) by marginal likelihood (with the
   transform's Jacobian) when all values are positive -- the log helps runtime-like
   (multiplicative) objectives and badly hurts additive ones whose optimum is near zero.
   ``copula_transform`` replaces them by the normal quantiles of the values' ranks (:mod:`.transforms`).
   ``copula_every`` keeps both surrogates, each with its own fit (:mod:`.fitstate`), and gives every
   that-many-th BO proposal to the copula one: by default every other proposal on finite spaces and
   none where a parameter is continuous (there the ranks lose the scale that refines a smooth
   objective near its optimum).
   Then EI x P(feasible) is maximised (:mod:`.acquisition`); with ``hyper_samples`` above 1 the EI is
   averaged over several hyperparameter settings weighted by their posterior (:mod:`.marginal`), from
   the first fit or, with ``hyper_after``, once the OK results number that many initial designs.
   Results still in flight are excluded from the candidates (no constant liar), so repeated
   calls without new data propose the next-best distinct configurations.

Additions to BaCO's recipe, each an option (ordinal Hamming channels, failure imputation, the
feasibility forest's leaf size, trust-region steps, ridge channels, leave-one-out surrogate choice,
integrated acquisition), are described, with the measurements behind them, in :mod:`.options`.

While fewer than two OK results exist and results are pending, ``propose`` returns None; with
nothing pending it keeps sampling: at random until the feasibility classifier can be trained, then
the most probably feasible of random samples and neighbours of the OK results (:meth:`.design.NewDraws.guided`).
It returns None as well when every feasible configuration of a finite space has been evaluated or is
in flight.  Model failures (no positive-definite covariance, unexpected numerical errors) fall back
to a random feasible configuration, so a run never ends with an exception from this technique.

Options (:class:`.options.BOOptions`, dataclass fields with defaults) are reported by :meth:`option_values`.
"""
from __future__ import annotations

import logging
import math
import random
from dataclasses import asdict, fields
from typing import Any, Dict, Hashable, List, Optional, Set, Tuple

import numpy as np

from ...parameters import ConfigurationError, ConfigurationManipulator, FeasibleSpace
from ..base import Config, Feedback, Technique, TechniqueError
from ..blas import single_thread_blas
from ..options import configure
from .acquisition import LocalSearch
from .budget import design_size, designs_reached
from .design import NewDraws, SpreadDesign
from .restart import StallRestart
from .distances import ConfigKey, SpaceEncoder
from .feasibility import FeasibilityModel
from .fitstate import FitState, fit_gp, surrogate_turn
from .gp import GaussianProcess, GPFitError, Hyper
from .neighbours import NeighbourGenerator
from .loo import loo_choice
from .marginal import Weighted, distinct_optima, make_acquisition, weighted_models
from .options import BO_OPTIONS, BOOptions
from .prior_use import PriorDesign, mode_configuration, pibo_exponent, pibo_weight
from .transforms import TransformKey, exponents
from .window import TrainingWindow

log = logging.getLogger(__name__)

#: feasibility thresholds eps_f drawn uniformly each iteration (BaCO §4.2)
EPS_STEPS = 11
#: ``copula_every=None`` on finite spaces: every other BO proposal from the copula surrogate
AUTO_COPULA_EVERY = 2


class BayesianOptimization(Technique):
    """Gaussian-process Bayesian optimisation for mixed, permutation and constrained spaces.

    Every parameter kind is supported through its distance (see :mod:`.distances`); selectors
    have no natural neighbour move and are re-drawn at random in the local search.
    """

    description = "Bayesian optimisation: Matérn GP, EI x RF feasibility, chain of trees (BaCO)"
    OPTIONS = BO_OPTIONS
    NAMED_BY_OPTIONS = True
    #: every option's value as :func:`~..options.configure` set it (a subclass reads its own options here)
    _options: Dict[str, Any]

    def __init__(self, name: Optional[str] = None, options: Optional[BOOptions] = None, **overrides: Any) -> None:
        super().__init__(name)
        given = {**(asdict(options) if options is not None else {}), **overrides}
        values = configure(self, given, attributes=False)   # a subclass's own options stay in self._options
        self.options = BOOptions(**{f.name: values[f.name] for f in fields(BOOptions) if f.name in values})
        exponents(self.options.power_transforms)
        self._hypers: Dict[TransformKey, Hyper] = {}   # last fit per transform (warm starts)
        self._fit_states = [FitState()]                 # one per surrogate, built by bind
        self._fs = self._fit_states[0]                 # the surrogate of the current proposal
        self._every = 0                                # copula_every as resolved for the space

    # ---- setup --------------------------------------------------------------------------------
    def check_space(self, manipulator: ConfigurationManipulator) -> None:
        """Build the encoders (raises TechniqueError for a parameter kind without a distance)."""
        o = self.options
        try:
            self.encoder = SpaceEncoder(manipulator, o.permutation_distance, o.permutation_distances,
                                       o.ordinal_hamming, o.ridge_channels)
        except ValueError as exc:
            raise TechniqueError(str(exc)) from None

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random, path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        o = self.options
        self.np_rng = np.random.default_rng(rng.getrandbits(64))
        self.names = manipulator.names
        self.cot = FeasibleSpace(manipulator, o.max_leaves, o.enumeration_nodes())
        self.key = ConfigKey(manipulator)
        self.search = LocalSearch(self.key, self.cot, NeighbourGenerator(manipulator, self.cot,
                                                                           o.neighbours_per_parameter),
                                  o.n_random_samples, o.n_starts, o.max_local_steps,
                                  o.exhaustive_acquisition)
        self.feasibility = FeasibilityModel(manipulator, o.feasibility_min_leaf) if o.feasibility_model else None
        self.n_initial = design_size(len(self.names), self.context, o.design_share, o.design_cap, o.initial_samples)
        self._results: Dict[str, tuple] = {}         # hash -> (config, value, state)
        self._hashes_pending: Dict[str, Hashable] = {}
        self._excluded: Set[Hashable] = set()        # config keys evaluated or pending
        self._initial_made = 0
        self._design = PriorDesign(manipulator.prior)  # the mode first, then uniform or local draws
        self._spread = SpreadDesign(self.encoder, o.design_candidates)  # where the uniform draws go
        self._draws = NewDraws(self.cot, self.key, self._excluded, self._spread, self.rng, self.np_rng)
        self._restart = StallRestart(o.restart_after * self.n_initial, self.n_initial, o.restart_gain)
        self._every = o.copula_every if o.copula_every is not None else (
            AUTO_COPULA_EVERY if manipulator.is_finite() else 0)
        self._fit_states = [FitState(copula=o.copula_transform or self._every == 1)]
        if self._every > 1 and not o.copula_transform:
            self._fit_states.append(FitState(copula=True))
        self._fs = self._fit_states[0]
        self._turns = 0                              # BO proposals so far (picks the surrogate)
        self._feasible_seen: Set[Hashable] = set()   # keys of evaluated/pending feasible configs
        self.fallbacks = 0                           # proposals made at random after a model failure
        self._n_ok = 0                               # OK results (before the training-set cap)
        self._window = TrainingWindow(o.max_observations, o.failure_imputation, o.stall_gain)
        self._local_turn = 0                         # cycles trust-region / global steps when stalled

    # ---- protocol -----------------------------------------------------------------------------
    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        self._hashes_pending.pop(feedback.key, None)
        try:
            first = feedback.key not in self._results
            cfg = self.manipulator.normalize(feedback.config) if first else None  # type: ignore[union-attr]
        except (ConfigurationError, ValueError):
            cfg = None
        self._design.observed(feedback.key, cfg, cfg is not None and not (feedback.unmeasured and not feedback.ok))
        if cfg is None:
            return
        ckey = self.key(cfg)
        self._excluded.add(ckey)
        self._spread.note(ckey, cfg)
        if self.cot.is_feasible(cfg):
            self._feasible_seen.add(ckey)
        if feedback.unmeasured and not feedback.ok:   # a gap in a recording: never proposed again, but
            return                                    # no evidence for the feasibility model either
        self._results[feedback.key] = (cfg, feedback.value, feedback.state)
        self._window.add(cfg, feedback.value, feedback.state)
        self._restart.add(feedback.value, feedback.state)

    def desired_configuration(self) -> Optional[Config]:
        try:
            cfg = self._next()
        except ConfigurationError as exc:  # unsatisfiable known constraints
            log.warning("BayesianOptimization: %s", exc)
            return None
        if cfg is not None:
            key = self.manipulator.hash_valid(cfg)  # type: ignore[union-attr]
            if key in self._results or key in self._hashes_pending:
                return None
            ckey = self.key(cfg)
            self._design.proposed(key, cfg)
            self._hashes_pending[key] = ckey
            self._excluded.add(ckey)
            self._spread.note(ckey, cfg)
            self._feasible_seen.add(ckey)
        return cfg

    def _next(self) -> Optional[Config]:
        self._restart.begin()
        if self._exhausted():
            return None
        n_ok = self._window.ok_states
        design = self._initial_made < self.n_initial and n_ok < self.n_initial
        draw = self._design.next_draw() if design or self._design.mode_due else ""
        if draw == "mode":
            mode = mode_configuration(self.manipulator, self.cot, self.rng, self.np_rng)
            if mode is not None and self.key(mode) not in self._excluded:
                self._initial_made += 1
                return mode
            draw = self._design.next_draw() if design else ""
        if draw:
            self._initial_made += 1
            return self._draws.design(draw)
        if self._restart.take():
            return self._draws.random()
        if n_ok < 2:
            return None if self._hashes_pending else self._guided_new()
        try:
            with single_thread_blas():
                return self._bo_proposal()
        except (GPFitError, np.linalg.LinAlgError, FloatingPointError, ValueError) as exc:
            self.fallbacks += 1
            log.debug("BayesianOptimization: model failed (%s); proposing a random configuration", exc)
            return self._draws.random()

    def _exhausted(self) -> bool:
        size = self.cot.size()
        if not (self.cot.exact_size and math.isfinite(size)):
            return False
        return len(self._feasible_seen) >= size

    def _guided_new(self) -> Optional[Config]:
        """A proposal after the initial design while fewer than two results are OK (no GP yet): the most
        probably feasible random sample or neighbour of an OK result (:meth:`.design.NewDraws.guided`), or random."""
        feas = self._fit_feasibility()
        if feas is None:
            return self._draws.random()
        ok = (cfg for cfg, _, state in self._results.values() if state == "ok")
        return self._draws.guided(feas.probability, ok, self.search.neighbours, self.options.n_random_samples)

    # ---- model ----------------------------------------------------------------------------------
    def _fit(self) -> tuple:
        """Fit the GP on OK results (and the classifier on all results) when new data arrived."""
        fs = self._fs
        if fs.model is not None and fs.model_at == len(self._results):
            return fs.model
        ok = self._training_set()
        self.encoder.ridges.active = designs_reached(self._n_ok, self.options.ridge_after, self.n_initial)
        configs = [c for c, _ in ok]
        train = self.encoder.encode(configs)
        gp, y = self._fit_gp(self.encoder.sqdists(train, train), np.array([v for _, v in ok], dtype=float))
        best_i = int(np.argmin(y))
        fs.model = (gp, train, float(y[best_i]), configs[best_i], self._fit_feasibility(), self._hyper_mixture(gp))
        fs.model_at = len(self._results)
        return fs.model

    def _hyper_mixture(self, gp: GaussianProcess) -> List[Weighted]:
        """The weighted GPs the acquisition averages over (:mod:`.marginal`): ``gp`` alone with
        ``hyper_samples`` 1 or while the OK results number fewer than ``hyper_after`` initial designs
        (no settings are kept then, so the fits are those of ``hyper_samples`` 1), else also the
        surrogate's other kept optima, renewed after each search."""
        k = self.options.hyper_samples
        if k <= 1 or not designs_reached(self._n_ok, self.options.hyper_after, self.n_initial):
            return [(gp, 0.0)]
        fs = self._fs
        if gp.optima:                       # a hyperparameter search, not a refactorisation
            fs.alternatives, fs.alternatives_for = distinct_optima(gp.optima, k), fs.transform
        return weighted_models(gp, fs.alternatives)

    def _fit_gp(self, D2: np.ndarray, raw: np.ndarray) -> tuple:
        """Fit the current surrogate's GP to the transformed targets (:func:`.fitstate.fit_gp`); returns
        ``(gp, standardised targets)``."""
        return fit_gp(self._fs, self._hypers, D2, raw, self.options, self._n_ok, self.np_rng, len(self.encoder.ridges))

    def _fit_feasibility(self) -> Optional[FeasibilityModel]:
        """Train the classifier when any result is infeasible or failed; None otherwise."""
        if self.feasibility is None or not self._window.failed:
            return None
        configs, labels = self._window.feasibility_set()
        if self.feasibility.fit(configs, labels, self.rng.getrandbits(32)):
            return self.feasibility
        return None

    def _training_set(self) -> List[tuple]:
        """OK results as (config, value) in arrival order, capped at ``max_observations``."""
        self._n_ok = self._window.size()
        return self._window.training_set()

    def _bo_proposal(self) -> Optional[Config]:
        o = self.options
        self._turns += 1
        turn = min(surrogate_turn(self._turns, self._every), len(self._fit_states) - 1)
        loo = self._window.ok_states <= o.surrogate_loo * self.n_initial and len(self._fit_states) > 1
        self._fs = self._fit_states[loo_choice(turn, len(self._fit_states), self._fitted_gp) if loo else turn]
        _, train, y_best, incumbent, feas, models = self._fit()
        eps = o.max_feasibility_threshold * self.rng.randrange(EPS_STEPS) / (EPS_STEPS - 1)
        acq = make_acquisition(self.encoder, models, train, y_best, feas, eps,
                               self.feasibility.features if self.feasibility is not None else None)
        radius = 0
        if o.stall_after > 0 and self._stalled() >= o.stall_after:
            self._local_turn = (self._local_turn + 1) % max(o.global_every, 1)
            radius = o.local_radius if self._local_turn else 0
        if self.manipulator.prior and o.prior_beta > 0:  # type: ignore[union-attr]
            weight = pibo_weight(self.manipulator.prior, *self._prior_evidence())  # type: ignore[union-attr]
            acq.weigh_by_prior(weight, self.prior_exponent(radius > 0))
        centres = self._window.best_configs(o.local_centres) if radius and o.local_centres > 1 else ()
        cfg = self.search.run(acq, self.rng, self.np_rng, self._excluded, [incumbent], radius, centres=centres)
        return cfg if cfg is not None else self._draws.random()

    def _fitted_gp(self, index: int) -> GaussianProcess:
        """Surrogate ``index``'s GP on the current results (fitted if stale); called by :func:`.loo.loo_choice`."""
        self._fs = self._fit_states[index]
        return self._fit()[0]

    def _prior_evidence(self) -> Tuple[Any, List[float]]:
        """(the prior's log weights, the values: ``inf`` for failures) of every result so far."""
        results = list(self._results.values())
        weights = self.manipulator.prior.log_weights([c for c, _, _ in results])  # type: ignore[union-attr]
        values = [v if state == "ok" and math.isfinite(v) else math.inf for _, v, state in results]
        return weights, values

    def prior_exponent(self, trust_region: bool = False) -> float:
        """πBO's exponent of the prior in the acquisition (:func:`.prior_use.pibo_exponent`: decays
        with the results, falls where they contradict the prior, 0 for a ``trust_region`` step of a
        stalled search unless they confirm it); called for each BO proposal."""
        return pibo_exponent(self.options.prior_beta, *self._prior_evidence(), trust_region)

    def _stalled(self) -> int:
        """OK results since the last improvement of the best value."""
        return self._window.stalled

    # ---- persistence ----------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, Any]:
        """The initial design's size and the last fitted GP hyperparameters of each surrogate (results
        are replayed on resume)."""
        state = self._fit_states[0].to_state()
        if state and len(self._fit_states) > 1:
            state.update(copula=self._fit_states[1].to_state(), turns=self._turns)
        return {**state, "initial_samples": self.n_initial}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s design size (a resumed run may be given another test limit) and
        hyperparameters as warm starts (called after ``bind``)."""
        if state.get("initial_samples"):
            self.n_initial = int(state["initial_samples"])
            self._restart = StallRestart(self.options.restart_after * self.n_initial, self.n_initial,
                                         self.options.restart_gain)
        for fs, part in zip(self._fit_states, (state, state.get("copula") or {})):
            key = fs.load_state(part)
            if key is not None:
                self._hypers[key] = fs.hyper  # type: ignore[assignment]
        self._turns = int(state.get("turns", 0))
