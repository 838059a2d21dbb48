"""RISE/ELEVATE GPU kernel measurements from the BaCO / CATBench data (``<bench>_<gpu>.csv[.gz]``).

CSV columns, in any order (read by name, :mod:`.columns`): the tuning parameters (``tuned_*``),
``compute_time`` (ms, minimise), ``energy`` (J), ``iterations`` and ``wait_after_run`` (fidelity
columns).  Given the kernel's parameter names, those are the parameters and every other column is
metadata; otherwise every column but the known metadata ones is a parameter.  A lookup matches on
all the parameters.

* ``compute_time == 0.0`` is a failed run (timeout or invalid kernel) -> failed record, reason
  ``"compute_time == 0 (failed run)"``;
* duplicate rows of one configuration (asum, stencil) are merged (median of the OK values);
* ``Record.extra`` keeps ``energy`` (J);
* ``simulated_s`` is an estimate of the benchmarking cost: ``compute_time * iterations / 1000``
  (the files record no compile time; failed rows cost 0).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Union

from .columns import OBJECTIVE_COLUMN, column_index, read_header, split_columns, table_rows
from .table import Record, RecordedTable, TableBuilder

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


def cached_parser(convert: Callable[[str, str], Any], where: str) -> Callable[[str], Any]:
    """``convert(text, where)`` memoised per distinct text (parameter columns repeat few values)."""
    cache: Dict[str, Any] = {}

    def parse(text: str) -> Any:
        value = cache.get(text)
        if value is None:
            value = cache[text] = convert(text, where)
        return value
    return parse


def read_rise_csv(path: Union[str, Path], name: Optional[str] = None, duplicates: str = "median",
                  params: Optional[Sequence[str]] = None) -> RecordedTable:
    """Read a RISE/BaCO measurement CSV into a :class:`RecordedTable` (called once per benchmark).

    ``params``: the kernel's parameter names (the table's key order); None reads an unknown table
    (see :mod:`.columns`).  Metadata: ``columns`` (the other columns) and ``gpu`` (the file-name
    suffix).  Raises ValueError (one line) for missing columns and malformed rows.
    """
    path = Path(path)
    stem = path.name.split(".")[0]
    header = read_header(path, "BaCO/CATBench measurement CSV")
    names, extras = split_columns(header, path, params, name or stem)
    builder = TableBuilder(name or stem, names, duplicates)
    parsers = [cached_parser(parse_number, f"{path} column {c!r}") for c in names]
    ci = header.index(OBJECTIVE_COLUMN)
    iter_col, energy_col = column_index(header, "iterations"), column_index(header, "energy")
    for key, row, where in table_rows(path, header, names, parsers):
        iterations = 1 if iter_col is None else parse_number(row[iter_col], where)
        extra = {} if energy_col is None or not row[energy_col].strip() else \
            {"energy": float(parse_number(row[energy_col], where))}
        builder.add(key, _record(row[ci], iterations, extra, where))
    meta: Dict[str, Any] = {"columns": extras, "gpu": stem.rsplit("_", 1)[-1]}
    return builder.build({}, str(path), meta)


def _record(time_text: str, iterations: float, extra: Dict[str, Any], where: str) -> Record:
    t = float(parse_number(time_text, where))
    if t == 0.0:
        return Record(None, FAILED_REASON, 0.0, extra)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"{where}: compute_time {t!r} must be a finite non-negative number")
    return Record(t, None, t * float(iterations) / 1000.0, extra)
