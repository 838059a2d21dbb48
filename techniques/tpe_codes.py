"""How :class:`~.tpe.TPE` codes configurations: one modelled parameter's codes
(:class:`CodedParameter`: a value position for an enum or an ordered parameter, the unit value of a
float) and the growing arrays of codes and values its densities read (:class:`CodeRows`).
"""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from ..parameters.base import NEIGHBOUR_GRID_LIMIT, PrimitiveParameter
from ..parameters.value_keys import value_key
from .base import Config

#: largest enum (number of values) that TPE models
ENUM_LIMIT = 256


class CodedParameter:
    """One modelled parameter: its kind ("enum", "ordered" or "float"), value list and codes."""

    def __init__(self, param: Any) -> None:
        self.param = param
        self.name = param.name
        ordered = isinstance(param, PrimitiveParameter)
        domain = param.domain(NEIGHBOUR_GRID_LIMIT if ordered else ENUM_LIMIT)
        if domain is None and ordered:
            self.kind, self.values = "float", []
        elif domain is None or len(domain) < 2:
            raise ValueError(f"{param.name}: not modelled")
        else:
            self.kind, self.values = ("ordered" if ordered else "enum"), list(domain)
        self.index: Dict[Any, int] = {value_key(v): i for i, v in enumerate(self.values)}
        self.k = len(self.values)

    def code(self, config: Config) -> float:
        """The parameter's code in ``config``: a value position, or the unit value of a float."""
        if self.kind == "float":
            return float(self.param.get_unit_value(config))
        return float(self.index[value_key(config[self.name])])

    def decode(self, config: Config, code: float) -> None:
        """Set the parameter in ``config`` from a code."""
        if self.kind == "float":
            self.param.set_unit_value(config, float(code))
        else:
            config[self.name] = self.param.copy_value(self.values[int(code)])


class CodeRows:
    """Growing arrays of codes (one row per result) and values, appended in O(1) amortised."""

    def __init__(self, width: int) -> None:
        self._codes = np.empty((16, width))
        self._values = np.empty(16)
        self.n = 0

    def add(self, codes: np.ndarray, value: float) -> None:
        """Append one result's codes and value (called by :meth:`~.tpe.TPE.observe`)."""
        if self.n == self._values.size:
            self._codes = np.concatenate([self._codes, np.empty_like(self._codes)])
            self._values = np.concatenate([self._values, np.empty_like(self._values)])
        self._codes[self.n] = codes
        self._values[self.n] = value
        self.n += 1

    @property
    def codes(self) -> np.ndarray:
        """The codes, one row per result."""
        return self._codes[:self.n]

    @property
    def values(self) -> np.ndarray:
        """The values, one per row."""
        return self._values[:self.n]
