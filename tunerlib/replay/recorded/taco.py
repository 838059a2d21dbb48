"""TACO schedule measurements from the CATBench data (``<op>_7742.csv[.gz]``).

Columns, in any order (read by name, :mod:`tunerlib.replay.columns`): tuning parameters,
``compute_time`` (ms, minimise; the table holds it in seconds) and fidelity columns (``iterations,
repeats, wait_between_repeats, wait_after_run``); the rows are read by :func:`tunerlib.replay.read_csv_table`.
``permutation`` is a string tuple such as ``"(4, 3, 2, 0, 1)"``: the loop index placed at each
position.  It is read as a tuple of ints, so it
matches a tunerlib :class:`~tunerlib.parameters.PermutationParameter` value ``[4, 3, 2, 0, 1]``.

Rows are samples (not exhaustive): duplicates are merged (median), a configuration absent from
the file is "not measured".  ``compute_time == 0.0`` would be a failed run (none in the shipped
files).  ``simulated_s`` estimates the cost as ``compute_time * iterations * repeats / 1000``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple, Union

from tunerlib.replay import RecordedTable, parse_number

from .csvformat import CsvFormat

__all__ = ["parse_permutation", "permutation_positions", "read_taco_csv"]


def parse_permutation(text: str, where: str = "permutation") -> Tuple[int, ...]:
    """``"(4, 3, 2, 0, 1)"`` -> ``(4, 3, 2, 0, 1)``; ValueError for anything else."""
    inner = text.strip()
    if not (inner.startswith("(") and inner.endswith(")")) and not (inner.startswith("[") and inner.endswith("]")):
        raise ValueError(f"{where}: permutation {text!r} must look like '(0, 1, 2, 3, 4)'")
    parts = [p for p in inner[1:-1].split(",") if p.strip()]
    try:
        items = tuple(int(p) for p in parts)
    except ValueError:
        raise ValueError(f"{where}: permutation {text!r} must hold integers") from None
    if sorted(items) != list(range(len(items))):
        raise ValueError(f"{where}: {text!r} is not a permutation of 0..{len(items) - 1}")
    return items


def _value(text: str, where: str) -> Any:
    if text.strip().startswith(("(", "[")):
        return parse_permutation(text, where)
    return parse_number(text, where)


TACO_CSV = CsvFormat(what="CATBench TACO CSV", value=_value, runs=("iterations", "repeats"), extras=(),
                     suffix="machine")


def read_taco_csv(path: Union[str, Path], name: Optional[str] = None, duplicates: str = "median",
                  params: Optional[Sequence[str]] = None) -> RecordedTable:
    """A CATBench TACO CSV as a :class:`RecordedTable`, metadata ``machine`` (:meth:`CsvFormat.read`)."""
    return TACO_CSV.read(path, name, duplicates, params)


def permutation_positions(perm: Tuple[int, ...]) -> List[int]:
    """Position of each loop: ``positions[k]`` is where loop ``k`` sits (CATBench's
    ``permutation[k]`` in constraint strings)."""
    pos = [0] * len(perm)
    for i, loop in enumerate(perm):
        pos[loop] = i
    return pos
