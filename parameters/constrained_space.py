"""What the feasible-space services read of a search space: the :class:`ConstrainedSpace` protocol
(``ConfigurationManipulator`` is one), implemented structurally, so the services (:mod:`.feasible`,
:mod:`.counting`) need not import the manipulator.
"""
from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Optional, Protocol, Sequence, Set

from .base import Config, Parameter
from .constraints import Constraint
from .space_prior import SpacePrior


class ConstrainedSpace(Protocol):
    """What a :class:`~.feasible.FeasibleSpace` reads of its search space (``ConfigurationManipulator`` is one)."""

    @property
    def names(self) -> Sequence[str]:
        """The parameter names, in order."""
        ...

    @property
    def parameters(self) -> Sequence[Parameter]:
        """The parameters, in order."""
        ...

    @property
    def constraints(self) -> Sequence[Constraint]:
        """The constraints."""
        ...

    @property
    def prior(self) -> SpacePrior:
        """The priors that sampling follows."""
        ...

    def parameter(self, name: str) -> Parameter:
        """The parameter called ``name``."""
        ...

    def groups(self) -> List[Set[str]]:
        """The names of the parameters linked by constraints, one set per group."""
        ...

    def group_constraints(self, group: Iterable[str]) -> List[Constraint]:
        """The constraints that read only parameters of ``group``."""
        ...

    def table_rows(self, group: Iterable[str]) -> Optional[List[Config]]:
        """The feasible partial configurations of ``group`` when a table constraint lists them, else None."""
        ...

    def copy(self, config: Mapping[str, Any]) -> Config:
        """A deep copy of ``config``."""
        ...
