"""The priors of a search space (``ConfigurationManipulator.prior``), by parameter name.

Two kinds of declaration: a prior per parameter (:mod:`.priors`), and a prior *near a
configuration* with confidence ``c`` (:meth:`SpacePrior.set_near`): with probability ``c`` a random
configuration is drawn near that configuration (every parameter it names from the local part of a
:class:`~.priors.Near` prior: the same category, or a normal of width ``NEAR_WIDTH`` in unit
space), otherwise those parameters are uniform.  Its weight never falls below ``1 - c`` times the
uniform one anywhere, which bounds what a wrong centre costs.

Every random configuration a technique asks for (``manipulator.random`` and the feasible space's
``sample``) draws from the priors (parameters without one stay uniform); known constraints still
apply (see :mod:`.feasible`).  The JSON form, read by ``--prior FILE`` and stored with a run so that
``--resume`` keeps it::

    {"near": {"configuration": {"tile": 32, "layout": "row"}, "confidence": 0.7},
     "parameters": {"unroll": {"beta": [4, 1.5]},
                    "layout": {"probabilities": {"row": 0.8}}}}

Both keys are optional; a parameter under ``"parameters"`` leaves the ``"near"`` configuration.
"""
from __future__ import annotations

import bisect
import math
import random
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

import numpy as np

from .base import ConfigurationError, Parameter
from .priors import Bound, Near, Prior, prior_from_json


class NamedParameters(Protocol):
    """What a prior reads of its search space (``ConfigurationManipulator`` is one)."""

    @property
    def names(self) -> Sequence[str]:
        """The parameter names, in order."""
        ...

    def parameter(self, name: str) -> Parameter:
        """The parameter called ``name``."""
        ...

    def __contains__(self, name: object) -> bool:
        """Whether a parameter is called ``name``."""
        ...


class SpacePrior:
    """The priors of a search space: per-parameter priors and at most one prior near a configuration;
    empty means uniform sampling everywhere."""

    def __init__(self) -> None:
        self._bound: Dict[str, Bound] = {}      # per-parameter priors
        self._local: Dict[str, Bound] = {}      # local parts of the prior near a configuration
        self._centre: Dict[str, Any] = {}
        self._confidence = 0.0
        #: grows with every change, so caches of prior weights (the feasible space's) know when to refresh
        self.version = 0
        self._rows: Dict[int, Any] = {}     # id(rows) -> (rows, version, cumulative weights)
        self._views: Dict[bool, Any] = {}   # near? -> (version, view)

    # ---- declaring ------------------------------------------------------------------------------
    def set(self, param: Parameter, prior: Prior) -> None:
        """Attach ``prior`` to ``param`` (replacing its earlier one, and taking it out of the
        configuration of :meth:`set_near`); ConfigurationError when it does not fit the parameter."""
        if not isinstance(prior, Prior):
            raise ConfigurationError(f"prior of {param.name!r}: expected Beta(a, b), Probabilities({{...}}) "
                                     f"or Near(value, confidence), got {type(prior).__name__}")
        self._bound[param.name] = prior.bind(param)
        self._local.pop(param.name, None)
        self._centre.pop(param.name, None)
        self.version += 1

    def set_near(self, params: Sequence[Parameter], config: Mapping[str, Any], confidence: float) -> None:
        """The prior near ``config`` (values of ``params``, a partial configuration is fine) with
        ``confidence`` in (0, 1), replacing an earlier one and the per-parameter priors of its
        parameters; ConfigurationError (one line) when a value or the confidence does not fit."""
        local = {}
        for p in params:
            near = Near(config[p.name], confidence)
            near.bind(p)                      # checks the value and the confidence
            local[p.name] = near.local(p)
        for name in local:
            self._bound.pop(name, None)
        self._local, self._centre, self._confidence = local, {p.name: config[p.name] for p in params}, confidence
        self.version += 1

    def clear(self) -> None:
        """Forget every prior (sampling becomes uniform again)."""
        self._bound, self._local, self._centre = {}, {}, {}
        self.version += 1

    # ---- reading ----------------------------------------------------------------------------------
    def __bool__(self) -> bool:
        return bool(self._bound or self._local)

    def __contains__(self, name: object) -> bool:
        return name in self._bound or name in self._local

    @property
    def names(self) -> List[str]:
        return list(self._bound) + [n for n in self._local if n not in self._bound]

    def priors(self) -> Dict[str, Prior]:
        """The per-parameter prior of each parameter that has one."""
        return {n: b.prior for n, b in self._bound.items()}

    def near(self) -> Optional[Tuple[Dict[str, Any], float]]:
        """(configuration, confidence) of the prior near a configuration, or None."""
        return (dict(self._centre), self._confidence) if self._local else None

    # ---- sampling ---------------------------------------------------------------------------------
    def component(self, rng: random.Random) -> "SpacePrior":
        """The priors one random configuration is drawn from: with a prior near a configuration,
        its local part (probability ``confidence``, one ``rng.random()`` call) or uniform values for
        its parameters; without one, these priors themselves (no random number used)."""
        if not self._local:
            return self
        return self.view(rng.random() < self._confidence)

    def view(self, near: bool) -> "SpacePrior":
        """Per-parameter priors only: the local parts of the near prior included when ``near``."""
        cached = self._views.get(near)
        if cached is None or cached[0] != self.version:
            view = SpacePrior()
            view._bound = {**self._bound, **(self._local if near else {})}
            view.version = self.version
            cached = self._views[near] = (self.version, view)
        return cached[1]

    def mode(self) -> Dict[str, Any]:
        """The most probable value of every parameter with a prior (the centre of the prior near a
        configuration, each per-parameter prior's mode); empty without priors.  Called by initial
        designs that start from the prior's mode (known constraints are not checked here)."""
        out = dict(self._centre)
        out.update((n, b.mode()) for n, b in self._bound.items())
        return out

    def split(self, rng: random.Random, count: int) -> List[Tuple["SpacePrior", List[int]]]:
        """:meth:`component` for ``count`` configurations at once: (priors, indices) pairs."""
        if not self._local:
            return [(self, list(range(count)))]
        near = [rng.random() < self._confidence for _ in range(count)]
        return [(self.view(flag), [i for i in range(count) if near[i] == flag]) for flag in (True, False)]

    def draw(self, param: Parameter, rng: random.Random) -> Any:
        """A value of ``param``: from its prior when it has one, else ``param.random_value(rng)``
        (the near prior's parameters: call on :meth:`component` first)."""
        bound = self._bound.get(param.name)
        return param.random_value(rng) if bound is None else bound.draw(rng)

    def choose_row(self, rows: Sequence[Mapping[str, Any]], names: Any, rng: random.Random) -> int:
        """Index of a row of a table constraint's feasible rows (partial configurations over
        ``names``): uniform when no parameter there has a prior (one ``rng.randrange``), else in
        proportion to the rows' prior weights (computed once per list of rows and prior version)."""
        if not any(n in self._bound for n in names):
            return rng.randrange(len(rows))
        cached = self._rows.get(id(rows))
        if cached is None or cached[0] is not rows or cached[1] != self.version:
            w = self._product_weights(rows, names)
            cum = np.cumsum(np.exp(w - w.max())).tolist()
            cached = self._rows[id(rows)] = (rows, self.version, cum)
        cum = cached[2]
        return min(bisect.bisect_right(cum, rng.random() * cum[-1]), len(rows) - 1)

    def value_log_weights(self, name: str, values: Sequence[Any]) -> Optional[np.ndarray]:
        """log weights of ``values`` of parameter ``name`` under its per-parameter prior; None when
        it has none."""
        bound = self._bound.get(name)
        if bound is None:
            return None
        return np.fromiter((bound.log_weight(v) for v in values), dtype=float, count=len(values))

    # ---- weighing (πBO) ---------------------------------------------------------------------------
    def log_weights(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """log prior weight (over uniform) of each configuration: the per-parameter priors' sum plus
        ``log(c * local + 1 - c)`` of the prior near a configuration."""
        out = self._product_weights(configs, None)
        if self._local:
            near = np.zeros(len(configs))
            for name, bound in self._local.items():
                near += np.fromiter((bound.log_weight(c[name]) for c in configs), dtype=float, count=len(configs))
            c = self._confidence
            out += np.logaddexp(math.log(c) + near, math.log1p(-c))
        return out

    def _product_weights(self, configs: Sequence[Mapping[str, Any]], names: Any) -> np.ndarray:
        out = np.zeros(len(configs))
        for name, bound in self._bound.items():
            if names is None or name in names:
                out += np.fromiter((bound.log_weight(c[name]) for c in configs), dtype=float, count=len(configs))
        return out

    # ---- JSON ---------------------------------------------------------------------------------------
    def to_json(self) -> Dict[str, Any]:
        """``{"parameters": {name: prior}, "near": {...}}`` (the schema in the module docstring)."""
        out: Dict[str, Any] = {"parameters": {n: b.prior.to_json() for n, b in self._bound.items()}}
        if self._local:
            out["near"] = {"configuration": dict(self._centre), "confidence": self._confidence}
        return out

    def load_json(self, data: Any, manipulator: NamedParameters) -> None:
        """Add the priors of a JSON document (the module docstring's schema) for ``manipulator``'s
        parameters; ConfigurationError naming the first problem (nothing is changed then)."""
        if not isinstance(data, Mapping):
            raise ConfigurationError("a prior file must hold a JSON object with \"parameters\" and/or \"near\"")
        unknown = sorted(set(data) - {"parameters", "near"})
        if unknown:
            raise ConfigurationError(f"unknown key(s) {unknown} in the prior; use \"parameters\" and/or \"near\"")
        params = data.get("parameters", {})
        if not isinstance(params, Mapping):
            raise ConfigurationError("\"parameters\" must be an object {name: prior}")
        near = data.get("near")
        if near is not None and (not isinstance(near, Mapping) or set(near) != {"configuration", "confidence"}
                                 or not isinstance(near["configuration"], Mapping)):
            raise ConfigurationError("\"near\" must be {\"configuration\": {name: value}, \"confidence\": c}")
        trial = SpacePrior()
        trial._bound, trial._local, trial._centre = dict(self._bound), dict(self._local), dict(self._centre)
        trial._confidence = self._confidence
        if near is not None:
            trial.set_near([_known(manipulator, n) for n in near["configuration"]], near["configuration"],
                           near["confidence"])
        for name, prior in params.items():
            trial.set(_known(manipulator, name), prior_from_json(name, prior))
        self._bound, self._local, self._centre = trial._bound, trial._local, trial._centre
        self._confidence = trial._confidence
        self.version += 1


def _known(manipulator: NamedParameters, name: str) -> Parameter:
    if name not in manipulator:
        raise ConfigurationError(f"the prior names unknown parameter {name!r}; known: {', '.join(manipulator.names)}")
    return manipulator.parameter(name)
