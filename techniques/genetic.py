"""Genetic algorithms (OpenTuner's ``ga-*`` family; ``GGA`` is in :mod:`.global_ga`) and the evolutionary helpers shared by
the population techniques (:mod:`.differential_evolution`, :mod:`.pso`, :mod:`.binary_ga`).

Shared helpers
--------------
* :func:`mutate_param` -- one kind-aware mutation of one parameter: a local move for permutations
  (segment inversion = 2-opt move, or-opt segment move), one re-drawn (or Gaussian-moved)
  element for arrays, a flip for booleans, a *different* option for categoricals, and a uniform
  re-draw or Gaussian step (``sigma`` in unit space) for numeric parameters.
* :func:`cross_param` -- one kind-aware crossover of one parameter (a named permutation crossover,
  a segment crossover for arrays, the donor's value otherwise).
* :class:`EvolutionaryTechnique` -- the bookkeeping every population technique needs: keys of
  every configuration seen (own and others' results), own requests in flight (several at once,
  results in any order), and :meth:`EvolutionaryTechnique.finish` which turns a child generator into
  a legal, feasible and preferably new configuration.

Differences from OpenTuner 0.8.8 (whose ``ga-*`` always crossed the global best with itself, i.e.
never crossed, and mutated permutations by a full shuffle): :class:`GeneticAlgorithm` is a real
steady-state GA with a population, tournament selection, the named permutation crossover and
local-move mutation; ``ga-base`` is that GA with parameter-wise uniform crossover (OpenTuner
registered a plain UniformGreedyMutation under that name, which tunerlib already offers as
``UniformGreedyMutation``); ``GGA`` takes its second parent from an elite archive instead of the
global best again.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Set

from ..parameters import ArrayParameter, ConfigurationManipulator, Parameter
from .base import Config, Feedback, Proposal, Technique
from .options import Option, configure

PERMUTATION_CROSSOVERS = ("OX1", "OX3", "PX", "CX", "PMX")


# ---------------------------------------------------------------------------------------------
# kind-aware operators
# ---------------------------------------------------------------------------------------------
def is_permutation(param: Parameter) -> bool:
    """True for permutation-like parameters (permutations and schedules)."""
    ops = param.operators()
    return "op2_random_invert" in ops and "op3_cross_OX1" in ops


def has_unit(param: Parameter) -> bool:
    """True for parameters with a unit-cube mapping (numeric kinds and ordinals)."""
    return callable(getattr(param, "get_unit_value", None)) and "op4_set_linear" in param.operators() \
        and not isinstance(param, ArrayParameter) and not is_permutation(param)


def _store_list(param: Parameter, cfg: Config, value: List[Any], rng: random.Random) -> None:
    """Store a permutation built by hand, repaired for schedules; an illegal result falls back to an
    inversion of the old value (so the child always stays legal)."""
    repair = getattr(param, "_repair", None)
    if callable(repair):
        value = repair(value)
    if param.is_valid(value):
        param.set_value(cfg, value)
    else:  # pragma: no cover - only for exotic permutation subclasses
        param.apply_operator("op2_random_invert", cfg, [{param.name: param.get_value(cfg)}], rng, strength=rng.random())


def permutation_move(param: Parameter, cfg: Config, rng: random.Random) -> None:
    """Apply one local move to a permutation in ``cfg``: 80% inversion of a random section (a 2-opt
    move), 20% moving a 1-3 item segment elsewhere, possibly reversed (an or-opt move).

    (Measured on att48 with greedy selection at 3000 evaluations: this mix beat pure inversion and
    a 60/20/20 mix with swaps.)"""
    value = list(param.get_value(cfg))
    n = len(value)
    if n < 2:
        return
    r = rng.random()
    if r < 0.8 or n < 4:
        i, j = sorted(rng.sample(range(n), 2))
        value[i:j + 1] = value[i:j + 1][::-1]
    else:
        length = rng.randint(1, min(3, n - 2))
        start = rng.randrange(n - length + 1)
        seg = value[start:start + length]
        if rng.random() < 0.5:
            seg.reverse()
        rest = value[:start] + value[start + length:]
        pos = rng.choice([p for p in range(len(rest) + 1) if p != start] or [start])
        value = rest[:pos] + seg + rest[pos:]
    _store_list(param, cfg, value, rng)


def _redraw_different(param: Parameter, cfg: Config, rng: random.Random, tries: int = 8) -> None:
    """Re-draw the value uniformly, preferring a value different from the current one."""
    old = param.get_value(cfg)
    for _ in range(tries):
        new = param.random_value(rng)
        if not (type(new) is type(old) and new == old):
            break
    param.set_value(cfg, new)


def _mutate_array(param: Parameter, cfg: Config, rng: random.Random, normal: bool, sigma: float) -> None:
    """Change each element with probability 1/count (at least one): booleans flip, numbers are
    re-drawn (or, with ``normal``, moved by a Gaussian step of ``sigma`` in unit space)."""
    value = list(param.get_value(cfg))
    n = len(value)
    picks = [i for i in range(n) if rng.random() < 1.0 / n] or [rng.randrange(n)]
    if normal and "op1_normal_mutation" in param.operators():
        tmp = {param.name: list(value)}
        param.apply_operator("op1_normal_mutation", tmp, [], rng, sigma=sigma)
        donor = tmp[param.name]
    else:
        donor = param.random_value(rng)
    for i in picks:
        value[i] = (not value[i]) if isinstance(value[i], bool) else donor[i]
    param.set_value(cfg, value)


def mutate_param(param: Parameter, cfg: Config, rng: random.Random, normal: bool = False,
                 sigma: float = 0.1) -> None:
    """Mutate ``param``'s value in ``cfg`` in place with a move suited to its kind (see module doc)."""
    ops = param.operators()
    if is_permutation(param):
        permutation_move(param, cfg, rng)
    elif isinstance(param, ArrayParameter):
        _mutate_array(param, cfg, rng, normal, sigma)
    elif normal and "op1_normal_mutation" in ops:
        param.apply_operator("op1_normal_mutation", cfg, [], rng, sigma=sigma)
    elif "op1_flip" in ops:
        param.apply_operator("op1_flip", cfg, [], rng)
    else:
        _redraw_different(param, cfg, rng)


def cross_param(param: Parameter, child: Config, base: Config, donor: Config, rng: random.Random,
                xchoice: Optional[str] = "OX1", strength: float = 1.0 / 3.0) -> None:
    """Set ``param`` in ``child`` to a crossover of ``base`` (primary) and ``donor``.

    Permutations use crossover ``xchoice`` (a section of about ``strength*n`` items from the donor;
    ``None`` copies the donor's whole order), arrays take a section from the donor, other kinds get
    the donor's value.
    """
    if is_permutation(param) and xchoice:
        param.apply_operator("op3_cross", child, [base, donor], rng, xchoice=xchoice, strength=strength)
    elif isinstance(param, ArrayParameter) and "op3_cross" in param.operators():
        param.op3_cross(child, base, donor, rng=rng, strength=max(strength, 0.5))
    else:
        param.set_value(child, param.copy_value(param.get_value(donor)))


# ---------------------------------------------------------------------------------------------
# shared bookkeeping
# ---------------------------------------------------------------------------------------------
class EvolutionaryTechnique(Technique):
    """Base of the population techniques: tracks what has been seen and what is in flight.

    Subclasses implement ``desired_configuration`` (called by :meth:`propose`) and
    :meth:`on_own_result` (called once per own completed request, in completion order, whatever
    order the requests were made in).  Every result -- own or another technique's -- updates
    ``best_config``/``best_value`` and the set of seen keys, and is passed to :meth:`on_result`.
    """

    #: how many of the best distinct OK results (any technique's) :attr:`elite` keeps
    elite_size: int = 0

    def __init__(self, name: Optional[str] = None, max_tries: int = 20) -> None:
        super().__init__(name)
        self.max_tries = max_tries

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        """Called once before the first proposal; resets all state."""
        super().bind(manipulator, rng, path)
        self.seen: Set[str] = set()
        self.pending: Dict[str, int] = {}
        self.elite: List[Member] = []

    # ---- keys -----------------------------------------------------------------------------
    def key(self, cfg: Config) -> str:
        """Stable hash of a legal configuration (equal to the driver's Feedback.key); the configuration
        :meth:`finish` has just returned is not hashed again."""
        made = self._made
        if made is not None and made[0] is cfg:
            return made[1]
        assert self.manipulator is not None
        return self.manipulator.hash_valid(cfg)

    def is_new(self, key: str) -> bool:
        """True when no result for ``key`` has been seen and none of ours is in flight."""
        return key not in self.seen and key not in self.pending

    @property
    def in_flight(self) -> int:
        """Own requests whose results have not arrived yet."""
        return sum(self.pending.values())

    def finish(self, make: Callable[[], Config], tries: Optional[int] = None,
               mutate_duplicates: bool = True) -> Config:
        """Call ``make()`` until it gives a feasible configuration not seen before.

        A feasible duplicate gets extra :func:`mutate_param` moves (when ``mutate_duplicates``);
        after ``tries`` attempts the last feasible candidate is returned (the driver answers a
        duplicate at once), and when none was feasible a random feasible configuration.
        """
        m = self.manipulator
        assert m is not None
        self._made = None  # a hash remembered earlier is of another proposal
        fallback: Optional[Config] = None
        for attempt in range(tries or self.max_tries):
            cfg = make()
            params = m.parameters
            if mutate_duplicates and attempt and params and m.is_feasible(cfg) \
                    and not self.is_new(self.key(cfg)):
                for _ in range(attempt):
                    mutate_param(self.rng.choice(params), cfg, self.rng)
            if not m.is_feasible(cfg):
                continue
            key = self.key(cfg)
            if self.is_new(key):
                self.remember_key(cfg, key)  # hashed once: the proposal carries it
                return cfg
            if fallback is None:
                fallback = cfg
        return fallback if fallback is not None else m.random(self.rng)

    # ---- protocol ---------------------------------------------------------------------------
    def propose(self) -> Optional[Proposal]:
        """Next configuration to measure (recorded as in flight), or None while waiting."""
        cfg = self.desired_configuration()
        if cfg is None:
            return None
        key = self.key(cfg)
        self.take_key(cfg)
        self.pending[key] = self.pending.get(key, 0) + 1
        return Proposal(cfg, self.path, key)

    def observe(self, feedback: Feedback) -> None:
        """Receive every completed result; own ones go to :meth:`on_own_result` too."""
        super().observe(feedback)
        self.seen.add(feedback.key)
        if self.elite_size > 0:
            self._update_elite(feedback)
        self.on_result(feedback)
        count = self.pending.get(feedback.key, 0)
        if self.is_own(feedback) and count:
            if count == 1:
                del self.pending[feedback.key]
            else:
                self.pending[feedback.key] = count - 1
            self.on_own_result(feedback)

    def _update_elite(self, feedback: Feedback) -> None:
        """Keep the ``elite_size`` best distinct OK configurations seen, best first."""
        if not feedback.ok:
            return
        if len(self.elite) >= self.elite_size and feedback.value >= _val(self.elite[-1]):
            return  # checked before the scan for its key: most results are not better than the worst
        if any(mem.key == feedback.key for mem in self.elite):
            return
        assert self.manipulator is not None
        self.elite.append(Member(self.manipulator.copy(feedback.config), feedback.key, feedback.value))
        self.elite.sort(key=_val)
        del self.elite[self.elite_size:]

    def on_result(self, feedback: Feedback) -> None:
        """Hook called for every result (own or not) before :meth:`on_own_result`."""

    def on_own_result(self, feedback: Feedback) -> None:
        """Hook called once for each own completed request."""

    def random_config(self) -> Config:
        """A random feasible configuration."""
        assert self.manipulator is not None
        return self.manipulator.random(self.rng)


@dataclass
class Member:
    """A population member: its configuration, key and value (None until its result arrives)."""

    config: Config
    key: str
    value: Optional[float] = None


def tournament(rng: random.Random, pool: Sequence[Member], size: int) -> Member:
    """The best of ``size`` members drawn with replacement from ``pool`` (unknown value = inf)."""
    best = rng.choice(pool)
    for _ in range(size - 1):
        other = rng.choice(pool)
        if _val(other) < _val(best):
            best = other
    return best


def _val(member: Member) -> float:
    return math.inf if member.value is None else member.value


# ---------------------------------------------------------------------------------------------
# the genetic algorithms
# ---------------------------------------------------------------------------------------------
class GeneticAlgorithm(EvolutionaryTechnique):
    """Steady-state GA: tournament selection, crossover, kind-aware mutation, replace-worst.

    The population (``population_size`` members) first adopts the best results already seen from
    any technique (``adopt``), then fills with random feasible configurations.  Each later child's
    first parent is the global best with probability ``greedy`` (OpenTuner's ga-* always used the
    global best) and otherwise a tournament winner (size ``tournament_size``, the global best joins
    the pool ``sharing`` times); with probability ``crossover_rate`` it is crossed with a second
    tournament winner: permutations by the crossover ``crossover`` (a section of
    ``crossover_strength*n`` items, OpenTuner's d = n/3; ``None`` = whole order from one parent,
    ``ga-base``), every other parameter taken from either parent with probability 1/2 (arrays get a
    segment crossover).  Then at least ``must_mutate`` parameters, and every other one with
    probability ``mutation_rate``, are mutated by :func:`mutate_param`: local moves for
    permutations; numbers get a Gaussian step (``sigma`` in unit space) with probability
    ``normal`` and a uniform re-draw otherwise (OpenTuner's ga-* only re-drew; the mix halved the
    median on a 4-D sphere and on a mixed space at 300 evaluations).  A result -- own, or with
    ``adopt`` another technique's -- that beats the worst member replaces it; duplicates are never
    inserted.  Works on every parameter kind; several children may be in flight and results arrive
    in any order.

    Defaults chosen on att48 at 3000 evaluations (median of 10 seeds, OX1): population 6 with
    greedy 0.25 reaches 1.13x the optimum, population 10: 1.16-1.18x, population 30: 1.45x.
    """

    OPTIONS = (Option("crossover", str, "OX1", choices=PERMUTATION_CROSSOVERS, optional=True,
                      doc="permutation crossover (null: whole order from one parent)"),
               Option("population_size", int, 6, 2, 100000, 4, 30, "members in the population"),
               Option("crossover_rate", float, 0.8, 0.0, 1.0, 0.3, 1.0, "probability to cross two parents"),
               Option("mutation_rate", float, 0.1, 0.0, 1.0, 0.02, 0.3, "probability to mutate a parameter"),
               Option("must_mutate", int, 1, 0, 10000, 0, 2, "parameters mutated at least"),
               Option("tournament_size", int, 3, 1, 10000, 2, 5, "members per tournament"),
               Option("crossover_strength", float, 1.0 / 3.0, 0.0, 1.0, 0.1, 0.5, "share of a permutation crossed"),
               Option("sharing", int, 1, 0, 1000, doc="copies of the global best in tournaments"),
               Option("normal", float, 0.5, 0.0, 1.0, 0.0, 1.0, "probability of a Gaussian step for numbers"),
               Option("sigma", float, 0.1, 0.0, 10.0, 0.02, 0.3, "Gaussian step in unit space"),
               Option("greedy", float, 0.25, 0.0, 1.0, 0.0, 0.5, "probability to breed from the best"),
               Option("adopt", bool, True, doc="other techniques' better results replace the worst member"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    crossover: Optional[str]
    population_size: int
    crossover_rate: float
    mutation_rate: float
    must_mutate: int
    tournament_size: int
    crossover_strength: float
    sharing: int
    normal: float
    sigma: float
    greedy: float
    adopt: bool

    def __init__(self, name: Optional[str] = None, **options: Any) -> None:
        super().__init__(name)
        configure(self, options)
        self.elite_size = self.population_size if self.adopt else 0

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        """Called once before the first proposal; starts an empty population."""
        super().bind(manipulator, rng, path)
        self.members: List[Member] = []
        self.initial_made = 0
        self.adopted: Set[str] = set()

    def desired_configuration(self) -> Optional[Config]:
        """A random member while the population fills, then a child; None while nothing is evaluated."""
        if self.adopt:
            self._adopt_elite()
        if self.initial_made + len(self.adopted) < self.population_size:
            self.initial_made += 1
            return self.finish(self.random_config, tries=5, mutate_duplicates=False)
        if not self.members:
            return None if self.in_flight else self.finish(self.random_config, tries=5)
        return self.finish(self.make_child)

    def _adopt_elite(self) -> None:
        """While the population is not full, take in the best results seen (any technique's)."""
        keys = {mem.key for mem in self.members}
        for elite in self.elite:
            if len(self.members) >= self.population_size:
                return
            if elite.key not in keys and elite.key not in self.adopted:
                self.members.append(Member(elite.config, elite.key, elite.value))
                self.adopted.add(elite.key)
                keys.add(elite.key)

    def parent_pool(self) -> List[Member]:
        """Members plus the global best (``sharing`` times) for tournaments."""
        pool = list(self.members)
        if self.best_config is not None and self.sharing > 0:
            pool += [Member(self.best_config, "", self.best_value)] * self.sharing
        return pool

    def make_child(self) -> Config:
        """One offspring: selection, crossover with probability ``crossover_rate``, mutation."""
        m = self.manipulator
        assert m is not None
        pool = self.parent_pool()
        if self.best_config is not None and self.rng.random() < self.greedy:
            first = Member(self.best_config, "", self.best_value)
        else:
            first = tournament(self.rng, pool, self.tournament_size)
        child = m.copy(first.config)
        if self.rng.random() < self.crossover_rate and len(pool) > 1:
            second = tournament(self.rng, pool, self.tournament_size)
            self.crossover_into(child, first.config, second.config)
        self.mutate(child)
        return child

    def crossover_into(self, child: Config, base: Config, donor: Config) -> None:
        """Cross every parameter of ``base`` (already copied into ``child``) with ``donor``."""
        assert self.manipulator is not None
        for param in self.manipulator.parameters:
            if is_permutation(param) and self.crossover:
                cross_param(param, child, base, donor, self.rng, self.crossover, self.crossover_strength)
            elif self.rng.random() < 0.5:
                cross_param(param, child, base, donor, self.rng, None, 0.5)

    def mutate(self, child: Config) -> None:
        """Mutate at least ``must_mutate`` parameters, each other one with ``mutation_rate``."""
        assert self.manipulator is not None
        params = self.manipulator.parameters
        self.rng.shuffle(params)
        for i, param in enumerate(params):
            if i < self.must_mutate or self.rng.random() < self.mutation_rate:
                mutate_param(param, child, self.rng, self.rng.random() < float(self.normal), self.sigma)

    def on_result(self, feedback: Feedback) -> None:
        """With ``adopt``, another technique's OK result joins the population like an own child."""
        full = len(self.members) >= self.population_size
        if self.adopt and full and feedback.ok and not self.is_own(feedback):
            self.on_own_result(feedback)

    def on_own_result(self, feedback: Feedback) -> None:
        """Insert the child while the population fills, later only in place of a worse worst member."""
        if any(mem.key == feedback.key for mem in self.members):
            return
        assert self.manipulator is not None
        member = Member(self.manipulator.copy(feedback.config), feedback.key, feedback.value)
        if len(self.members) < self.population_size:
            self.members.append(member)
            return
        worst = max(range(len(self.members)), key=lambda i: (_val(self.members[i]), -i))
        if feedback.value < _val(self.members[worst]):
            self.members[worst] = member


def register(registry: Any) -> None:
    """Register ga-OX1, ga-OX3, ga-PX, ga-CX, ga-PMX, ga-base and GGA."""
    from .builtin import add_module
    add_module(registry, "genetic")
