"""Objectives: turn a :class:`~tunerlib.result.Result` into one number, lower is better.

No objective assumes that ``time`` exists: each reads only its own metric and says
clearly when a result that claims to be OK lacks it.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Optional

from .result import Result


class ObjectiveError(ValueError):
    """An OK result lacks the metric the objective needs."""


class Objective(ABC):
    """Called by the search driver once per completed result."""

    @abstractmethod
    def raw(self, result: Result) -> Optional[float]:
        """The metric as the user sees it (None when missing)."""

    @property
    @abstractmethod
    def sign(self) -> float:
        """+1 to minimise the raw metric, -1 to maximise it."""

    @abstractmethod
    def describe(self) -> str:
        """Short text such as ``minimize time``; stored with the tuning run."""

    def value(self, result: Result) -> float:
        """The oriented value (lower is better); ``inf`` for results that are not OK.

        Raises ObjectiveError for an OK result without the metric.
        """
        if result.state != "OK":
            return math.inf
        raw = self.raw(result)
        if raw is None or not isinstance(raw, (int, float)) or isinstance(raw, bool):
            raise ObjectiveError(f"result is OK but has no numeric value for the objective "
                                 f"'{self.describe()}' (got {raw!r}); set it in the Result you return")
        if math.isnan(raw):
            raise ObjectiveError(f"objective '{self.describe()}' got NaN; return state='ERROR' instead")
        return self.sign * float(raw)

    def display(self, value: float) -> float:
        """Turn an oriented value back into the user's metric."""
        return self.sign * value


class MinimizeTime(Objective):
    sign = 1.0

    def raw(self, result: Result) -> Optional[float]:
        return result.time

    def describe(self) -> str:
        return "minimize time"


class MaximizeAccuracy(Objective):
    sign = -1.0

    def raw(self, result: Result) -> Optional[float]:
        return result.accuracy

    def describe(self) -> str:
        return "maximize accuracy"


class _AttributeObjective(Objective):
    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("attribute objective needs a non-empty attribute name")
        self.name = name

    def raw(self, result: Result) -> Optional[float]:
        if self.name in ("time", "accuracy", "energy", "size"):
            return getattr(result, self.name)
        return (result.extra or {}).get(self.name)


class MinimizeAttribute(_AttributeObjective):
    """Minimise ``result.extra[name]`` (or a built-in metric such as ``energy``)."""

    sign = 1.0

    def describe(self) -> str:
        return f"minimize {self.name}"


class MaximizeAttribute(_AttributeObjective):
    """Maximise ``result.extra[name]`` (or a built-in metric)."""

    sign = -1.0

    def describe(self) -> str:
        return f"maximize {self.name}"
