"""StructuralSurrogate: learn an additive model over structural features, search the model, measure.

Each suggestion (after a few random configurations) either

* asks the **model**: draw a Thompson sample of the feature weights of
  :class:`~.model.SparseBayesLinear` (fitted to every finite result of the run, whoever requested it),
  then minimise the sampled model from the incumbent — permutations by 2-opt / or-opt on the learned
  neighbour costs (insertion and swap moves when precedence features are on), categorical and numeric
  parameters by their best option / unit value under the sample (the numbers jointly when the model
  has their pairwise products) — within a trust region of a few moves
  that grows while model proposals improve on the incumbent and shrinks while they do not; on spaces
  with known constraints the minimum is taken over feasible configurations only (every one of them
  when there are at most 50,000, within a radius of changed parameters; see :mod:`.constrained`); or
* hands the suggestion to its **fallback** technique, a sub-technique bound under
  ``<path>/<fallback name>`` that sees every result (registered ``StructuralSurrogate``: the default
  bandit, ``AUCBanditMetaTechniqueA``; constructed without one: :class:`~..simple.GreedyMutation`).

The fallback also makes the first ``initial`` suggestions.  The model then gets half the suggestions
until ``explore`` of its results are in; after that its share is the posterior probability that its
proposals find new bests more often than the fallback's (:mod:`.credit`; each arm keeps at least
``min_share``), capped by a predictive gate (how well the posterior predicted the recent results), so
on objectives that are not additive the technique degrades to its fallback instead of following a
wrong model.  The model side never proposes a configuration that was measured or is being measured.  On
spaces other than permutations alone the model fits the logarithm of the values (times are closer to products
of per-choice factors than to sums; :mod:`.transform`).
"""
from __future__ import annotations

import random
from collections import deque
from typing import Any, ClassVar, Deque, Dict, Optional, Set, Tuple

import numpy as np

from ...parameters import ConfigurationManipulator
from ...parameters.features import ArrayFeatures, FeatureLayout, OneHotFeatures, PermutationFeatures, UnitFeatures
from ..base import Config, Feedback, Proposal, Technique, TechniqueError
from ..blas import single_thread_blas
from ..options import Option, configure
from ..simple import GreedyMutation
from .constrained import FeasibleCandidates, has_known_constraints
from .credit import prob_better
from .minimise import minimise_array, minimise_numbers, minimise_permutation, minimise_unit
from .model import SparseBayesLinear, rank_correlation
from .transform import ValueModels, raw_by_default

#: when the sampled model's minimum near the incumbent was measured already: further tries, each an
#: iterated local search on the model from the incumbent, before falling back to a mutation
KICKS = 1


class StructuralSurrogate(Technique):
    """Model-based search over structural features (see the module docstring).

    Options: ``initial`` random configurations before the model is used; ``window`` recent
    suggestions per arm that the inner bandit credits; ``min_share`` the least share of either arm;
    ``temperature`` scales the Thompson sample's spread; ``cg_steps`` per full re-solve; ``precedence``
    forces precedence features on or off (default: on up to 32 items); ``model_kicks`` iterated-search
    kicks on the model when its minimum near the incumbent was measured; ``intercept`` fits an
    intercept (default: only when no permutation or one-hot group carries the constant, so that a
    feature never seen weighs what it weighs in a random configuration); ``fallback`` the technique
    that takes the suggestions the model does not (default: a :class:`GreedyMutation`); ``gate`` the
    number of recent results over which the model's predictions are judged (0: no gate): each result is
    predicted by the posterior mean before it is added, and the model's share is capped at
    ``min_share + (1 - 2 min_share) * max(0, rho)``, rho the rank correlation of those predictions with
    the values (from 10 pairs on), so a model that does not predict the objective hands its share to
    the fallback; ``gate_z`` (null: that plain cap only): while the model's record of new bests is not
    the better one, the cap is ``(1 - min_share) * max(0, rho_low)`` instead, rho_low being rho less
    ``gate_z`` standard errors; ``explore`` the model's own results before its share follows its record
    (half the suggestions until then, gate or not); ``prior`` the pseudo-results of each arm's prior
    rate of new bests (:func:`.credit.prob_better`); ``interactions`` adds the pairwise products of the
    numbers' centred unit values (off by default, see :mod:`...parameters.features`), which make the
    model a quadratic response surface, minimised over the numbers jointly by coordinate descent in
    the trust region; ``log_values`` fits the logarithm of the values (null: on spaces other than
    permutations alone, until a value <= 0 arrives; :mod:`.transform`).
    """

    description = ("learns an additive model over structural features (tour edges, orders, one-hot, "
                   "unit values) and searches it: Thompson sampling + 2-opt/or-opt on the model")

    OPTIONS: ClassVar[Tuple[Option, ...]] = (
               Option("initial", int, 10, 1, 100000, 5, 30, "random configurations before the model"),
               Option("window", int, 50, 1, 1000000, 20, 100, "recent results the proposal shares look at"),
               Option("min_share", float, 0.1, 0.001, 0.5, 0.05, 0.3, "least share of proposals left to the fallback"),
               Option("temperature", float, 1.0, 0.0, 1000.0, 0.5, 2.0, "Thompson-sampling temperature"),
               Option("cg_steps", int, 10, 1, 10000, 5, 20, "conjugate-gradient steps per model fit"),
               Option("precedence", bool, None, optional=True, doc="precedence features for permutations (null: auto)"),
               Option("model_kicks", int, 4, 0, 10000, 0, 8, "perturbation kicks of the model search"),
               Option("intercept", bool, None, optional=True, doc="fit an intercept (null: auto)"),
               Option("gate", int, 30, 0, 100000, 10, 60,
                      "recent results over which the model's predictions cap its share (0: no gate)"),
               Option("explore", int, 6, 0, 100000, 2, 12,
                      "model results before its share follows its record of new bests"),
               Option("prior", float, 2.0, 0.01, 1000.0, 0.5, 8.0,
                      "pseudo-results of the pooled rate in each arm's prior rate of new bests"),
               Option("interactions", bool, False,
                      doc="pairwise products of the numbers' centred unit values (a quadratic response surface)"),
               Option("gate_z", float, 1.0, 0.0, 10.0, 0.0, 2.0, optional=True,
                      doc="standard errors the predictions' rank correlation must clear while the model's "
                          "record is not the better one (null: the plain cap)"),
               Option("log_values", bool, None, optional=True,
                      doc="fit the logarithm of the values (null: on spaces other than permutations alone)"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    initial: int
    window: int
    min_share: float
    temperature: float
    cg_steps: int
    precedence: Optional[bool]
    model_kicks: int
    intercept: Optional[bool]
    gate: int
    explore: int
    prior: float
    interactions: bool
    gate_z: Optional[float]
    log_values: Optional[bool]

    def __init__(self, name: Optional[str] = None, fallback: Optional[Technique] = None,
                 **options: Any) -> None:
        super().__init__(name)
        configure(self, options)
        self.fallback = fallback if fallback is not None else GreedyMutation("GreedyMutation")

    # ---- protocol -----------------------------------------------------------------------------------
    def bind(self, manipulator: ConfigurationManipulator, rng: Any, path: Optional[str] = None) -> None:
        # the fallback draws the very stream it would draw as the root technique (a copy of ``rng``),
        # so that with the model switched off this technique makes the fallback's own suggestions;
        # the model's side draws from a stream derived (by string seeding, i.e. hashed) from ``rng``
        fallback_rng = random.Random()
        fallback_rng.setstate(rng.getstate())
        super().bind(manipulator, random.Random(f"structural:{rng.getrandbits(64)}"), path)
        self.layout = FeatureLayout(manipulator.parameters, self.precedence, self.interactions)
        self.values = ValueModels(self._new_model, self.log_values, self._raw_default())
        self.np_rng = np.random.default_rng(self.rng.getrandbits(63))
        self.fallback.bind(manipulator, fallback_rng, f"{self.path}/{self.fallback.name}")
        self.seen: Set[str] = set()
        self.best_key: Optional[str] = None  # the hash of best_config
        self.results = 0
        self.radius = 2
        self.failures = 0
        self.credit: Dict[str, Deque[int]] = {"model": deque(maxlen=self.window),
                                              "fallback": deque(maxlen=self.window)}
        self.pending: Set[str] = set()  # model proposals not measured yet
        self._constrained = has_known_constraints(manipulator)
        self.candidates: Optional[FeasibleCandidates] = None  # feasible configurations (constrained spaces)
        self.predictions: Deque[Tuple[float, float]] = deque(maxlen=max(self.gate, 1))  # (predicted, value)

    def _raw_default(self) -> bool:
        """Whether ``log_values=None`` fits the raw values on this run's space (called at bind)."""
        return raw_by_default(self.layout)

    def _new_model(self) -> SparseBayesLinear:
        """A model of this run's feature layout, empty (called at bind, and when the values'
        transform changes)."""
        return SparseBayesLinear(self.layout.size, self.layout.groups, self.cg_steps, self.intercept)

    @property
    def model(self) -> SparseBayesLinear:
        """The model that drives the search (raw or log values, :mod:`.transform`)."""
        return self.values.model

    def check_space(self, manipulator: ConfigurationManipulator) -> None:
        if not manipulator.parameters:
            raise TechniqueError("StructuralSurrogate: the space has no parameters")

    def observe(self, feedback: Feedback) -> None:
        improved = feedback.ok and feedback.value < self.best_value
        super().observe(feedback)
        if improved:
            self.best_key = feedback.key
        self.fallback.observe(feedback)
        self.seen.add(feedback.key)
        self.pending.discard(feedback.key)
        if self.candidates is not None:
            self.candidates.mark(feedback.key)
        self.results += 1
        if feedback.ok and np.isfinite(feedback.value):
            self._learn(self.layout.encode(feedback.config), feedback.value)
        if self.is_own(feedback):
            self.credit["model"].append(int(improved))
            self._adapt_radius(improved)
        elif feedback.requestor == self.fallback.path or feedback.requestor.startswith(self.fallback.path + "/"):
            self.credit["fallback"].append(int(improved))

    def _learn(self, active: Any, value: float) -> None:
        """Add one OK result to the model; from the ``initial``-th on, first note how the posterior
        predicted it (the gate's record)."""
        if self.gate and self.model.n >= self.initial:
            if self.gate_z is not None:
                with single_thread_blas():
                    self.model.refresh()  # the current posterior, also while the model is not used
            self.predictions.append((self.model.predict(active, self.model.mean), value))
        self.values.add(active, value)

    def propose(self) -> Optional[Proposal]:
        """A configuration from the sampled model (requested under this technique's path) or the
        fallback's proposal (under the fallback's path); None when neither has one right now."""
        if self.best_config is not None and self.results >= self.initial and self.layout.maps \
                and self.rng.random() < self._model_share():
            with single_thread_blas():
                cfg = self._from_model()
            if cfg is not None:
                proposal = self._claim(cfg)
                if self.candidates is not None:
                    self.candidates.mark(proposal.key)
                return proposal
        return self.fallback.propose()

    def _known(self, key: str) -> bool:
        """Whether the configuration hashed to ``key`` was measured or is awaited (the model skips it)."""
        return key in self.seen or key in self.pending

    def _claim(self, cfg: Config, key: Optional[str] = None) -> Proposal:
        """``cfg`` as this technique's own proposal (under its path), its hash (``key`` when the caller
        has it) recorded as pending; called for each configuration the model's side proposes."""
        assert self.manipulator is not None
        key = key or self.take_key(cfg) or self.manipulator.hash_valid(cfg)
        self.pending.add(key)
        return Proposal(cfg, self.path, key)

    def desired_configuration(self) -> Optional[Config]:  # pragma: no cover - propose() overrides
        proposal = self.propose()
        return None if proposal is None else proposal.config

    # ---- arms ---------------------------------------------------------------------------------------
    def model_record(self) -> float:
        """The posterior probability that the model's proposals find new bests more often than the
        fallback's (:func:`.credit.prob_better`); 0.5 until the model has ``explore`` results. Read by
        ``auto``'s cost policy: above 0.5 the model has shown that it wins per evaluation."""
        if len(self.credit["model"]) < self.explore:
            return 0.5
        model, fallback = ((float(sum(self.credit[arm])), float(len(self.credit[arm])))
                           for arm in ("model", "fallback"))
        return prob_better(model, fallback, self.prior)

    def _model_share(self) -> float:
        """Half the suggestions until the model has ``explore`` results of its own; then the posterior
        probability that its proposals find new bests more often than the fallback's
        (:func:`.credit.prob_better`, ``prior`` pseudo-results), kept within ``[min_share,
        1 - min_share]``; capped by the predictive gate when it is on."""
        if len(self.credit["model"]) < self.explore:
            return 0.5
        better = self.model_record()
        share = min(max(better, self.min_share), 1.0 - self.min_share)
        if self.gate and len(self.predictions) >= 10:
            share = min(share, self._gate_cap(better))
        return share

    def _gate_cap(self, better: float) -> float:
        """The most share the model's predictions allow: ``min_share + (1 - 2 min_share) * max(0, rho)``,
        rho the rank correlation of the recent predictions with the values; with ``gate_z``, while the
        model's record is not the better one (``better`` <= 0.5), ``(1 - min_share) * max(0, rho_low)``
        instead, rho_low being rho less ``gate_z`` standard errors (Fisher's z, 1.06 / (n - 3) for
        Spearman's rho), so that a correlation the recent results cannot tell from noise gives the
        model nothing."""
        predicted, values = zip(*self.predictions)
        rho = rank_correlation(predicted, values)
        loose = self.min_share + (1.0 - 2.0 * self.min_share) * max(0.0, rho)
        if self.gate_z is None or better > 0.5:
            return loose
        n = len(self.predictions)
        low = float(np.tanh(np.arctanh(np.clip(rho, -0.999, 0.999)) - self.gate_z * np.sqrt(1.06 / (n - 3))))
        return (1.0 - self.min_share) * max(0.0, low)

    def _adapt_radius(self, improved: bool) -> None:
        if improved:
            self.radius, self.failures = min(self.radius * 2, 1 << 12), 0
        else:
            self.failures += 1
            if self.failures >= 3:
                self.radius, self.failures = max(1, self.radius // 2), 0

    def _from_model(self) -> Optional[Config]:
        """The sampled model's minimum near the incumbent that was not measured yet (None if none).
        On spaces with known constraints the minimum is taken over feasible configurations
        (:mod:`.constrained`)."""
        assert self.manipulator is not None and self.best_config is not None
        self.model.refresh()
        for attempt in range(KICKS + 1):
            weights = self.model.sample(self.np_rng, self.temperature)
            cfg = self.manipulator.copy(self.best_config)
            for fmap, offset in zip(self.layout.maps, self.layout.offsets):
                block = weights[offset:offset + fmap.size]
                value = fmap.parameter.get_value(cfg)
                fmap.parameter.set_value(cfg, self._minimise(fmap, block, value, kick=attempt > 0))
            if self.layout.interaction is not None:
                minimise_numbers(self.layout, weights, cfg, self.best_config, self.radius)
            if self._constrained:
                feasible = self._feasible_minimum(weights, cfg)
                if feasible is None:
                    continue
                cfg = feasible
            key = self.manipulator.hash_valid(cfg)
            if self.manipulator.is_feasible(cfg) and not self._known(key):
                self.remember_key(cfg, key)  # hashed once: the proposal carries it
                return cfg
        return None

    def _feasible_minimum(self, weights: np.ndarray, own: Config) -> Optional[Config]:
        """The sampled model's minimum over feasible configurations (built on first use)."""
        assert self.manipulator is not None and self.best_config is not None
        if self.candidates is None:
            self.candidates = FeasibleCandidates(self.manipulator, self.layout)
            for key in self.seen | self.pending:
                self.candidates.mark(key)
        excluded = () if self.candidates.enumerated else self.seen | self.pending  # enumerated: marks
        return self.candidates.best(weights, self.best_config, self.radius, excluded, own, self.rng, self.np_rng)

    # ---- minimising the sampled model, per feature map ---------------------------------------------
    def _minimise(self, fmap: Any, w: np.ndarray, value: Any, kick: bool = False) -> Any:
        """The value of one parameter that minimises the sampled weights ``w`` of its features, searched
        from ``value`` (after a random kick out of its neighbourhood when ``kick``; :mod:`.minimise`)."""
        if isinstance(fmap, PermutationFeatures):
            return minimise_permutation(fmap, w, value, kick, self.radius, self.model_kicks, self.np_rng)
        if isinstance(fmap, OneHotFeatures):
            if self.rng.random() >= min(1.0, self.radius / 4):
                return value
            return fmap.option(int(np.argmin(w)))
        if isinstance(fmap, UnitFeatures):
            return minimise_unit(fmap, w, value, self.radius)
        if isinstance(fmap, ArrayFeatures):
            return minimise_array(fmap, w, value)
        return value

    # ---- persistence ----------------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, Any]:
        return {"radius": self.radius, "failures": self.failures,
                "credit": {arm: list(c) for arm, c in self.credit.items()},
                "fallback": self.fallback.state_dict(),
                "predictions": [list(pair) for pair in self.predictions]}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (called on resume, after the run's stored results were fed to
        :meth:`observe`, which already re-counted part of the record): the saved record replaces it."""
        self.radius = int(state.get("radius", self.radius))
        self.failures = int(state.get("failures", 0))
        for arm, values in (state.get("credit") or {}).items():
            if arm in self.credit:
                self.credit[arm].clear()
                self.credit[arm].extend(int(v) for v in values)
        self.predictions.clear()
        self.predictions.extend((float(p), float(v)) for p, v in state.get("predictions") or [])
        if "fallback" in state:
            self.fallback.load_state_dict(state["fallback"])


def register(registry: Any) -> None:
    """Add ``StructuralSurrogate`` to ``registry`` (its fallback is created from the registry when a
    run creates the technique, so the bundle may be registered after it)."""
    from ..builtin import add_module
    add_module(registry, "structural")
