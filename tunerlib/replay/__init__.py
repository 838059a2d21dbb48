"""tunerlib.replay: replay recorded measurements as a tuning oracle (no GPU or TACO needed).

* :mod:`.table`       -- :class:`RecordedTable` (canonical key -> :class:`Record`), duplicate merging;
* :mod:`.kerneltuner` -- Kernel Tuner cache JSON(.gz) reader and T1 specification conditions;
* :mod:`.rise`        -- RISE/BaCO GPU kernel CSV reader (``compute_time == 0`` = failed);
* :mod:`.taco`        -- CATBench TACO CSV reader (permutation strings -> tuples);
* :mod:`.spaces`      -- search spaces with known constraints of every recorded benchmark
  (:data:`BENCHMARKS`), feasible counting;
* :mod:`.columns`     -- which CSV column is a parameter and which is metadata (by name);
* :mod:`.benchmark`   -- :class:`ReplayBenchmark` / :func:`load_benchmark` (space + table: lookups,
  optimum);
* :mod:`.files`       -- :func:`benchmark_from_file`: a table file from any machine in its kernel's space;
* :mod:`.interface`   -- :class:`ReplayInterface`, a MeasurementInterface answering from a table.

The names of :mod:`.interface` are imported on first use (so ``python -m tunerlib.replay.interface``
runs cleanly).  Outcomes: OK (recorded time, ms), failed (INFEASIBLE with ``extra["reason"]``) and not measured
(INFEASIBLE with ``extra["not_measured"] = True``).
"""
from importlib import import_module
from typing import Any

from .kerneltuner import read_kerneltuner_cache, read_t1_spec, t1_constraints
from .rise import read_rise_csv
from .spaces import (BENCHMARKS, SHARED_ENV, BenchmarkSpec, ParamDef, available_benchmarks, default_shared_dir,
                     rows_in_space)
from .table import Record, RecordedTable, TableBuilder, canonical_value
from .taco import read_taco_csv

__all__ = ["BENCHMARKS", "SHARED_ENV", "BenchmarkSpec", "ParamDef", "Record", "RecordedTable", "ReplayBenchmark",
           "ReplayInterface", "ReplayOptions", "ReplayStats", "TableBuilder", "available_benchmarks",
           "benchmark_from_file", "canonical_value", "default_shared_dir",
           "load_benchmark", "read_kerneltuner_cache", "read_rise_csv", "read_t1_spec", "read_taco_csv",
           "replay_result", "rows_in_space", "t1_constraints"]

_LAZY = ("ReplayBenchmark", "ReplayInterface", "ReplayOptions", "ReplayStats", "benchmark_from_file",
         "load_benchmark", "replay_result")


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'tunerlib.replay' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.interface"), name)   # it re-exports .benchmark and .files
    globals()[name] = value
    return value
