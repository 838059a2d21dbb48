"""What the engine needs of a tuner script: the :class:`Tunable` protocol.

The engine never imports ``tunerlib.script``: ``MeasurementInterface`` satisfies :class:`Tunable` (the
measuring half, :class:`~tunerlib.executors.contracts.Measurable`, plus the calls a run makes when it is
set up and finished), and a run is given any object that does.
"""
from __future__ import annotations

from typing import Any, Iterable, Protocol, runtime_checkable

from ..executors.contracts import InputSelector, Measurable
from ..objectives import Objective

__all__ = ["InputSelector", "Measurable", "Tunable"]


@runtime_checkable
class Tunable(Measurable, Protocol):
    """A tuner script as one tuning run sees it."""

    def objective(self) -> Objective:
        """How results are compared (called once per run)."""
        ...

    def seed_configurations(self) -> Iterable[Any]:
        """Configurations measured first (called once per run, before the technique proposes)."""
        ...

    def save_final_config(self, configuration: Any) -> Any:
        """Called once at the end of a run with the best configuration; may return a re-timed best."""
        ...

    def finish_without_best(self) -> Any:
        """Called once at the end of a run that found no configuration that succeeded."""
        ...
