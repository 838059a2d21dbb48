"""User priors: what a designer believes about good values of each parameter (HyperMapper 2.0's
priors, used by πBO).

Three kinds of belief, each about one parameter:

* :class:`Beta` ``(a, b)`` on the parameter's own unit interval (numeric and ordinal parameters):
  the unit value is drawn from ``Beta(a, b)`` and mapped to a legal value the way the parameter maps
  every unit value, so a log-scaled parameter gets a Beta on its log scale.  ``Beta(1, 1)`` is
  uniform; ``Beta(5, 2)`` leans to the top of the range.
* :class:`Probabilities` ``({value: p})`` for a parameter whose values can be listed (categorical,
  boolean, switch, ordinal, small integer ranges); values not named share what is left of 1.
* :class:`Near` ``(value, confidence)``: with probability ``confidence`` the value is drawn near
  ``value`` (categorical kinds: exactly ``value``; unit kinds: a normal of standard deviation
  :data:`~.unit_dists.NEAR_WIDTH` in unit space, truncated to ``[0, 1]``), otherwise uniformly.
  The prior near a whole configuration (``ConfigurationManipulator.set_prior_near``) uses the local
  parts of these for every parameter it names, with one near-or-uniform decision per configuration.

Permutations, schedules, selectors and arrays take no prior: declaring one raises
ConfigurationError.

A prior is bound to its parameter (:meth:`Prior.bind`) into an object that draws values
(:meth:`Bound.draw`, from a ``random.Random``) and weighs them (:meth:`Bound.log_weight`: the log of
the prior's probability of the value relative to the uniform one; for a parameter with at most
:data:`LISTED_LIMIT` values the exact probability mass of the value under the drawing rule).  The
weights let constrained spaces sample their feasible leaves in proportion to the prior, and let
Bayesian optimization multiply its acquisition by the prior (πBO).
"""
from __future__ import annotations

import bisect
import json
import math
import random
from typing import Any, Dict, Hashable, List, Mapping, Optional

import numpy as np

from .base import ConfigurationError, Parameter
from .unit_dists import BetaDist, NearDist, unit_masses
from .value_keys import value_key

#: parameters with at most this many values weigh values by their exact probability mass
LISTED_LIMIT = 2000
#: floor of a log weight (a prior never rules a value out entirely)
MIN_LOG_WEIGHT = math.log(1e-12)


class Prior:
    """A belief about one parameter; :meth:`bind` checks it against the parameter."""

    def bind(self, param: Parameter) -> "Bound":
        """Called when the prior is attached to a search space; returns the bound prior or raises
        ConfigurationError (one line) when this kind of prior does not fit the parameter."""
        raise NotImplementedError

    def to_json(self) -> Dict[str, Any]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _dumps(self.to_json()) == _dumps(other.to_json())

    def __hash__(self) -> int:
        return hash(_dumps(self.to_json()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json()})"


def _dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _positive(name: str, what: str, x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        raise ConfigurationError(f"prior of {name!r}: {what} must be a number > 0, got {x!r}")
    return float(x)


class Beta(Prior):
    """``Beta(a, b)`` on the unit interval of a numeric or ordinal parameter (a, b > 0)."""

    def __init__(self, a: float, b: float) -> None:
        self.a, self.b = a, b

    def bind(self, param: Parameter) -> "Bound":
        a = _positive(param.name, "Beta's a", self.a)
        b = _positive(param.name, "Beta's b", self.b)
        _unit_kind(param, "Beta(a, b)")
        return _UnitBound(param, self, BetaDist(a, b))

    def to_json(self) -> Dict[str, Any]:
        return {"beta": [self.a, self.b]}


class Probabilities(Prior):
    """Probabilities of some values of a listable parameter; values not named share the rest."""

    def __init__(self, probabilities: Mapping[Any, float]) -> None:
        self.probabilities = dict(probabilities)

    def bind(self, param: Parameter) -> "Bound":
        values = _listed(param, "probabilities")
        if not self.probabilities:
            raise ConfigurationError(f"prior of {param.name!r}: probabilities name no value; "
                                     "give at least one value: probability")
        by_key = {value_key(v): i for i, v in enumerate(values)}
        by_text: Dict[str, int] = {}
        for i, v in enumerate(values):
            by_text.setdefault(str(v), i)
            by_text.setdefault(json.dumps(v), i)
        probs = np.zeros(len(values))
        named = np.zeros(len(values), dtype=bool)
        for key, p in self.probabilities.items():
            at = by_key.get(value_key(key))
            if at is None and isinstance(key, str):
                at = by_text.get(key)
            if at is None:
                raise ConfigurationError(f"prior of {param.name!r}: {key!r} is not one of its values "
                                         f"({param.describe()})")
            probs[at] = _positive(param.name, f"the probability of {key!r}", p)
            named[at] = True
        total, rest = float(probs.sum()), int((~named).sum())
        if rest == 0 and abs(total - 1.0) > 1e-6:
            raise ConfigurationError(f"prior of {param.name!r}: the probabilities sum to {total:g}; "
                                     "make them sum to 1")
        if rest and total >= 1.0 - 1e-9:
            raise ConfigurationError(f"prior of {param.name!r}: the probabilities sum to {total:g}, leaving "
                                     f"nothing for the {rest} value(s) not named; lower them below 1 in all")
        probs[~named] = (1.0 - total) / rest if rest else 0.0
        return _ListBound(param, self, values, probs / probs.sum())

    def to_json(self) -> Dict[str, Any]:
        return {"probabilities": {(k if isinstance(k, str) else json.dumps(k)): p
                                  for k, p in self.probabilities.items()}}


class Near(Prior):
    """With probability ``confidence`` (0 < c < 1) a value near ``value``, otherwise a uniform one."""

    def __init__(self, value: Any, confidence: float) -> None:
        self.value, self.confidence = value, confidence

    def bind(self, param: Parameter) -> "Bound":
        return self._bind(param, self.confidence, False)

    def local(self, param: Parameter) -> "Bound":
        """The local part alone (confidence 1): the value itself for a categorical kind, a normal of
        standard deviation :data:`~.unit_dists.NEAR_WIDTH` around it in unit space otherwise.  Used by
        the joint prior near a configuration (:meth:`SpacePrior.set_near`)."""
        return self._bind(param, 1.0, True)

    def _bind(self, param: Parameter, c: Any, local: bool) -> "Bound":
        if not local and (isinstance(c, bool) or not isinstance(c, (int, float)) or not 0.0 < c < 1.0):
            raise ConfigurationError(f"prior of {param.name!r}: confidence must be a number between 0 and 1 "
                                     f"(exclusive), got {c!r}")
        try:
            centre = param.normalize_value(self.value)
        except (ValueError, TypeError):
            centre = None
        if centre is None or not param.is_valid(centre) or centre != self.value:
            raise ConfigurationError(f"prior of {param.name!r}: {self.value!r} is not one of its values "
                                     f"({param.describe()})")
        if param.encoding == "unit":
            u0 = param.get_unit_value({param.name: centre})  # type: ignore[attr-defined]
            return _UnitBound(param, self, NearDist(u0, float(c)))
        values = _listed(param, "a 'near' prior")
        probs = np.full(len(values), (1.0 - c) / len(values))
        probs[[value_key(v) for v in values].index(value_key(centre))] += c
        return _ListBound(param, self, values, probs)

    def to_json(self) -> Dict[str, Any]:
        return {"near": self.value, "confidence": self.confidence}


def _unit_kind(param: Parameter, what: str) -> None:
    if param.encoding != "unit":
        hint = ("give probabilities instead" if param.encoding == "category"
                else "this kind takes no prior")
        raise ConfigurationError(f"prior of {param.name!r}: {what} needs a numeric or ordinal parameter, "
                                 f"not one of kind {param.kind or type(param).__name__}; {hint}")


def _listed(param: Parameter, what: str) -> List[Any]:
    if param.encoding not in ("unit", "category"):
        raise ConfigurationError(f"prior of {param.name!r}: a parameter of kind {param.kind or type(param).__name__} "
                                 "takes no prior; priors apply to numeric, ordinal, categorical and boolean "
                                 "parameters")
    values = param.domain(LISTED_LIMIT)
    if values is None:
        raise ConfigurationError(f"prior of {param.name!r}: {what} needs a parameter with at most "
                                 f"{LISTED_LIMIT} values; use Beta(a, b) for a wide range")
    return values


# ---- bound priors ---------------------------------------------------------------------------------
class Bound:
    """A prior attached to one parameter: draws values and weighs them."""

    def __init__(self, param: Parameter, prior: Prior) -> None:
        self.param, self.prior = param, prior

    def draw(self, rng: random.Random) -> Any:
        """One value drawn from the prior (called instead of ``param.random_value``)."""
        raise NotImplementedError

    def log_weight(self, value: Any) -> float:
        """log of the prior's probability (density) of ``value`` over the uniform one."""
        raise NotImplementedError

    def mode(self) -> Any:
        """The prior's most probable value (the first of the listed values on ties); called when an
        initial design starts from the prior's mode."""
        raise NotImplementedError


class _ListBound(Bound):
    """A prior given as one probability per listed value."""

    def __init__(self, param: Parameter, prior: Prior, values: List[Any], probs: np.ndarray) -> None:
        super().__init__(param, prior)
        self.values = values
        self.top = int(np.argmax(probs))
        self.cum = np.cumsum(probs).tolist()
        n = len(values)
        self.logw = {value_key(v): max(math.log(p * n), MIN_LOG_WEIGHT) if p > 0 else MIN_LOG_WEIGHT
                     for v, p in zip(values, probs)}

    def draw(self, rng: random.Random) -> Any:
        i = min(bisect.bisect_right(self.cum, rng.random() * self.cum[-1]), len(self.values) - 1)
        return self.param.copy_value(self.values[i])

    def log_weight(self, value: Any) -> float:
        return self.logw.get(value_key(value), MIN_LOG_WEIGHT)

    def mode(self) -> Any:
        return self.param.copy_value(self.values[self.top])


class _UnitBound(Bound):
    """A distribution on the unit interval, mapped through the parameter's own encoding."""

    def __init__(self, param: Parameter, prior: Prior, dist: Any) -> None:
        super().__init__(param, prior)
        self.dist = dist
        self.logw: Optional[Dict[Hashable, float]] = None
        values = param.domain(LISTED_LIMIT)
        self.values = values
        if values is not None:
            mass = unit_masses(param, values, dist)
            self.logw = {value_key(v): max(math.log(m * len(values)), MIN_LOG_WEIGHT) if m > 0
                         else MIN_LOG_WEIGHT for v, m in zip(values, mass)}

    def draw(self, rng: random.Random) -> Any:
        cfg: Dict[str, Any] = {}
        self.param.set_unit_value(cfg, self.dist.sample(rng))  # type: ignore[attr-defined]
        return cfg[self.param.name]

    def log_weight(self, value: Any) -> float:
        if self.logw is not None:
            return self.logw.get(value_key(value), MIN_LOG_WEIGHT)
        u = self.param.get_unit_value({self.param.name: value})  # type: ignore[attr-defined]
        return max(self.dist.logpdf(u), MIN_LOG_WEIGHT)

    def mode(self) -> Any:
        if self.values is not None and self.logw is not None:
            logw = self.logw
            return self.param.copy_value(max(self.values, key=lambda v: logw[value_key(v)]))
        cfg: Dict[str, Any] = {}
        self.param.set_unit_value(cfg, self.dist.mode())  # type: ignore[attr-defined]
        return cfg[self.param.name]


def prior_from_json(name: str, data: Any) -> Prior:
    """A prior from its JSON form: ``{"beta": [a, b]}``, ``{"probabilities": {value: p}}`` or
    ``{"near": value, "confidence": c}``; ConfigurationError naming the problem otherwise."""
    if isinstance(data, Mapping) and set(data) == {"beta"}:
        ab = data["beta"]
        if not isinstance(ab, list) or len(ab) != 2:
            raise ConfigurationError(f"prior of {name!r}: \"beta\" must be a list [a, b], got {ab!r}")
        return Beta(ab[0], ab[1])
    if isinstance(data, Mapping) and set(data) == {"probabilities"}:
        if not isinstance(data["probabilities"], Mapping):
            raise ConfigurationError(f"prior of {name!r}: \"probabilities\" must be an object "
                                     "{value: probability}")
        return Probabilities(data["probabilities"])
    if isinstance(data, Mapping) and set(data) == {"near", "confidence"}:
        return Near(data["near"], data["confidence"])
    raise ConfigurationError(f"prior of {name!r}: expected {{\"beta\": [a, b]}}, {{\"probabilities\": "
                             f"{{value: p}}}} or {{\"near\": value, \"confidence\": c}}, got {_dumps(data)[:80]}")
