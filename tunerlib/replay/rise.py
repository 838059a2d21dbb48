"""RISE/ELEVATE GPU kernel measurements from the BaCO / CATBench data (``<bench>_<gpu>.csv[.gz]``).

CSV header: the tuning parameters (``tuned_*``), then ``compute_time`` (ms, minimise), ``energy``
(J), ``iterations`` and ``wait_after_run`` (fidelity columns).  Every column before
``compute_time`` is a tuning parameter and a lookup matches on all of them.

* ``compute_time == 0.0`` is a failed run (timeout or invalid kernel) -> failed record, reason
  ``"compute_time == 0 (failed run)"``;
* duplicate rows of one configuration (asum, stencil) are merged (median of the OK values);
* ``simulated_s`` is an estimate of the benchmarking cost: ``compute_time * iterations / 1000``
  (the files record no compile time; failed rows cost 0).
"""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from .table import Record, RecordedTable, TableBuilder, open_text

OBJECTIVE_COLUMN = "compute_time"
FAILED_REASON = "compute_time == 0 (failed run)"


def parse_number(text: str, where: str) -> Union[int, float]:
    """An int when ``text`` is integral, else a float; ValueError naming ``where`` otherwise."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a number") from None
    return int(value) if value.is_integer() else value


def split_header(header: List[str], path: Path) -> int:
    """Index of the objective column (every column before it is a tuning parameter)."""
    if OBJECTIVE_COLUMN not in header:
        raise ValueError(f"{path}: no {OBJECTIVE_COLUMN!r} column in header {header}; "
                         "give a BaCO/CATBench measurement CSV")
    idx = header.index(OBJECTIVE_COLUMN)
    if idx == 0:
        raise ValueError(f"{path}: no tuning-parameter columns before {OBJECTIVE_COLUMN!r}")
    return idx


def read_rise_csv(path: Union[str, Path], name: Optional[str] = None,
                  duplicates: str = "median") -> RecordedTable:
    """Read a RISE/BaCO measurement CSV into a :class:`RecordedTable` (called once per benchmark).

    Metadata: ``columns`` (the extra columns) and ``gpu`` (the file-name suffix).
    """
    path = Path(path)
    stem = path.name.split(".")[0]
    with open_text(path) as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"{path}: empty file; give a BaCO/CATBench measurement CSV") from None
        ci = split_header(header, path)
        params = header[:ci]
        extras = header[ci + 1:]
        builder = TableBuilder(name or stem, params, duplicates)
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            builder.add(*_row(row, header, ci, extras, f"{path}:{lineno}"))
    meta: Dict[str, Any] = {"columns": extras, "gpu": stem.rsplit("_", 1)[-1]}
    return builder.build({}, str(path), meta)


def _row(row: List[str], header: List[str], ci: int, extras: List[str], where: str):
    if len(row) != len(header):
        raise ValueError(f"{where}: {len(row)} fields, header has {len(header)}")
    key = tuple(parse_number(v, where) for v in row[:ci])
    t = float(parse_number(row[ci], where))
    extra = {c: parse_number(v, where) for c, v in zip(extras, row[ci + 1:]) if v.strip()}
    iterations = extra.get("iterations", 1)
    if t == 0.0:
        return key, Record(None, FAILED_REASON, 0.0, extra)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"{where}: compute_time {t!r} must be a finite non-negative number")
    return key, Record(t, None, t * float(iterations) / 1000.0, extra)
