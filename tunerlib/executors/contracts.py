"""What an executor needs of a tuner script: the :class:`Measurable` protocol.

``MeasurementInterface`` (``tunerlib.script``) satisfies it; the executors and the engine read a tuner
script only through it (and through :class:`tunerlib.engine.contracts.Tunable`), so neither imports the
floor a tuner author touches.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..parameters import ConfigurationManipulator
from ..result import DesiredResult, Input, Result


@runtime_checkable
class InputSelector(Protocol):
    """Chooses the input of each measurement (``tunerlib.InputManager`` is one)."""

    def select_input(self, desired_result: DesiredResult) -> Input:
        """Called once per measurement, before ``run()``: the input ``desired_result`` is measured on."""
        ...


@runtime_checkable
class Measurable(Protocol):
    """A tuner script as the measuring side sees it: its identity and its ``run()``."""

    options: Any

    def project_name(self) -> str:
        """The project the program belongs to (recorded with the run)."""
        ...

    def program_name(self) -> str:
        """The tuned program's name (recorded with the run)."""
        ...

    def program_version(self) -> str:
        """The program's version; runs of different versions are kept apart."""
        ...

    def script_version(self) -> str:
        """The tuner script's version: a worker measures only for runs of its own version."""
        ...

    def manipulator(self) -> ConfigurationManipulator:
        """The search space (called once per run, and by a worker to check it measures the same space)."""
        ...

    def input_manager(self) -> InputSelector:
        """The input selector of the measurements (called once per measuring process)."""
        ...

    def run(self, desired_result: DesiredResult, input: Input, limit: Any) -> Result:
        """Measure one configuration on ``input`` within ``limit`` seconds (None: no limit)."""
        ...


@runtime_checkable
class RunContext(Protocol):
    """The run an executor measures for, as an executor sees it (a ``TuningRun`` is one): read when the
    executor is made."""

    #: the tuner script of the run
    interface: Measurable
    #: the run's options (``TuningOptions``)
    options: Any
    #: the run's results database
    db: Any
    #: the ids of the run's rows
    run_id: int
    pv_id: int
    #: the run's UUID
    uuid: str
