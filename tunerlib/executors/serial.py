"""The in-process executor (``--parallelism 1``, the default): each request is measured in the run's own
process as soon as the run loop hands it over, a request a resume found orphaned in a forked child
(:class:`~tunerlib.executors.orphans.OrphanGuard`)."""
from __future__ import annotations

from typing import List, Set

from ..result import DesiredResult
from .base import Completion, Executor
from .measurement import MeasurementDriver
from .orphans import OrphanGuard

__all__ = ["SerialExecutor"]


class SerialExecutor(Executor):
    """A pushing executor of capacity one that measures in :meth:`submit` (the run's process waits for
    the measurement, as a tuner script's own loop would)."""

    name = "main"
    claims_when_requested = True

    def __init__(self, driver: MeasurementDriver, orphans: Set[int]) -> None:
        self.guard = OrphanGuard(driver, orphans)
        self._done: List[Completion] = []

    def start(self) -> None:
        """Nothing to start: the run's process measures."""

    def capacity(self) -> int:
        """One request at a time."""
        return 1

    def in_flight(self) -> int:
        """The measured request not yet collected by :meth:`poll` (0 or 1)."""
        return len(self._done)

    def submit(self, desired: DesiredResult) -> None:
        """Measure ``desired`` now (RunInterrupted when a signal or the deadline stops the measurement:
        the request stays RUNNING and the run cancels it)."""
        _, record = self.guard.measure(desired)
        assert desired.id is not None  # a claimed request has its id
        self._done.append(Completion(desired.id, record, self.guard.contract_error))

    def poll(self, timeout: float) -> List[Completion]:
        """The measurement :meth:`submit` made, at once (never waits)."""
        done, self._done = self._done, []
        return done

    def cancel(self) -> None:
        """Drop a measurement not yet collected (the run cancels its request)."""
        self._done.clear()

    def shutdown(self) -> None:
        """Nothing to release."""
