"""A known constraint listing the allowed value combinations of some parameters.

:class:`TableConstraint` restricts parameters to an explicit list of rows -- e.g. the configurations
a replay table recorded, so that a search over a sparsely measured space (Kernel Tuner's simulation
mode) proposes only configurations that have a recorded outcome.  It is an ordinary callable
:class:`~tunerlib.parameters.Constraint` (membership is one hash lookup), so every technique's
feasibility checks see it; two consumers also use its rows directly, because rejection sampling
would almost never hit a sparse table:

* :meth:`ConfigurationManipulator.random` draws a row uniformly (among the rows that satisfy the
  group's other constraints) when the table reads every parameter of a constraint group;
* the BayesianOptimization technique's chain of trees takes those rows as the group's leaves.

Values are compared by :func:`~tunerlib.parameters.value_keys.value_key` (lists as tuples, booleans
apart from numbers).  A table cannot be
serialized (``to_json`` raises like any callable); :meth:`TableConstraint.info` identifies it by its
reads, row count and a digest of the rows, so a space with another table is another space.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Hashable, Iterable, Mapping, Optional, Sequence, Tuple

from .value_keys import value_key
from .constraints import Constraint, ConstraintError


class TableConstraint(Constraint):
    """Feasible iff the values of ``names`` form one of ``rows`` (called like any constraint)."""

    def __init__(self, names: Sequence[str], rows: Iterable[Sequence[Any]], name: Optional[str] = None) -> None:
        names = list(names)
        kept: Dict[Tuple[Hashable, ...], Tuple[Any, ...]] = {}   # key -> first row with that key
        for row in rows:
            row = tuple(row)
            if len(row) != len(names):
                raise ConstraintError(f"table row {row!r} has {len(row)} values for {len(names)} "
                                      f"parameters {names}; give one value per parameter")
            kept.setdefault(tuple(value_key(v) for v in row), row)
        if not kept:
            raise ConstraintError(f"table constraint over {names} has no rows; the space would be empty")
        #: the distinct rows, as given (first occurrence, table order)
        self.rows: Tuple[Tuple[Any, ...], ...] = tuple(kept.values())
        self._members = frozenset(kept)
        super().__init__(self._contains, reads=names,
                         name=name or f"one of {len(kept)} recorded rows of ({', '.join(names)})")

    def _contains(self, config: Mapping[str, Any]) -> bool:
        return tuple(value_key(config[n]) for n in self.reads) in self._members

    def __len__(self) -> int:
        return len(self.rows)

    def row_config(self, row: Sequence[Any]) -> Dict[str, Any]:
        """``{name: value}`` of one row (the row's own values; copy lists before changing them)."""
        return dict(zip(self.reads, row))

    def info(self) -> Dict[str, Any]:
        digest = hashlib.sha256(json.dumps(sorted(map(repr, self._members))).encode()).hexdigest()[:16]
        return {"table_rows": len(self.rows), "reads": sorted(self.reads), "digest": digest}

    def describe(self) -> str:
        return f"{self.name} (table constraint)"
