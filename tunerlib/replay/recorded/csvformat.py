"""The measurement-CSV formats of the recorded collections (RISE/BaCO and CATBench TACO): what each one
names its fidelity and extra columns, how a cell is parsed, and which machine its file-name suffix
names (``<bench>_<machine>.csv[.gz]``).  The rows themselves are read by the core's generic
:func:`tunerlib.replay.read_csv_table`."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Tuple, Union

from tunerlib.replay import RecordedTable, read_csv_table

__all__ = ["CsvFormat"]


@dataclass(frozen=True)
class CsvFormat:
    """One collection's CSV format: ``what`` (its name in error messages), ``value`` (the cell parser),
    ``runs`` (columns whose product with ``compute_time`` is the simulated cost), ``extras`` (columns
    kept in ``Record.extra``), ``suffix`` (the metadata key of the file-name suffix) and ``unit`` (of the
    recorded ``compute_time``; the table holds seconds)."""

    what: str
    value: Callable[[str, str], Any]
    runs: Tuple[str, ...]
    extras: Tuple[str, ...]
    suffix: str
    unit: str = "ms"

    def read(self, path: Union[str, Path], name: Optional[str] = None, duplicates: str = "median",
             params: Optional[Sequence[str]] = None) -> RecordedTable:
        """Read one file into a :class:`RecordedTable` (called once per benchmark).

        ``params``: the kernel's parameter names (the table's key order); None reads an unknown table
        (see :mod:`tunerlib.replay.columns`).  Metadata: ``columns`` (the other columns) and
        ``suffix`` -> the file-name suffix.  Raises ValueError (one line) for missing columns and
        malformed rows.
        """
        path = Path(path)
        machine = path.name.split(".")[0].rsplit("_", 1)[-1]
        return read_csv_table(path, name, duplicates, params, value=self.value, what=self.what,
                              runs=self.runs, extras=self.extras, metadata={self.suffix: machine}, unit=self.unit)
