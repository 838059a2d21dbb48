"""Checks every recorded-table reader shares: the file can be read to its end, a recorded time is a
time, duplicate rows that disagree are announced.

A reader opens its file with :func:`~tunerlib.replay.table.open_text`, which returns a
:class:`CheckedText`: a truncated or corrupt ``.gz`` file, or bytes that are not UTF-8 text, raise
:class:`TableError` naming the file and the last line read instead of ``EOFError`` / ``zlib.error``
tracebacks.  Each recorded time goes through :func:`recorded_time` (finite and not negative).
:func:`duplicate_notice` is the line printed when rows of one configuration recorded different
results and were merged.  Every error is one line: ``FILE[:LINE]: what is wrong; what to do``.  A
:class:`TableError` is a ValueError, so the entry points that turn a reader's ValueError into a
usage error (exit 2) report it as they report a missing column.
"""
from __future__ import annotations

import io
import math
import sys
import zlib
from pathlib import Path
from typing import IO, Any, Callable, Iterator, Optional, Union

__all__ = ["CheckedText", "TableError", "announce", "duplicate_notice", "recorded_time"]

#: what reading a damaged file raises (gzip: EOFError, BadGzipFile (an OSError), zlib.error)
READ_ERRORS = (EOFError, OSError, zlib.error, UnicodeDecodeError)


class TableError(ValueError):
    """A recorded table that cannot be used as it is (one-line message: file, line, fix)."""


class CheckedText:
    """A text stream over a recorded table that counts the lines read and turns a read failure into a
    :class:`TableError` (``FILE: cannot be read after line N (...); ...``).  Iterate it (csv) or
    :meth:`read` it (json); use it as a context manager."""

    def __init__(self, stream: IO[str], path: Union[str, Path]) -> None:
        self._stream, self.path, self.lines = stream, Path(path), 0

    def __enter__(self) -> "CheckedText":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the underlying file (a damaged one may fail again while closing: ignored)."""
        try:
            self._stream.close()
        except READ_ERRORS:
            pass

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        try:
            line = next(self._stream)
        except READ_ERRORS as exc:
            raise self._failure(exc) from None
        self.lines += 1
        return line

    def read(self, size: int = -1) -> str:
        """The rest of the text (or ``size`` characters)."""
        try:
            text = self._stream.read(size)
        except READ_ERRORS as exc:
            raise self._failure(exc) from None
        self.lines += text.count("\n")
        return text

    def _failure(self, exc: BaseException) -> TableError:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        where = f"after line {self.lines}" if self.lines else "to its end"
        compressed = self.path.suffix == ".gz"
        fix = ("the file is truncated or corrupt: copy it again, or decompress what is left "
               "(zcat) and give the complete rows" if compressed else "give a UTF-8 text file")
        return TableError(f"{self.path}: cannot be read {where} ({detail}); {fix}")


def recorded_time(value: Any, where: Union[str, Callable[[], str]], what: str = "time") -> float:
    """Called by the readers once per recorded time: ``value`` as a float when it is a finite,
    non-negative number; otherwise a :class:`TableError` naming ``where`` (``FILE:LINE`` and the row;
    a callable is called only then) and the fix."""
    number = None if isinstance(value, bool) else value
    if isinstance(number, (int, float)) and math.isfinite(number) and number >= 0:
        return float(number)
    kind = "negative" if isinstance(number, (int, float)) and number < 0 else "not a finite number"
    place = where() if callable(where) else where
    raise TableError(f"{place}: {what} {value!r} is {kind}; a recorded time is a finite number >= 0: "
                     "correct the row or delete it")


def duplicate_notice(source: str, conflicting: int, rows: int, policy: str) -> Optional[str]:
    """The notice line for ``conflicting`` configurations recorded more than once with different
    results (``rows`` rows between them, merged by ``policy``); None when there are none."""
    if not conflicting:
        return None
    merged = {"median": "the median", "min": "the minimum", "first": "the first"}.get(policy, policy)
    return (f"tunerlib: notice: {source}: {conflicting} configuration(s) recorded more than once with different "
            f"results ({rows} rows); each is replayed as {merged} of its successful times")


def announce(line: Optional[str], stream: Optional[io.TextIOBase] = None) -> None:
    """Print ``line`` (when not None) to ``stream`` (default: stderr); called when a table is built."""
    if line is not None:
        print(line, file=stream or sys.stderr)
