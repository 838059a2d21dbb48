"""A recorded measurement table: canonical key of parameter values -> :class:`Record`.

Every replay reader (the generic measurement CSV reader :mod:`.csvtable`, and the format readers
of recorded benchmark collections outside the core) produces a :class:`RecordedTable`.  The table
is loaded once and answers lookups with one dict access:

* the key of a configuration is the tuple of its values in the table's parameter order, each
  passed through :func:`canonical_value` (``32.0 -> 32``, ``True -> 1``, lists -> tuples), so a
  configuration coming from a tunerlib manipulator and a row read from a file meet;
* parameters that hold a single value in the recorded space (a fixed problem size recorded as a
  parameter) are *constants*: the search space leaves them out and :meth:`RecordedTable.key` fills them in;
* a record is either OK (``value`` is the recorded objective in **seconds**: each reader knows the
  unit its files record, milliseconds for every collection tunerlib ships, and converts with
  :func:`to_seconds`; the files stay as recorded) or failed (``value`` is None and ``reason`` says why);
* a configuration whose key is absent was **not measured** (:meth:`RecordedTable.lookup` returns
  None).

Duplicate rows of one configuration are merged by :class:`TableBuilder`: the record keeps the
median (default) or the minimum of the OK values; a configuration is failed only when every row
of it failed.  When rows of one configuration disagree (different times, or OK and failed), one
notice line on stderr gives their count (:func:`~tunerlib.replay.checks.duplicate_notice`).
"""
from __future__ import annotations

import gzip
import io
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .checks import CheckedText, announce, duplicate_notice

Key = Tuple[Any, ...]

#: how duplicate OK rows of one configuration are merged
DUPLICATE_POLICIES = ("median", "min", "first")
#: units of a recorded time in one second, by the unit's name (what a reader's ``unit`` may be)
TIME_UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}


def to_seconds(value: float, unit: str) -> float:
    """``value`` recorded in ``unit`` (a key of :data:`TIME_UNITS`) in seconds; ValueError (one line)
    for an unknown unit.  Called by the readers once per recorded time."""
    try:
        return value / TIME_UNITS[unit]  # a division: 1.5 ms is exactly 1.5 / 1000 s
    except KeyError:
        raise ValueError(f"unknown time unit {unit!r}; use one of {', '.join(TIME_UNITS)}") from None


def canonical_value(value: Any) -> Any:
    """The hashable form of one parameter value used in table keys.

    Integral floats become ints, booleans become 0/1, lists and tuples become tuples (recursively);
    strings and other numbers are kept.
    """
    kind = type(value)
    if kind is int or kind is str:  # the common case, first
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (list, tuple)):
        return tuple(canonical_value(v) for v in value)
    return value


def json_value(value: Any) -> Any:
    """The JSON form of a canonical value (tuples become lists) for configuration dicts."""
    if isinstance(value, tuple):
        return [json_value(v) for v in value]
    return value


def open_text(path: Path) -> CheckedText:
    """Open ``path`` for reading text, transparently decompressing ``.gz`` files; a truncated or
    corrupt file raises :class:`~tunerlib.replay.checks.TableError` (one line) when read."""
    path = Path(path)
    if path.suffix == ".gz":
        return CheckedText(io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline=""), path)
    return CheckedText(open(path, "r", encoding="utf-8", newline=""), path)


@dataclass(frozen=True)
class Record:
    """One recorded configuration.

    ``value`` is the objective in seconds (lower is better) or None for a failed measurement, ``reason`` names
    the failure (None when OK), ``simulated_s`` is what measuring it cost in seconds (see the reader
    that built the table), ``extra`` holds other recorded metrics (JSON-compatible), ``count`` the
    number of rows merged into this record.
    """

    value: Optional[float]
    reason: Optional[str] = None
    simulated_s: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict)
    count: int = 1

    @property
    def ok(self) -> bool:
        """True when the measurement succeeded."""
        return self.value is not None


class RecordedTable:
    """Recorded measurements of one benchmark: parameter order, constants and records.

    Built by the readers through :class:`TableBuilder`; immutable afterwards.  ``metadata`` holds
    reader-specific facts (device, ``domains``: the declared legal values of each parameter,
    ``rows_read``, ``recorded_unit``: the unit of the file's times, which the values are converted from...).
    """

    def __init__(self, name: str, params: Sequence[str], records: Dict[Key, Record],
                 constants: Optional[Mapping[str, Any]] = None, source: str = "",
                 metadata: Optional[Mapping[str, Any]] = None) -> None:
        self.name = name
        self.params: Tuple[str, ...] = tuple(params)
        self.records = records
        self.constants: Dict[str, Any] = {k: canonical_value(v) for k, v in (constants or {}).items()}
        unknown = [k for k in self.constants if k not in self.params]
        if unknown:
            raise ValueError(f"table {name!r}: constants {unknown} are not table parameters {list(self.params)}")
        self.source = source
        self.metadata: Dict[str, Any] = dict(metadata or {})
        self._optimum: Optional[Tuple[float, Key]] = None

    # ------------------------------------------------------------------ keys and lookups
    def key(self, config: Mapping[str, Any]) -> Key:
        """Canonical key of ``config`` (a dict of parameter values); constants may be omitted.

        Raises KeyError (one line) when a non-constant parameter is missing.
        """
        out = []
        for p in self.params:
            if p in config:
                out.append(canonical_value(config[p]))
            elif p in self.constants:
                out.append(self.constants[p])
            else:
                raise KeyError(f"table {self.name!r}: configuration lacks parameter {p!r}; "
                               f"give a value for each of {list(self.params)}")
        return tuple(out)

    def lookup(self, config: Mapping[str, Any]) -> Optional[Record]:
        """Called once per replayed measurement: the record of ``config``, or None when the
        configuration was not measured (absent from the table)."""
        return self.records.get(self.key(config))

    def config_of(self, key: Key, with_constants: bool = False) -> Dict[str, Any]:
        """The configuration dict of a key (constants left out unless ``with_constants``)."""
        return {p: json_value(v) for p, v in zip(self.params, key)
                if with_constants or p not in self.constants}

    # ------------------------------------------------------------------ statistics
    def __len__(self) -> int:
        return len(self.records)

    def __contains__(self, config: object) -> bool:
        return isinstance(config, Mapping) and self.key(config) in self.records

    def items(self) -> Iterator[Tuple[Key, Record]]:
        """(key, record) pairs in file order."""
        return iter(self.records.items())

    @property
    def ok_count(self) -> int:
        """Number of configurations with a successful measurement."""
        return sum(1 for r in self.records.values() if r.ok)

    @property
    def failed_count(self) -> int:
        """Number of configurations whose measurement failed."""
        return len(self.records) - self.ok_count

    def _best(self) -> Tuple[float, Key]:
        if self._optimum is None:
            best = min(((r.value, k) for k, r in self.records.items() if r.value is not None),
                       key=lambda t: t[0], default=None)
            if best is None:
                raise ValueError(f"table {self.name!r} has no successful measurement; it has no optimum")
            self._optimum = (float(best[0]), best[1])
        return self._optimum

    @property
    def optimum(self) -> float:
        """Minimum recorded objective (seconds) among OK records (ValueError when there is none)."""
        return self._best()[0]

    @property
    def best_config(self) -> Dict[str, Any]:
        """Configuration (constants left out) achieving :attr:`optimum`; the first one in file order."""
        return self.config_of(self._best()[1])

    def value_sets(self) -> Dict[str, List[Any]]:
        """Sorted distinct recorded values of each parameter."""
        sets: Dict[str, set] = {p: set() for p in self.params}
        for key in self.records:
            for p, v in zip(self.params, key):
                sets[p].add(v)
        return {p: sorted(s) for p, s in sets.items()}

    def __repr__(self) -> str:
        return (f"RecordedTable({self.name!r}, {len(self)} configurations, {self.failed_count} failed, "
                f"params={list(self.params)})")


class TableBuilder:
    """Collects rows (possibly duplicated) and merges them into a :class:`RecordedTable`.

    ``duplicates`` is one of :data:`DUPLICATE_POLICIES`: the merged OK value is the median (default),
    the minimum or the first OK value; failed rows count only when no OK row exists.  Simulated
    times of duplicate rows are summed (each row was a real measurement).
    """

    def __init__(self, name: str, params: Sequence[str], duplicates: str = "median") -> None:
        if duplicates not in DUPLICATE_POLICIES:
            raise ValueError(f"duplicates must be one of {DUPLICATE_POLICIES}, got {duplicates!r}")
        self.name, self.params, self.duplicates = name, tuple(params), duplicates
        self._rows: Dict[Key, List[Record]] = {}
        self.rows_read = 0

    def add(self, key: Key, record: Record) -> None:
        """Add one row (called by the readers for every line/entry of a file)."""
        if len(key) != len(self.params):
            raise ValueError(f"table {self.name!r}: key {key!r} has {len(key)} values, "
                             f"expected {len(self.params)}")
        self.rows_read += 1
        self._rows.setdefault(key, []).append(record)

    def _merge(self, rows: List[Record]) -> Record:
        if len(rows) == 1:
            return rows[0]
        oks = [r for r in rows if r.ok]
        cost = math.fsum(r.simulated_s for r in rows)
        if not oks:
            return Record(None, rows[0].reason, cost, rows[0].extra, len(rows))
        values = [float(r.value) for r in oks]  # type: ignore[arg-type]
        if self.duplicates == "median":
            value = float(statistics.median(values))
        elif self.duplicates == "min":
            value = min(values)
        else:
            value = values[0]
        return Record(value, None, cost, oks[0].extra, len(rows))

    def build(self, constants: Optional[Mapping[str, Any]] = None, source: str = "",
              metadata: Optional[Mapping[str, Any]] = None) -> RecordedTable:
        """The merged table, called once per file (``rows_read``, ``duplicate_keys`` and
        ``conflicting_keys``, the configurations whose rows disagree, are added to the metadata;
        conflicting ones are announced in one notice line on stderr)."""
        records = {k: self._merge(rows) for k, rows in self._rows.items()}
        repeated = [rows for rows in self._rows.values() if len(rows) > 1]
        conflicting = [rows for rows in repeated if len({(r.value, r.reason) for r in rows}) > 1]
        meta = dict(metadata or {})
        meta["rows_read"] = self.rows_read
        meta["duplicate_keys"] = len(repeated)
        meta["conflicting_keys"] = len(conflicting)
        meta["duplicates"] = self.duplicates
        announce(duplicate_notice(source or self.name, len(conflicting), sum(map(len, conflicting)),
                                  self.duplicates))
        return RecordedTable(self.name, self.params, records, constants, source, meta)
