"""Plain data exchanged between a tuner script and the framework: Result, DesiredResult, Input."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from .db import ResultRecord

#: the states a measurement can end in
RESULT_STATES = ("OK", "TIMEOUT", "ERROR", "INFEASIBLE")


@dataclass
class Result:
    """What ``MeasurementInterface.run`` returns for one configuration.

    ``state`` is one of :data:`RESULT_STATES`.  Every metric is optional: an objective
    reads only the metric it needs (``MinimizeTime`` reads ``time``,
    ``MinimizeAttribute("x")`` reads ``extra["x"]``).  ``extra`` must be JSON-compatible.
    """

    state: str = "OK"
    time: Optional[float] = None
    accuracy: Optional[float] = None
    energy: Optional[float] = None
    size: Optional[float] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.state not in RESULT_STATES:
            raise ValueError(f"Result.state must be one of {RESULT_STATES}, got {self.state!r}")
        if self.extra is None:
            self.extra = {}

    def record(self, collection_cost: Optional[float] = None, machine_id: Optional[int] = None,
               input_id: Optional[int] = None, worker: Optional[str] = None) -> ResultRecord:
        """The database record of this result (called when it is stored; ``worker`` measured it)."""
        return ResultRecord(self.state, self.time, self.accuracy, self.energy, self.size, self.extra,
                            collection_cost, machine_id, input_id, worker)


@dataclass(frozen=True)
class Configuration:
    """A configuration as handed to a tuner script: ``data`` is the parameter dict."""

    data: Dict[str, Any]
    hash: str
    id: Optional[int] = None


@dataclass(frozen=True)
class DesiredResult:
    """A request to measure ``configuration`` (passed to ``MeasurementInterface.run``)."""

    configuration: Configuration
    id: Optional[int] = None
    limit: Optional[float] = None
    requestor: str = ""


@dataclass(frozen=True)
class Input:
    """The input a measurement runs on (recorded with every result)."""

    input_class: str = "fixed"
    path: Optional[str] = None
    size: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict)
