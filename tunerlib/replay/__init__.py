"""tunerlib.replay: replay recorded measurements as a tuning oracle (nothing is measured).

The public names, by module (import them from ``tunerlib.replay``):

* :mod:`.table`    -- :class:`RecordedTable` (canonical key -> :class:`Record`, values in seconds),
  :class:`TableBuilder` (duplicate merging), :func:`canonical_value` (the key form of a value),
  :func:`open_text` (reads ``.gz`` transparently), :func:`to_seconds` / :data:`TIME_UNITS` (a reader
  converts the unit its files record);
* :mod:`.checks`   -- what every reader checks: :class:`TableError` (one line: file, line, fix),
  :func:`recorded_time` (a time is finite and not negative), truncated or corrupt files (read through
  :func:`open_text`), the notice for disagreeing duplicate rows;
* :mod:`.columns`  -- which CSV column is a parameter and which is metadata, by name
  (:func:`read_header`, :func:`split_columns`, :data:`OBJECTIVE_COLUMN`, :data:`METADATA_COLUMNS`);
* :mod:`.csvtable` -- :func:`read_csv_table`, the measurement CSV reader (``compute_time == 0`` =
  failed, :data:`FAILED_REASON`), and its cell parsers :func:`parse_number`, :func:`parse_value`,
  :func:`cached_parser`;
* :mod:`.spec`     -- :class:`BenchmarkSpec` / :class:`ParamDef` (a benchmark's parameters, known
  constraints, budgets, documented configurations; no file format), :func:`substitute_constants`,
  :func:`rows_in_space`, :func:`params_from_values`;
* :mod:`.benchmark` -- :class:`ReplayBenchmark` (spec + table: lookups, optimum, search space,
  optionally only the recorded configurations) and :func:`benchmark_from_table` (a table of unknown
  space, parameters inferred from its values);
* :mod:`.interface` -- :class:`ReplayInterface` (a MeasurementInterface answering from a
  benchmark), :class:`ReplayOptions`, :class:`ReplayStats`, :func:`replay_result`,
  :data:`TABLE_SPACE_HELP` (help text of a ``--table-space`` option), :data:`NOT_MEASURED_REASON`.

The core knows no benchmark collection, file format of a particular tool, or data folder: readers
and the catalogue of recorded benchmarks are in ``tunerlib.replay.recorded``.  The names of
:mod:`.interface` are imported on first use (it imports the tuning machinery).  Outcomes: OK
(recorded time in seconds), failed (INFEASIBLE with ``extra["reason"]``) and not measured (INFEASIBLE with
``extra["not_measured"] = True``).
"""
from ..lazy import lazy_exports

from .benchmark import ReplayBenchmark, benchmark_from_table, searched_space
from .checks import TableError, recorded_time
from .columns import METADATA_COLUMNS, OBJECTIVE_COLUMN, read_header, split_columns
from .csvtable import FAILED_REASON, cached_parser, parse_number, parse_value, read_csv_table
from .spec import BenchmarkSpec, ParamDef, params_from_values, rows_in_space, substitute_constants
from .table import TIME_UNITS, Record, RecordedTable, TableBuilder, canonical_value, open_text, to_seconds

_LAZY = ("NOT_MEASURED_REASON", "TABLE_SPACE_HELP", "ReplayInterface", "ReplayOptions", "ReplayStats",
         "replay_result")

__all__ = ["BenchmarkSpec", "FAILED_REASON", "METADATA_COLUMNS", "NOT_MEASURED_REASON", "OBJECTIVE_COLUMN",
           "ParamDef", "Record", "RecordedTable", "ReplayBenchmark", "ReplayInterface", "ReplayOptions",
           "ReplayStats", "TABLE_SPACE_HELP", "TIME_UNITS", "TableBuilder", "TableError", "benchmark_from_table",
           "cached_parser", "canonical_value", "open_text", "params_from_values", "parse_number", "parse_value",
           "read_csv_table", "read_header", "recorded_time", "replay_result", "rows_in_space", "searched_space",
           "split_columns", "substitute_constants", "to_seconds"]

__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(_LAZY, "interface"), __all__)
