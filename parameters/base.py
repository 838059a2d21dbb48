"""Parameter base classes: :class:`Parameter` (the value methods every kind implements, the
feasible-space hooks, operator lookup and the operators every parameter has), :class:`PrimitiveParameter`
(kinds with a unit-cube representation, and their neighbour steps), :class:`ComplexParameter`, the
errors, and the kind registry behind :func:`parameter_from_json`.

A *configuration* is a plain ``dict`` mapping parameter names to JSON-compatible
values (numbers, booleans, strings, lists).  Parameters never own a value: they
read and write it in a configuration passed to them, like OpenTuner's API.
How an operator is declared and called is in :mod:`.operators`; hashable keys of
values are in :mod:`.value_keys`.
"""
from __future__ import annotations

import bisect
import math
import random
from types import MappingProxyType
from typing import Any, ClassVar, Dict, Hashable, List, Mapping, Optional, Tuple

from .operators import ARITY_N, OperatorSpec, find_operators, operator
from .value_keys import value_key

Config = Dict[str, Any]

#: largest domain :meth:`Parameter.domain` lists by default
DOMAIN_LIMIT = 100_000
#: most values of a primitive parameter that :meth:`PrimitiveParameter.neighbours` steps over as
#: an ordered list (wider ones, and floats, take Gaussian steps in unit space)
NEIGHBOUR_GRID_LIMIT = 2000
_FLOAT_SIGMAS = (0.01, 0.05, 0.2)


class ParameterError(ValueError):
    """A parameter definition or value is invalid (message is one line, names the fix)."""


class ConfigurationError(ValueError):
    """A configuration or search-space definition is invalid (one-line message naming the fix)."""


class Parameter:
    """Base of all parameters.  Subclasses implement the abstract value methods."""

    #: registry of concrete parameter classes by their ``kind`` (for JSON round-trips)
    _kinds: ClassVar[Dict[str, type]] = {}
    #: short type name used in JSON, technique names and representations
    kind: ClassVar[str] = ""
    #: how Bayesian optimization measures distances between values: ``"unit"`` (unit values),
    #: ``"category"`` (Hamming over :meth:`domain`), ``"permutation"``, ``"array"``, ``"selector"``;
    #: empty: no distance (BO refuses the kind)
    encoding: ClassVar[str] = ""
    #: how a value is made hashable for identity tests: ``"plain"`` (as it is: numbers, strings,
    #: booleans of a kind that never mixes them with numbers), ``"tuple"`` (a flat list) or ``"key"``
    #: (:func:`~.value_keys.value_key`)
    key_style: ClassVar[str] = "key"
    #: a legal value of exactly this type is its own normal form (:meth:`normalize_value` returns it
    #: unchanged), so hashing a valid configuration may skip the call; None: always normalize
    normal_type: ClassVar[Optional[type]] = None
    #: the operators of a class by name, set on each class by its first :meth:`operators` call
    _tl_operator_cache: ClassVar[Optional[Mapping[str, OperatorSpec]]]

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        kind = cls.__dict__.get("kind")
        if kind:
            if kind in Parameter._kinds and Parameter._kinds[kind] is not cls:
                raise TypeError(f"parameter kind {kind!r} registered twice")
            Parameter._kinds[kind] = cls

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ParameterError(f"parameter name must be a non-empty string, got {name!r}")
        self.name = name

    # ---- value access -------------------------------------------------------
    def get_value(self, config: Mapping[str, Any]) -> Any:
        return config[self.name]

    def set_value(self, config: Config, value: Any) -> None:
        config[self.name] = value

    # ---- to implement -------------------------------------------------------
    def seed_value(self) -> Any:
        """A deterministic default value (used for the manipulator's seed config)."""
        raise NotImplementedError

    def random_value(self, rng: random.Random) -> Any:
        """A uniformly random legal value."""
        raise NotImplementedError

    def is_valid(self, value: Any) -> bool:
        """True when ``value`` is a legal value of this parameter (exact type rules)."""
        raise NotImplementedError

    def normalize_value(self, value: Any) -> Any:
        """Coerce a near-legal value (e.g. 3.0 for an int, JSON list) to a legal one or raise ParameterError."""
        raise NotImplementedError

    def search_space_size(self) -> float:
        """Number of distinct values (``math.inf`` for continuous)."""
        raise NotImplementedError

    def to_json(self) -> Dict[str, Any]:
        """JSON-compatible definition; ``parameter_from_json(p.to_json()) == p``."""
        raise NotImplementedError

    # ---- the feasible-space hooks ------------------------------------------------
    def domain(self, limit: int = DOMAIN_LIMIT) -> Optional[List[Any]]:
        """Every legal value in the kind's natural order (called by the feasible space, BO and
        replay), or None when the parameter is infinite, has more than ``limit`` values or its kind
        cannot list them.  A kind lists its values by overriding :meth:`_domain`."""
        size = self.search_space_size()
        if not math.isfinite(size) or size > limit:
            return None
        return self._domain(limit)

    def _domain(self, limit: int) -> Optional[List[Any]]:
        """The values of this finite parameter (at most ``limit`` of them); None: not listable."""
        return None

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[Any]:
        """``count`` uniformly random values (the feasible space's sampling of free parameters).
        This default calls :meth:`random_value`; common kinds draw vectorised from ``np_rng`` (a
        ``numpy.random.Generator``) with the same distribution."""
        return [self.random_value(rng) for _ in range(count)]

    def neighbours(self, value: Any, rng: random.Random, k: int) -> List[Any]:
        """About ``k`` legal values near ``value`` (BO's local search; constraints are the caller's).
        This default, for kinds without a natural move, draws a few random values."""
        return [self.random_value(rng) for _ in range(min(k, 4))]

    def order_positions(self) -> Optional[Dict[Hashable, int]]:
        """Each value's position in the kind's order (by :func:`~.value_keys.value_key`), or None for unordered
        kinds and ordered ones too large to list."""
        return None

    # ---- shared behaviour ---------------------------------------------------
    def normalize(self, config: Config) -> None:
        self.set_value(config, self.normalize_value(self.get_value(config)))

    def describe(self) -> str:
        """One line: kind and legal range."""
        return self.kind

    def structure(self) -> List[Tuple[str, int]]:
        """The sub-parameters this parameter is made of, as (parameter type name, count) pairs; called
        when the cross-session store describes a space's structure (DeepTuner thesis §5.1.1). A plain
        parameter has none; arrays and selectors override this."""
        return []

    def copy_value(self, value: Any) -> Any:
        return list(value) if isinstance(value, list) else value

    @classmethod
    def operators(cls) -> Mapping[str, OperatorSpec]:
        """All operators available on this class, by name (computed once per class, read-only)."""
        cached = cls.__dict__.get("_tl_operator_cache")
        if cached is None:
            cached = MappingProxyType(find_operators(cls))
            cls._tl_operator_cache = cached
        return cached

    def apply_operator(self, name: str, child: Config, parents: List[Config],
                       rng: random.Random, **kwargs: Any) -> Any:
        """Call operator ``name`` with the calling convention of :mod:`.operators`; returns what it returns."""
        spec = self.operators().get(name)
        if spec is None:
            raise ParameterError(f"parameter kind {self.kind!r} has no operator {name!r}; "
                                 f"choose one of {sorted(self.operators())}")
        fn = getattr(self, name)
        if spec.arity == ARITY_N:
            return fn(child, list(parents), rng=rng, **kwargs)
        need = spec.arity - 1
        if len(parents) < need:
            raise ParameterError(f"operator {name!r} needs {need} parents, got {len(parents)}")
        return fn(child, *parents[:need], rng=rng, **kwargs)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}: {self.describe()})"

    # ---- operators shared by every parameter -------------------------------
    @operator(1)
    def op1_nop(self, child: Config, *, rng: random.Random) -> None:
        """The null operator: does nothing."""

    @operator(1)
    def op1_randomize(self, child: Config, *, rng: random.Random) -> None:
        """Set the value to a uniformly random legal value."""
        self.set_value(child, self.random_value(rng))

    @operator(ARITY_N)
    def opn_stochastic_mix(self, child: Config, parents: List[Config], *, rng: random.Random,
                           weights: Optional[List[float]] = None) -> None:
        """Set the child's value to one parent's value, chosen with the given weights."""
        if not parents:
            return
        w = list(weights) if weights else [1.0] * len(parents)
        w = (w + [0.0] * len(parents))[: len(parents)]
        if sum(w) <= 0:
            w = [1.0] * len(parents)
        src = rng.choices(parents, weights=w, k=1)[0]
        self.set_value(child, self.copy_value(self.get_value(src)))


class PrimitiveParameter(Parameter):
    """A parameter with a unit-cube representation: ``get_unit_value`` in [0, 1]."""

    encoding = "unit"
    key_style = "plain"

    def get_unit_value(self, config: Mapping[str, Any]) -> float:
        raise NotImplementedError

    def set_unit_value(self, config: Config, unit: float) -> None:
        raise NotImplementedError

    def legal_range(self) -> Tuple[Any, Any]:
        raise NotImplementedError

    # ---- neighbours ---------------------------------------------------------------------------
    def _grid_values(self) -> Optional[List[Any]]:
        """The ordered values neighbour steps walk over (None: take unit-space steps)."""
        return self.domain(NEIGHBOUR_GRID_LIMIT)

    def _grid(self) -> Optional[Tuple[List[Any], Dict[Hashable, int], List[float]]]:
        """(ordered values, their positions by value key, their unit values), computed once."""
        grid = self.__dict__.get("_tl_grid", False)
        if grid is False:
            dom = self._grid_values()
            grid = None if dom is None else (dom, {value_key(v): i for i, v in enumerate(dom)},
                                             [self.get_unit_value({self.name: v}) for v in dom])
            self._tl_grid = grid
        return grid

    def order_positions(self) -> Optional[Dict[Hashable, int]]:
        grid = self._grid()
        return None if grid is None else grid[1]

    def _unit_step(self, value: Any, sigma: float, rng: random.Random) -> Any:
        """``value`` moved by a Gaussian step of ``sigma`` in unit space."""
        cfg = {self.name: value}
        self.set_unit_value(cfg, self.get_unit_value(cfg) + rng.gauss(0.0, sigma))
        return cfg[self.name]

    def neighbours(self, value: Any, rng: random.Random, k: int) -> List[Any]:
        """Listable kinds: the values one and two steps away, plus Gaussian unit steps (sigma 0.05
        and 0.2) for wide ranges; others: Gaussian unit steps (sigma 0.01, 0.05, 0.2)."""
        grid = self._grid()
        if grid is None:
            out = []
            for t in range(k):
                v = self._unit_step(value, _FLOAT_SIGMAS[t % 3], rng)
                if v != value:
                    out.append(v)
            return out
        dom, pos, units = grid
        i = pos.get(value_key(value))
        if i is None:
            return []
        n = len(dom)
        if n - 1 <= k:
            return [v for j, v in enumerate(dom) if j != i]
        picked = {j for j in (i - 1, i + 1, i - 2, i + 2) if 0 <= j < n}
        for t in range(2 * k):
            if len(picked) >= k:
                break
            u = units[i] + rng.gauss(0.0, 0.05 if t % 2 == 0 else 0.2)
            j = min(bisect.bisect_left(units, u), n - 1)
            if j > 0 and units[j] - u > u - units[j - 1]:
                j -= 1
            if j != i:
                picked.add(j)
        return [dom[j] for j in sorted(picked)]


class ComplexParameter(Parameter):
    """A parameter without a natural unit-cube mapping (categorical, permutation, array)."""


def parameter_from_json(data: Mapping[str, Any]) -> Parameter:
    """Rebuild a parameter from ``Parameter.to_json()`` output; one-line error on bad input."""
    if not isinstance(data, Mapping) or "kind" not in data:
        raise ParameterError(f"parameter definition must be an object with a 'kind' field, got {data!r}")
    kind = data["kind"]
    cls = Parameter._kinds.get(kind)
    if cls is None:
        raise ParameterError(f"unknown parameter kind {kind!r}; known kinds: {sorted(Parameter._kinds)}")
    fields = {k: v for k, v in data.items() if k != "kind"}
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ParameterError(f"bad fields for parameter kind {kind!r}: {exc}") from None
