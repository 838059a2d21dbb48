"""RISE/ELEVATE GPU kernel measurements from the BaCO / CATBench data (``<bench>_<gpu>.csv[.gz]``).

CSV columns, in any order (read by name, :mod:`tunerlib.replay.columns`): the tuning parameters
(``tuned_*``), ``compute_time`` (ms, minimise; the table holds it in seconds), ``energy`` (J),
``iterations`` and ``wait_after_run`` (fidelity columns).  Given the kernel's parameter names, those are the parameters
and every other column is metadata; otherwise every column but the known metadata ones is a
parameter.  A lookup matches on all the parameters.  The rows are read by tunerlib's measurement
CSV reader (:func:`tunerlib.replay.read_csv_table`):

* ``compute_time == 0.0`` is a failed run (timeout or invalid kernel) -> failed record, reason
  ``"compute_time == 0 (failed run)"``;
* duplicate rows of one configuration (asum, stencil) are merged (median of the OK values);
* ``Record.extra`` keeps ``energy`` (J);
* ``simulated_s`` is an estimate of the benchmarking cost: ``compute_time * iterations / 1000``
  (the files record no compile time; failed rows cost 0).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

from tunerlib.replay import FAILED_REASON, RecordedTable, parse_number

from .csvformat import CsvFormat

__all__ = ["FAILED_REASON", "read_rise_csv"]


RISE_CSV = CsvFormat(what="BaCO/CATBench measurement CSV", value=parse_number, runs=("iterations",),
                     extras=("energy",), suffix="gpu")


def read_rise_csv(path: Union[str, Path], name: Optional[str] = None, duplicates: str = "median",
                  params: Optional[Sequence[str]] = None) -> RecordedTable:
    """A RISE/BaCO measurement CSV as a :class:`RecordedTable`, metadata ``gpu`` (:meth:`CsvFormat.read`)."""
    return RISE_CSV.read(path, name, duplicates, params)
