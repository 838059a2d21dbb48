"""Measurement CSV tables: one row per measured configuration, columns read by name.

:func:`read_csv_table` reads a CSV (``.csv`` or ``.csv.gz``) whose header names the tuning
parameters, the objective column ``compute_time`` (lower is better, in the file's unit: milliseconds
by convention, ``unit=`` says otherwise) and metadata columns (:mod:`.columns` tells which is which).
Each row becomes a :class:`~tunerlib.replay.table.Record` whose value is in seconds (the file's times
converted, :func:`~tunerlib.replay.table.to_seconds`):

* ``compute_time == 0.0`` is a failed run (timeout or invalid program) -> failed record, reason
  :data:`FAILED_REASON`, cost 0;
* a negative or non-finite time is an error (one line naming the file and line,
  :func:`~tunerlib.replay.checks.recorded_time`);
* ``simulated_s`` estimates what the measurement cost: ``compute_time`` (in seconds) times the run
  counts of the row (the ``runs`` columns present, by default ``iterations`` and ``repeats``);
* ``Record.extra`` keeps the ``extras`` columns present and non-empty (by default ``energy``);
* duplicate rows of one configuration are merged (:class:`~tunerlib.replay.table.TableBuilder`).

Parameter values are numbers (integral ones become ints) or bracketed integer tuples such as
``"(4, 3, 2, 0, 1)"``; a reader of a particular format passes its own ``value`` parser.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .checks import recorded_time
from .columns import OBJECTIVE_COLUMN, read_header, split_columns, table_rows
from .table import Record, RecordedTable, TableBuilder, to_seconds

FAILED_REASON = "compute_time == 0 (failed run)"
#: columns whose product (those present) is the number of runs one row's time was measured over
RUN_COLUMNS = ("iterations", "repeats")
#: recorded metrics copied into ``Record.extra`` by default
EXTRA_COLUMNS = ("energy",)


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


def parse_value(text: str, where: str) -> Any:
    """A number, or a tuple of integers for ``"(4, 3, 2, 0, 1)"`` / ``"[1, 2]"``; ValueError (one
    line naming ``where``) otherwise."""
    inner = text.strip()
    if not inner.startswith(("(", "[")):
        return parse_number(inner, where)
    if inner[-1:] != {"(": ")", "[": "]"}[inner[0]]:
        raise ValueError(f"{where}: {text!r} is not a number or a bracketed tuple such as '(0, 1, 2)'")
    try:
        return tuple(int(p) for p in inner[1:-1].split(",") if p.strip())
    except ValueError:
        raise ValueError(f"{where}: tuple {text!r} must hold integers") from None


def cached_parser(convert: Callable[[str, str], Any], where: str) -> Callable[[str], Any]:
    """``convert(text, where)`` memoised per distinct text (parameter columns repeat few values)."""
    cache: Dict[str, Any] = {}

    def parse(text: str) -> Any:
        value = cache.get(text)
        if value is None:
            value = cache[text] = convert(text, where)
        return value
    return parse


def read_csv_table(path: Union[str, Path], name: Optional[str] = None, duplicates: str = "median",
                   params: Optional[Sequence[str]] = None,
                   value: Callable[[str, str], Any] = parse_value, what: str = "measurement CSV",
                   runs: Sequence[str] = RUN_COLUMNS, extras: Sequence[str] = EXTRA_COLUMNS,
                   metadata: Optional[Mapping[str, Any]] = None, unit: str = "ms") -> RecordedTable:
    """Read a measurement CSV into a :class:`RecordedTable` (see the module docstring).

    ``params``: the benchmark's parameter names (the table's key order); None reads an unknown
    table (every column but the known metadata ones is a parameter, :mod:`.columns`).  ``value``
    parses one parameter cell, ``what`` names the format in errors, ``unit`` is the unit of the
    file's ``compute_time`` (a key of :data:`~tunerlib.replay.table.TIME_UNITS`; the table holds
    seconds).  Metadata: ``columns`` (the columns other than parameters and objective),
    ``recorded_unit`` and ``metadata``.  Raises ValueError (one line) for missing columns and
    malformed rows.
    """
    path = Path(path)
    to_seconds(1.0, unit)  # an unknown unit fails before the file is read
    stem = path.name.split(".")[0]
    header = read_header(path, what)
    names, others = split_columns(header, path, params, name or stem)
    builder = TableBuilder(name or stem, names, duplicates)
    parsers = [cached_parser(value, f"{path} column {c!r}") for c in names]
    ci = header.index(OBJECTIVE_COLUMN)
    run_cols = [header.index(c) for c in runs if c in header]
    extra_cols = [(c, header.index(c)) for c in extras if c in header]
    for key, row, where in table_rows(path, header, names, parsers):
        counts = [parse_number(row[i], where) for i in run_cols]
        extra = {c: float(parse_number(row[i], where)) for c, i in extra_cols if row[i].strip()}
        builder.add(key, _record(row[ci], counts, extra, where, unit))
    meta: Dict[str, Any] = {"columns": others, "recorded_unit": unit, **(metadata or {})}
    return builder.build({}, str(path), meta)


def _record(time_text: str, counts: List[Any], extra: Dict[str, Any], where: str, unit: str) -> Record:
    t = recorded_time(float(parse_number(time_text, where)), where, OBJECTIVE_COLUMN)
    if t == 0.0:
        return Record(None, FAILED_REASON, 0.0, extra)
    seconds = to_seconds(t, unit)
    return Record(seconds, None, seconds * math.prod(float(r) for r in counts), extra)

