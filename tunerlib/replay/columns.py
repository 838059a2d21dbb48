"""Which column of a measurement CSV is what: tuning parameters versus measurement metadata.

Columns are read by name, never by position: tables recorded on other machines (or by other
versions of the recorder) put the objective, the fidelity columns and the parameters in any order.

* With the benchmark's parameter names known (``params``), those columns are the parameters (in
  the benchmark's order) and every other column is metadata.  A missing parameter column is an
  error that names it, together with the columns the benchmark does not know (they usually tell
  which benchmark the table really belongs to).
* Without them (an unknown table), the known metadata columns (:data:`METADATA_COLUMNS`) are
  metadata and every other column is a parameter.

The objective column :data:`OBJECTIVE_COLUMN` must be present in either case.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

from .table import open_text

OBJECTIVE_COLUMN = "compute_time"
#: columns that measurement recorders write besides the parameters (objective, metrics, fidelity)
METADATA_COLUMNS = ("compute_time", "compute_times", "energy", "iterations", "repeats",
                    "wait_between_repeats", "wait_after_run", "timestamp")


def read_header(path: Path, what: str) -> List[str]:
    """The stripped header of the CSV file ``path`` (ValueError naming ``what`` when it is empty)."""
    with open_text(path) as fh:
        try:
            return [h.strip() for h in next(csv.reader(fh))]
        except StopIteration:
            raise ValueError(f"{path}: empty file; give a {what}") from None


def split_columns(header: Sequence[str], path: Path, params: Optional[Sequence[str]] = None,
                  kernel: str = "") -> Tuple[List[str], List[str]]:
    """(parameter columns, metadata columns other than the objective) of ``header``; see the
    module docstring.

    Raises ValueError (one line) for a missing objective column, repeated column names, missing
    parameter columns, or a table with no parameter column.
    """
    repeated = sorted({h for h in header if list(header).count(h) > 1})
    if repeated:
        raise ValueError(f"{path}: column(s) {repeated} appear more than once in the header; "
                         "give each column once")
    if OBJECTIVE_COLUMN not in header:
        raise ValueError(f"{path}: no {OBJECTIVE_COLUMN!r} column in header {list(header)}; "
                         "give a measurement CSV with that objective column")
    if params is not None:
        missing = [p for p in params if p not in header]
        if missing:
            unexpected = [h for h in header if h not in params and h not in METADATA_COLUMNS]
            raise ValueError(f"{path}: not a {kernel or 'matching'} table: missing column(s) {missing}"
                             + (f", unexpected column(s) {unexpected}" if unexpected else "")
                             + f"; give a table with the columns {list(params)}")
        return list(params), [h for h in header if h not in params and h != OBJECTIVE_COLUMN]
    names = [h for h in header if h not in METADATA_COLUMNS]
    if not names:
        raise ValueError(f"{path}: no tuning-parameter columns besides {list(header)}")
    return names, [h for h in header if h in METADATA_COLUMNS and h != OBJECTIVE_COLUMN]


def table_rows(path: Path, header: Sequence[str], names: Sequence[str],
               parsers: Sequence[Callable[[str], Any]]) -> Iterator[Tuple[Tuple[Any, ...], List[str], str]]:
    """(key, row, ``path:line``) of every non-empty data row: ``key`` holds the parameter columns
    ``names`` parsed by ``parsers``.  Raises ValueError (one line) for a row of the wrong width."""
    cols = [list(header).index(c) for c in names]
    with open_text(path) as fh:
        reader = csv.reader(fh)
        next(reader)
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            where = f"{path}:{lineno}"
            if len(row) != len(header):
                raise ValueError(f"{where}: {len(row)} fields, header has {len(header)}")
            yield tuple(p(row[i]) for p, i in zip(parsers, cols)), row, where
