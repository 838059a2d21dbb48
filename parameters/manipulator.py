"""The search space: a set of named parameters plus known constraints over them.

:class:`ConfigurationManipulator` is what a tuner script returns from ``manipulator()``.  It creates
random and seed configurations, validates and normalises configurations, gives each one a stable
hash (SHA-256 of its canonical JSON, identical across processes and for ``1`` vs ``1.0`` in a float
parameter), measures the size of the space, groups parameters linked by constraints (for Bayesian
optimisation's chain of trees) and serialises the space definition.

Constraints never make :meth:`validate` fail: validity is about each parameter's legal values;
feasibility (:meth:`is_feasible`) is about the known constraints.  The seed configuration may be
infeasible.  Everything here is deterministic: randomness comes only from the ``random.Random``
passed in, and every listing follows parameter insertion order or sorted names.

The class keeps the space's state and caches; it hands the checked and canonical form of a
configuration to :mod:`.config_form`, the groups and table rows to :mod:`.constraint_groups` and the
summary line and parameter table to :mod:`.space_display`.
"""
from __future__ import annotations

import hashlib
import math
import random
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Set, TextIO, Union

from . import config_form as form
from . import space_display as display
from .base import Config, ConfigurationError, Parameter, ParameterError, parameter_from_json
from .constraint_groups import connected_groups, feasible_table_rows
from .constraints import Constraint, ConstraintError, check_constraints, sample_configs
from .feasible import FeasibleSpace
from .priors import Prior, prior_from_json
from .space_prior import SpacePrior

ConstraintLike = Union[Constraint, str, Callable[[Mapping[str, Any]], Any]]


class ConfigurationManipulator:
    """A search space: parameters (unique names, insertion order kept) and known constraints."""

    def __init__(self, parameters: Optional[Iterable[Parameter]] = None,
                 constraints: Optional[Iterable[ConstraintLike]] = None) -> None:
        self._params: List[Parameter] = []
        self._by_name: Dict[str, Parameter] = {}
        self._constraints: List[Constraint] = []
        self._groups: Optional[List[Set[str]]] = None
        self._table_cache: Dict[frozenset, Optional[List[Config]]] = {}
        self._prior = SpacePrior()
        for p in parameters or ():
            self.add_parameter(p)
        for c in constraints or ():
            self.add_constraint(c)

    # ------------------------------------------------------------------ building the space
    def add_parameter(self, parameter: Parameter) -> Parameter:
        """Add a parameter (called while defining the space); returns it.  Names must be unique."""
        if not isinstance(parameter, Parameter):
            raise ConfigurationError(f"add_parameter() needs a Parameter instance, got "
                                     f"{type(parameter).__name__}; e.g. IntegerParameter('x', 1, 8)")
        if parameter.name in self._by_name:
            raise ConfigurationError(f"duplicate parameter name {parameter.name!r}; every parameter "
                                     "needs a unique name")
        self._params.append(parameter)
        self._by_name[parameter.name] = parameter
        self._groups = None
        return parameter

    def add_constraint(self, predicate: ConstraintLike, reads: Optional[Iterable[str]] = None,
                       name: Optional[str] = None) -> Constraint:
        """Add a known constraint; returns the :class:`Constraint`.

        ``predicate`` is an expression string, a callable (``reads`` required) or a ``Constraint``.
        Every name it reads must already be a parameter.  Names must be unique: an explicit duplicate
        name is an error, a derived one gets a ``" #2"`` suffix.
        """
        if isinstance(predicate, Constraint):
            if reads is not None or name is not None:
                raise ConfigurationError("pass reads/name to Constraint(...) or to add_constraint, not both")
            c = predicate
        else:
            try:
                c = Constraint(predicate, reads=reads, name=name)
            except ConstraintError as exc:
                raise ConfigurationError(str(exc)) from None
        unknown = [r for r in c.reads if r not in self._by_name]
        if unknown:
            raise ConfigurationError(f"constraint {c.name!r} reads unknown parameter(s) {unknown}; add them "
                                     f"first (known: {form.names_list(self.names) or 'none'})")
        taken = {k.name for k in self._constraints}
        if c.name in taken:
            if c.explicit_name:
                raise ConfigurationError(f"duplicate constraint name {c.name!r}; give it another name=")
            k = 2
            while f"{c.name} #{k}" in taken:
                k += 1
            c.name = f"{c.name} #{k}"
        self._constraints.append(c)
        self._groups = None
        self._table_cache = {}
        return c

    # ------------------------------------------------------------------ priors
    @property
    def prior(self) -> SpacePrior:
        """The user priors (empty: uniform).  :meth:`random` and the feasible space's sampling draw
        from them; Bayesian optimization also weighs its acquisition by them."""
        return self._prior

    def set_prior(self, name: str, prior: Union[Prior, Mapping[str, Any]]) -> None:
        """Declare a prior on parameter ``name`` (in a tuner script's ``manipulator()``): a
        :class:`~.priors.Beta`, :class:`~.priors.Probabilities` or :class:`~.priors.Near`, or its
        JSON form (``{"beta": [2, 5]}``).  ConfigurationError (one line) when it does not fit."""
        param = self.parameter(name)
        self._prior.set(param, prior if isinstance(prior, Prior) else prior_from_json(name, prior))

    def set_prior_near(self, config: Mapping[str, Any], confidence: float) -> None:
        """Declare that good configurations lie near ``config`` (a partial configuration is fine)
        with ``confidence`` in (0, 1): that share of random configurations is drawn near it, the
        rest uniformly (see :meth:`~.space_prior.SpacePrior.set_near`).  Replaces an earlier one."""
        self._prior.set_near([self.parameter(n) for n in config], config, confidence)

    # ------------------------------------------------------------------ access
    @property
    def parameters(self) -> List[Parameter]:
        """The parameters in insertion order (a new list)."""
        return list(self._params)

    @property
    def names(self) -> List[str]:
        """Parameter names in insertion order."""
        return [p.name for p in self._params]

    @property
    def constraints(self) -> List[Constraint]:
        """The known constraints in insertion order (a new list)."""
        return list(self._constraints)

    def parameter(self, name: str) -> Parameter:
        """The parameter called ``name``; ConfigurationError when there is none."""
        try:
            return self._by_name[name]
        except (KeyError, TypeError):
            raise ConfigurationError(f"unknown parameter {name!r}; known: {form.names_list(self.names)}") from None

    def __len__(self) -> int:
        return len(self._params)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(list(self._params))

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __repr__(self) -> str:
        return f"ConfigurationManipulator({self.describe_space()})"

    # ------------------------------------------------------------------ configurations
    def seed_config(self) -> Config:
        """Every parameter's seed value (deterministic; may violate constraints)."""
        return {p.name: p.seed_value() for p in self._params}

    def check_constraints(self) -> "ConfigurationManipulator":
        """Called once when a tuning run starts, before it records anything: every constraint is
        evaluated on the seed configuration and on random ones (:func:`~.constraints.check_constraints`).
        Raises ConfigurationError (one line) for a constraint that fails there or is undefined on all
        of them; afterwards a constraint that fails on a configuration counts as violated there.
        Returns this manipulator."""
        try:
            check_constraints(self._constraints, sample_configs(self._params, self.seed_config()))
        except ConstraintError as exc:
            raise ConfigurationError(str(exc)) from None
        return self

    def random(self, rng: random.Random, max_tries: int = 10000) -> Config:
        """A random configuration satisfying every constraint (called by techniques; returns a new dict).

        Rejection sampling per independent group (see :meth:`groups`): each group is redrawn up to
        ``max_tries`` times until its constraints hold, so independent constraints do not multiply
        the rejection rate.  Raises ConfigurationError when a group finds no feasible value.
        """
        if not isinstance(rng, random.Random):
            raise ConfigurationError(f"random() needs a random.Random, got {type(rng).__name__}; "
                                     "pass random.Random(seed)")
        return FeasibleSpace(self).random_config(rng, max_tries)

    def table_rows(self, group: Iterable[str]) -> Optional[List[Config]]:
        """The feasible partial configurations of ``group`` when a :class:`~.table.TableConstraint` reads
        every parameter of it: its rows that satisfy the group's other constraints (computed once
        per space, list order = table order); None otherwise.  Used by :meth:`random` and BO."""
        names = frozenset(group)
        cache = self._table_cache
        if names not in cache:
            cache[names] = feasible_table_rows(names, self.group_constraints(names), self._by_name)
        return cache[names]

    def copy(self, config: Mapping[str, Any]) -> Config:
        """A copy of ``config`` whose lists (and nested lists/dicts) are new objects."""
        return {k: form.copy_json(v) for k, v in config.items()}

    def validate(self, config: Any) -> None:
        """Raise ConfigurationError (one line) unless ``config`` names exactly the parameters and
        holds a legal value for each.  Constraints are *not* checked (see :meth:`is_feasible`)."""
        form.validate_config(self._params, self._by_name, config)

    def is_valid(self, config: Any) -> bool:
        """True when :meth:`validate` would not raise."""
        try:
            self.validate(config)
        except ConfigurationError:
            return False
        return True

    def is_feasible(self, config: Mapping[str, Any]) -> bool:
        """True when ``config`` satisfies every known constraint (called before each measurement)."""
        return all(c.is_satisfied(config) for c in self._constraints)

    def violated_constraints(self, config: Mapping[str, Any]) -> List[str]:
        """Names of the constraints ``config`` violates, in insertion order."""
        return [c.name for c in self._constraints if not c.is_satisfied(config)]

    def normalize(self, config: Any) -> Config:
        """A new dict (insertion order) with each value coerced by ``normalize_value`` (e.g. 3.0 -> 3
        for an int, 1 -> 1.0 for a float).  Unknown or missing names and hopeless values raise."""
        return form.normalize_config(self._params, self._by_name, config)

    def canonical_json(self, config: Any) -> str:
        """Canonical JSON of the normalised configuration: sorted keys, no spaces, floats as repr."""
        return form.canonical_json(self.normalize(config))

    def hash_config(self, config: Any) -> str:
        """SHA-256 hex digest of :meth:`canonical_json` (stable across processes and machines)."""
        return hashlib.sha256(self.canonical_json(config).encode("utf-8")).hexdigest()

    def hash_valid(self, config: Mapping[str, Any]) -> str:
        """:meth:`hash_config` for a configuration that already passed :meth:`validate` (the hot path
        of the search driver).  A legal list value is already canonical (exact element types), so only
        scalar and mapping values go through ``normalize_value``, and not those of the parameter's
        ``normal_type`` (a valid float of a float parameter is its own normal form); the digest equals
        ``hash_config``'s."""
        return form.hash_valid(self._params, config)

    # ------------------------------------------------------------------ size of the space
    def search_space_size(self) -> float:
        """Product of the parameters' sizes, ignoring constraints; ``math.inf`` when continuous or
        too big for a float (use :meth:`log10_search_space_size` then)."""
        total: Any = 1
        for p in self._params:
            size = p.search_space_size()
            if size == math.inf:
                return math.inf
            total *= size
        try:
            return float(total)
        except OverflowError:
            return math.inf

    def log10_search_space_size(self) -> float:
        """log10 of the number of configurations (ignoring constraints); ``math.inf`` when continuous."""
        total = 0.0
        for p in self._params:
            own = getattr(p, "log10_search_space_size", None)
            if callable(own):
                total += float(own())
                continue
            size = p.search_space_size()
            if size == math.inf:
                return math.inf
            total += math.log10(max(size, 1))
        return total

    def is_finite(self) -> bool:
        """True when the space has finitely many configurations (no continuous parameter)."""
        return self.log10_search_space_size() != math.inf

    # ------------------------------------------------------------------ constraint structure
    def groups(self) -> List[Set[str]]:
        """Parameter-name sets connected through constraints (union-find); an unconstrained parameter
        is its own group.  Ordered by the first-inserted member; used by random() and by BO."""
        if self._groups is None:
            self._groups = connected_groups(self.names, self._constraints)
        return [set(g) for g in self._groups]

    def group_constraints(self, group: Iterable[str]) -> List[Constraint]:
        """The constraints reading any parameter of ``group`` (insertion order)."""
        names = set(group)
        return [c for c in self._constraints if names.intersection(c.reads)]

    # ------------------------------------------------------------------ serialisation
    def parameter_info(self) -> str:
        """Canonical string identifying the space (program versions): JSON of the parameter
        definitions sorted by name and the constraints' identities sorted; insertion order and
        constraint names do not matter."""
        params = [p.to_json() for p in sorted(self._params, key=lambda p: p.name)]
        cons = sorted((c.info() for c in self._constraints), key=form.canonical_dumps)
        return form.canonical_dumps({"constraints": cons, "parameters": params})

    def to_json(self, skip_callables: bool = False) -> Dict[str, Any]:
        """``{"parameters": [...], "constraints": [...]}`` in insertion order.

        Python-callable constraints cannot be serialised: ConfigurationError unless
        ``skip_callables=True``, which leaves them out.
        """
        callables = [c.name for c in self._constraints if not c.is_expression]
        if callables and not skip_callables:
            raise ConfigurationError(f"constraint(s) {callables} are Python callables and cannot be "
                                     "serialized; write them as expression strings or pass skip_callables=True")
        return {"parameters": [p.to_json() for p in self._params],
                "constraints": [c.to_json() for c in self._constraints if c.is_expression]}

    @classmethod
    def from_json(cls, data: Any) -> "ConfigurationManipulator":
        """Rebuild a manipulator from :meth:`to_json` output."""
        if not isinstance(data, Mapping) or not isinstance(data.get("parameters"), list):
            raise ConfigurationError("search-space definition must be an object with a 'parameters' list")
        cons = data.get("constraints", [])
        if not isinstance(cons, list):
            raise ConfigurationError("'constraints' must be a list of {'expression': ...} objects")
        space = cls()
        try:
            for p in data["parameters"]:
                space.add_parameter(parameter_from_json(p))
            for c in cons:
                space.add_constraint(Constraint.from_json(c))
        except (ParameterError, ConstraintError) as exc:
            raise ConfigurationError(str(exc)) from None
        return space

    # ------------------------------------------------------------------ display
    def describe_space(self) -> str:
        """One summary line: parameter counts by kind, constraints, groups and size."""
        return display.describe_space(self)

    def print_params(self, file: Optional[TextIO] = None, default: Optional[Mapping[str, Any]] = None,
                     default_header: str = "default") -> None:
        """Print a table of parameters (name, kind, legal values and, when ``default`` is given, its
        value of each parameter under ``default_header``) and the constraints (``--print-params``,
        which passes the tuner's default configuration: its first seed configuration); writes to
        ``file`` or stdout."""
        display.print_params(self, file, default, default_header)
