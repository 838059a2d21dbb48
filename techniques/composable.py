"""Composable evolutionary techniques (DeepTuner thesis ch. 4): a technique base plus an operator map.

A *technique base* decides which population members breed and how the population is updated; the
*operator map* (:mod:`.operator_map`) decides how each parameter kind is combined.  Generating one
child (:meth:`ComposableEvolutionaryTechnique.desired_configuration`):

1. ``parents = get_parents(population)`` -- members, the first one the *primary* parent;
2. ``child = copy(primary.config)``;
3. for each parameter of ``select_parameters(params)``: its mapped operator (else the base's
   ``default_operator``) is applied as ``op(child, parents[1], ..., parents[arity-1])`` --
   an operator never reads more configurations than :meth:`minimum_number_of_parents` guarantees,
   which is checked at construction;
4. a child that is illegal, infeasible (known constraints), identical to its primary parent or
   already seen (any result of the run, or one of the technique's own requests) is regenerated
   (``max_tries`` times), then a random feasible configuration is used instead.

Swarm operators (``op3_swarm``, ``op3_swarm_parallel``) return a velocity: it is kept per population
member and parameter and passed back the next time that member is the primary parent.  An operator
that raises at run time (a bug or an odd value) is replaced by ``op1_randomize`` for that parameter;
operator maps are dry-run on the space in :meth:`bind`, so bad operator hyper-parameters are reported
there as a one-line TechniqueError.

The first ``population_size`` proposals are random feasible configurations; each member joins the
population when its result arrives.  Children may be proposed before the whole initial population is
back (several requests may be in flight); ``None`` is proposed only while no member has a result yet.
Results of the technique's own proposals are matched to them by configuration hash and passed to
:meth:`update_population`; every result (any requestor) updates the global best.

The technique bases themselves (greedy, DE) and the table of bases by root name are in
:mod:`.composable_bases`.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Tuple

from ..parameters import ConfigurationManipulator, Parameter
from .base import Config, Feedback, Technique, TechniqueError
from .operator_map import MapInput, OperatorChoice, OperatorMap, kind_of
from .name_encoding import composable_name
from .options import Option, configure


POPULATION_SIZE = Option("population_size", int, 30, 1, 100000, 10, 50, "members in the population")


@dataclass(eq=False)
class Member:
    """A population member: a configuration, its value (lower is better) and per-parameter velocities.

    ``age`` is the technique's counter when the member was created or last touched (larger is
    younger).  ``transient`` members (the global best handed out as a parent) are not in the
    population and never updated.
    """

    config: Config
    key: str
    value: float
    age: int
    velocity: Dict[str, Any] = field(default_factory=dict)
    transient: bool = False


@dataclass
class Child:
    """A measured child, as :meth:`ComposableEvolutionaryTechnique.update_population` receives it."""

    config: Config
    key: str
    value: float        # inf unless the result was OK
    primary: Member     # the primary parent it was made from


@dataclass
class _Pending:
    config: Config
    primary: Optional[Member]   # None: a member of the initial population


class ComposableEvolutionaryTechnique(Technique):
    """Base of composable techniques; subclasses define the hooks below (see the module docstring).

    Hooks, each called while a child is generated or a result arrives:

    * :meth:`minimum_number_of_parents` -- configurations ``get_parents`` always returns;
    * :meth:`get_parents` -- called once per child attempt; returns members, first the primary;
    * :meth:`select_parameters` -- parameters to apply operators to (default: all);
    * :meth:`update_population` -- called when the result of one of the technique's children arrives;
    * :meth:`child_proposed` -- called once per proposed child with its primary parent;
    * :meth:`default_operator` -- operator for unmapped parameter kinds (default ``op1_nop``).

    Two techniques are equal when they have the same class, hyper-parameters and operator map
    (their generated names, :func:`tunerlib.techniques.naming.technique_name`, are then equal too).
    """

    OPTIONS: ClassVar[Tuple[Option, ...]] = (POPULATION_SIZE,)
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    population_size: int
    description = "composable evolutionary technique"
    #: child-generation attempts before falling back to a random configuration
    max_tries = 20

    def __init__(self, name: Optional[str] = None, operator_map: MapInput = None, **options: Any) -> None:
        super().__init__(name)
        owner = type(self).__name__
        configure(self, options)
        self.operator_map = operator_map if isinstance(operator_map, OperatorMap) else OperatorMap(operator_map)
        self.operator_map.check_parents(self.minimum_number_of_parents(), owner)
        if name is None:
            self.name = self.path = self.generated_name()
        self.population: List[Member] = []
        self._pending: Dict[str, List[_Pending]] = {}
        self._age = 0
        self._init_left = 0
        self._seen: set = set()

    # ---- identity -----------------------------------------------------------
    @classmethod
    def root_name(cls) -> str:
        """The root of generated names: the class name."""
        return cls.__name__

    def generated_name(self) -> str:
        """The name encoding class, hyper-parameters and operator map (see :mod:`.naming`)."""
        return composable_name(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ComposableEvolutionaryTechnique):
            return NotImplemented
        return (type(self) is type(other) and self.option_values() == other.option_values()
                and self.operator_map == other.operator_map)

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.option_values()), hash(self.operator_map)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.generated_name()!r})"

    # ---- hooks ----------------------------------------------------------------
    def minimum_number_of_parents(self) -> int:
        """Configurations (primary included) :meth:`get_parents` always returns; limits operator arity."""
        raise NotImplementedError

    def get_parents(self, population: List[Member]) -> List[Member]:
        """Members to breed from, the primary parent first (``population`` is never empty)."""
        raise NotImplementedError

    def select_parameters(self, params: List[Parameter]) -> List[Parameter]:
        """Parameters to apply operators to for one child (default: all of them)."""
        return params

    def update_population(self, child: Child, population: List[Member]) -> None:
        """Called when the result of one of this technique's children arrives; update ``population``."""
        raise NotImplementedError

    def child_proposed(self, primary: Member) -> None:
        """Called once per proposed child (after the retries) with its primary parent; default: nothing."""

    def default_operator(self, param: Parameter) -> OperatorChoice:
        """Operator for parameters whose kind the operator map does not name (``op1_nop``)."""
        return _NOP

    # ---- helpers for bases ----------------------------------------------------
    def touch(self, member: Member) -> None:
        """Make ``member`` the youngest."""
        self._age += 1
        member.age = self._age

    def global_best(self) -> Member:
        """The best configuration seen in the run (any requestor) as a transient member; before any
        OK result, the best population member."""
        if self.best_config is not None:
            return Member(self.best_config, "", self.best_value, -1, transient=True)
        return min(self.population, key=lambda m: (m.value, m.age))

    def select_by_rate(self, params: List[Parameter], rate: float) -> List[Parameter]:
        """Each parameter with probability ``rate``; one random parameter when none was picked."""
        chosen = [p for p in params if self.rng.random() < rate]
        if not chosen and params:
            chosen = [self.rng.choice(params)]
        return chosen

    @staticmethod
    def replace_member(member: Member, child: Child) -> None:
        """Give ``member`` the child's configuration and value (velocities are kept)."""
        member.config, member.key, member.value = child.config, child.key, child.value

    # ---- protocol -------------------------------------------------------------
    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        """Reset the population and dry-run the operator map on the space (TechniqueError if it fails)."""
        super().bind(manipulator, rng, path)
        self.population = []
        self._pending = {}
        self._age = 0
        self._init_left = self.population_size
        self._seen = set()

    def check_space(self, manipulator: ConfigurationManipulator) -> None:
        probe = random.Random(0)
        need = self.minimum_number_of_parents() - 1
        for param in manipulator.parameters:
            choice = self.operator_map.lookup(param)
            if choice is None:
                continue
            configs = [{param.name: param.random_value(probe)} for _ in range(need + 1)]
            try:
                self._call(param, choice, configs[0], configs[1:], probe, None)
                bad = not param.is_valid(param.get_value(configs[0]))
            except Exception as exc:  # noqa: BLE001 -- reported as a one-line configuration error
                msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise TechniqueError(f"{type(self).__name__}: operator {kind_of(param)}:{choice.op} fails on "
                                     f"parameter {param.name!r} ({msg}); fix its hyper-parameters") from None
            if bad:
                raise TechniqueError(f"{type(self).__name__}: operator {kind_of(param)}:{choice.op} gives an "
                                     f"illegal value for parameter {param.name!r}; map another operator")

    def desired_configuration(self) -> Optional[Config]:
        m = self.manipulator
        assert m is not None
        if self._init_left > 0:
            self._init_left -= 1
            return self._remember(m.random(self.rng), None)
        if not self.population:
            return None  # waiting for the first member of the initial population
        cfg, primary = self._make_child(m)
        return self._remember(cfg, primary)

    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        self._seen.add(feedback.key)
        if not self.is_own(feedback):
            return
        queue = self._pending.get(feedback.key)
        if not queue:
            return
        rec = queue.pop(0)
        if not queue:
            del self._pending[feedback.key]
        value = feedback.value if feedback.ok else math.inf
        if rec.primary is None:
            self._age += 1
            self.population.append(Member(rec.config, feedback.key, value, self._age))
        else:
            self.update_population(Child(rec.config, feedback.key, value, rec.primary), self.population)

    # ---- child generation -------------------------------------------------------
    def _remember(self, cfg: Config, primary: Optional[Member]) -> Config:
        assert self.manipulator is not None
        key = self.manipulator.hash_valid(cfg)  # cfg is legal: random() or checked by _make_child
        self._seen.add(key)
        self._pending.setdefault(key, []).append(_Pending(cfg, primary))
        return cfg

    def _make_child(self, m: ConfigurationManipulator) -> Tuple[Config, Member]:
        params = m.parameters
        need = self.minimum_number_of_parents() - 1
        primary: Optional[Member] = None
        for _ in range(self.max_tries):
            parents = self.get_parents(self.population)
            primary = parents[0]
            configs = [p.config for p in parents[1:]]
            configs += [primary.config] * max(0, need - len(configs))  # a base returning too few
            child = m.copy(primary.config)
            velocities: Dict[str, Any] = {}
            for param in self.select_parameters(list(params)):
                choice = self.operator_map.lookup(param) or self.default_operator(param)
                self._apply(param, choice, child, configs, primary, velocities)
            if child != primary.config and m.is_valid(child) and m.is_feasible(child) \
                    and m.hash_valid(child) not in self._seen:
                primary.velocity.update(velocities)
                self.child_proposed(primary)
                return child, primary
        assert primary is not None
        self.child_proposed(primary)
        return m.random(self.rng), primary

    def _apply(self, param: Parameter, choice: OperatorChoice, child: Config, configs: List[Config],
               primary: Member, velocities: Dict[str, Any]) -> None:
        if choice.op not in type(param).operators():
            return  # a default operator this parameter type lacks: leave the value
        try:
            out = self._call(param, choice, child, configs, self.rng, primary.velocity.get(param.name))
        except Exception:  # noqa: BLE001 -- documented fallback, a run never ends in an exception
            param.op1_randomize(child, rng=self.rng)
            return
        if out is not None and "velocity" in dict(type(param).operators()[choice.op].defaults):
            velocities[param.name] = out

    @staticmethod
    def _call(param: Parameter, choice: OperatorChoice, child: Config, configs: List[Config],
              rng: random.Random, velocity: Any) -> Any:
        spec = type(param).operators()[choice.op]
        kwargs = choice.bound_kwargs(spec)
        if velocity is not None and "velocity" in dict(spec.defaults):
            kwargs["velocity"] = velocity
        return param.apply_operator(choice.op, child, configs, rng, **kwargs)


_NOP = OperatorChoice("op1_nop")


__all__ = ["Child", "ComposableEvolutionaryTechnique", "Member", "POPULATION_SIZE"]
