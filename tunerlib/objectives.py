"""Objectives: turn a :class:`~tunerlib.result.Result` into one number, lower is better.

No objective assumes that ``time`` exists: each reads only its own metric and says
clearly when a result that claims to be OK lacks it.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Optional

from .result import Result


#: the key of a run's stored ``args`` that records its objective's unit (None: unitless); runs created
#: before units were recorded lack it
UNIT_KEY = "objective_unit"


class ObjectiveError(ValueError):
    """An OK result lacks the metric the objective needs."""


class Objective(ABC):
    """Called by the search driver once per completed result.

    ``unit`` is the unit of the raw metric (``"s"``), or None when it has none (a tour length, a loss) or
    is not known. It is printed after the best value in the summary and ``--summary-json`` and stored with
    each new run, so that ``--resume`` refuses to mix values of different units in one run."""

    #: the unit of :meth:`raw`'s values, or None (unitless or unknown)
    unit: Optional[str] = None

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
    """Minimise ``result.time``, in seconds: the ``limit`` handed to ``run()`` (seconds) is
    ``--limit-multiplier`` times the best time so far, so ``time`` must be seconds too."""

    sign = 1.0
    unit = "s"

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
    def __init__(self, name: str, unit: Optional[str] = None) -> None:
        """``unit``: the unit of the attribute's values (``"J"``, ``"s"``), None when it has none."""
        if not isinstance(name, str) or not name:
            raise ValueError("attribute objective needs a non-empty attribute name")
        if unit is not None and (not isinstance(unit, str) or not unit.strip()):
            raise ValueError(f"objective unit must be a non-empty string or None, got {unit!r}")
        self.name = name
        self.unit = unit

    def raw(self, result: Result) -> Optional[float]:
        if self.name in ("time", "accuracy", "energy", "size"):
            return getattr(result, self.name)
        return (result.extra or {}).get(self.name)


class MinimizeAttribute(_AttributeObjective):
    """Minimise ``result.extra[name]`` (or a built-in metric such as ``energy``), in ``unit`` if given
    (``MinimizeAttribute("energy", unit="J")``)."""

    sign = 1.0

    def describe(self) -> str:
        return f"minimize {self.name}"


class MaximizeAttribute(_AttributeObjective):
    """Maximise ``result.extra[name]`` (or a built-in metric)."""

    sign = -1.0

    def describe(self) -> str:
        return f"maximize {self.name}"
