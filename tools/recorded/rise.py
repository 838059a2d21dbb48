"""RISE/ELEVATE GPU kernel measurements from the BaCO / CATBench data (``<bench>_<gpu>.csv[.gz]``).

CSV columns, in any order (read by name, :mod:`tunerlib.replay.columns`): the tuning parameters
(``tuned_*``), ``compute_time`` (ms, minimise), ``energy`` (J), ``iterations`` and
``wait_after_run`` (fidelity columns).  Given the kernel's parameter names, those are the parameters
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

from tunerlib.replay import FAILED_REASON, RecordedTable, parse_number, read_csv_table

__all__ = ["FAILED_REASON", "read_rise_csv"]


def read_rise_csv(path: Union[str, Path], name: Optional[str] = None, duplicates: str = "median",
                  params: Optional[Sequence[str]] = None) -> RecordedTable:
    """Read a RISE/BaCO measurement CSV into a :class:`RecordedTable` (called once per benchmark).

    ``params``: the kernel's parameter names (the table's key order); None reads an unknown table
    (see :mod:`tunerlib.replay.columns`).  Metadata: ``columns`` (the other columns) and ``gpu`` (the
    file-name suffix).  Raises ValueError (one line) for missing columns and malformed rows.
    """
    path = Path(path)
    gpu = path.name.split(".")[0].rsplit("_", 1)[-1]
    return read_csv_table(path, name, duplicates, params, value=parse_number, what="BaCO/CATBench measurement CSV",
                          runs=("iterations",), extras=("energy",), metadata={"gpu": gpu})
