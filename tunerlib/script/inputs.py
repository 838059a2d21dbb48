"""Input managers: which input each measurement runs on (recorded with every result)."""
from __future__ import annotations

from typing import Optional

from ..result import DesiredResult, Input


class InputManager:
    """Called by the measurement driver once per measurement."""

    def select_input(self, desired_result: DesiredResult) -> Input:
        """Return the input to measure ``desired_result`` on."""
        raise NotImplementedError


class FixedInputManager(InputManager):
    """Every measurement uses the same input."""

    def __init__(self, input_class: str = "fixed", path: Optional[str] = None,
                 size: Optional[int] = None) -> None:
        self.input = Input(input_class=input_class, path=path, size=size)

    def select_input(self, desired_result: DesiredResult) -> Input:
        return self.input
