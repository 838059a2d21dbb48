"""The priors of a search space (``ConfigurationManipulator.prior``), by parameter name.

Every random configuration a technique asks for (``manipulator.random`` and the feasible space's
``sample``) draws each parameter that has a prior from it (parameters without one stay uniform);
known constraints still apply (see :mod:`.feasible`).  The JSON form, read by ``--prior FILE`` and
stored with a run so that ``--resume`` keeps it::

    {"near": {"configuration": {"tile": 32, "layout": "row"}, "confidence": 0.7},
     "parameters": {"unroll": {"beta": [4, 1.5]},
                    "layout": {"probabilities": {"row": 0.8}}}}

Both keys are optional; an entry under ``"parameters"`` replaces the ``"near"`` one of its parameter.
"""
from __future__ import annotations

import bisect
import random
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence

import numpy as np

from .base import ConfigurationError, Parameter
from .priors import Bound, Near, Prior, prior_from_json

if TYPE_CHECKING:
    from .manipulator import ConfigurationManipulator


class SpacePrior:
    """Bound priors by parameter name (insertion order); empty means uniform sampling everywhere."""

    def __init__(self) -> None:
        self._bound: Dict[str, Bound] = {}
        #: grows with every change, so caches of prior weights (the feasible space's) know when to refresh
        self.version = 0
        self._rows: Dict[int, Any] = {}     # id(rows) -> (rows, version, cumulative weights)

    def set(self, param: Parameter, prior: Prior) -> None:
        """Attach ``prior`` to ``param`` (replacing its earlier one); ConfigurationError when it does
        not fit the parameter."""
        if not isinstance(prior, Prior):
            raise ConfigurationError(f"prior of {param.name!r}: expected Beta(a, b), Probabilities({{...}}) "
                                     f"or Near(value, confidence), got {type(prior).__name__}")
        self._bound[param.name] = prior.bind(param)
        self.version += 1

    def clear(self) -> None:
        """Forget every prior (sampling becomes uniform again)."""
        self._bound = {}
        self.version += 1

    def __bool__(self) -> bool:
        return bool(self._bound)

    def __contains__(self, name: object) -> bool:
        return name in self._bound

    @property
    def names(self) -> List[str]:
        return list(self._bound)

    def priors(self) -> Dict[str, Prior]:
        """The declared prior of each parameter that has one."""
        return {n: b.prior for n, b in self._bound.items()}

    def draw(self, param: Parameter, rng: random.Random) -> Any:
        """A value of ``param``: from its prior when it has one, else ``param.random_value(rng)``."""
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
            w = self.log_weights(rows, names)
            cum = np.cumsum(np.exp(w - w.max())).tolist()
            cached = self._rows[id(rows)] = (rows, self.version, cum)
        cum = cached[2]
        return min(bisect.bisect_right(cum, rng.random() * cum[-1]), len(rows) - 1)

    def log_weights(self, configs: Sequence[Mapping[str, Any]], names: Any = None) -> np.ndarray:
        """log prior weight (over uniform) of each configuration: the sum over the parameters with a
        prior (those in ``names`` only, when given: the keys of partial configurations)."""
        out = np.zeros(len(configs))
        for name, bound in self._bound.items():
            if names is not None and name not in names:
                continue
            out += np.fromiter((bound.log_weight(c[name]) for c in configs), dtype=float, count=len(configs))
        return out

    def value_log_weights(self, name: str, values: Sequence[Any]) -> Optional[np.ndarray]:
        """log weights of ``values`` of parameter ``name``; None when it has no prior."""
        bound = self._bound.get(name)
        if bound is None:
            return None
        return np.fromiter((bound.log_weight(v) for v in values), dtype=float, count=len(values))

    def to_json(self) -> Dict[str, Any]:
        """``{"parameters": {name: prior}}`` (the schema in the module docstring)."""
        return {"parameters": {n: b.prior.to_json() for n, b in self._bound.items()}}

    def load_json(self, data: Any, manipulator: "ConfigurationManipulator") -> None:
        """Add the priors of a JSON document (the module docstring's schema) for ``manipulator``'s
        parameters; ConfigurationError naming the first problem (nothing is changed then)."""
        if not isinstance(data, Mapping):
            raise ConfigurationError("a prior file must hold a JSON object with \"parameters\" and/or \"near\"")
        unknown = sorted(set(data) - {"parameters", "near"})
        if unknown:
            raise ConfigurationError(f"unknown key(s) {unknown} in the prior; use \"parameters\" and/or \"near\"")
        found: Dict[str, Prior] = {}
        near = data.get("near")
        if near is not None:
            if not isinstance(near, Mapping) or set(near) != {"configuration", "confidence"} \
                    or not isinstance(near["configuration"], Mapping):
                raise ConfigurationError("\"near\" must be {\"configuration\": {name: value}, \"confidence\": c}")
            found.update({n: Near(v, near["confidence"]) for n, v in near["configuration"].items()})
        params = data.get("parameters", {})
        if not isinstance(params, Mapping):
            raise ConfigurationError("\"parameters\" must be an object {name: prior}")
        found.update({n: prior_from_json(n, p) for n, p in params.items()})
        bound = {}
        for name, prior in found.items():
            if name not in manipulator:
                raise ConfigurationError(f"the prior names unknown parameter {name!r}; known: "
                                         f"{', '.join(manipulator.names)}")
            bound[name] = prior.bind(manipulator.parameter(name))
        self._bound.update(bound)
        self.version += 1
