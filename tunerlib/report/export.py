"""``tunerlib export``: every result with its configuration, as CSV, JSON records or Parquet.

One row per result; fixed columns first (:data:`COLUMNS`), then one column per parameter, named as
the parameter (``param:<name>`` where a parameter's name is one of the fixed columns). Values that are
lists or objects (permutations, arrays) are JSON text in CSV and Parquet, and stay lists in JSON.
``pandas.read_csv``, ``pandas.read_json(path)`` and ``pandas.read_parquet`` read the files as they are.
"""
from __future__ import annotations

import csv
import json
import math
import sys
from typing import Any, Dict, List, Optional, Sequence, TextIO

from ..db import ResultPlace
from .data import ReportError, RunData
from .pareto import is_multi_objective, on_front_flags
from .summary import iso

__all__ = ["COLUMNS", "FORMATS", "export_rows", "write_export"]

FORMATS = ("csv", "json", "parquet")
COLUMNS = ("run_uuid", "label", "program", "objective", "result_id", "evaluation", "state", "value",
           "best_so_far", "was_new_best", "technique", "requestor", "time", "accuracy", "energy", "size",
           "collection_date", "collection_time", "seconds_into_run", "collection_cost", "machine", "machine_class", "worker", "error")


#: the column added when a run has several objectives: True for the results on its Pareto front
FRONT_COLUMN = "on_pareto_front"

_NOWHERE = ResultPlace(None, None, None)


def _fixed(run: RunData, point: Any, best: Optional[float]) -> Dict[str, Any]:
    row = point.row
    extra = row.extra if isinstance(row.extra, dict) else {}
    error = next((extra[k] for k in ("error", "message") if isinstance(extra.get(k), str)), None)
    place = run.places.get(point.result_id, _NOWHERE)
    return {"run_uuid": run.uuid, "label": run.label, "program": run.program, "objective": run.objective,
            "result_id": point.result_id, "evaluation": point.index, "state": point.state,
            "value": point.value, "best_so_far": best, "was_new_best": point.was_new_best,
            "technique": point.technique, "requestor": point.requestor, "time": row.time,
            "accuracy": row.accuracy, "energy": row.energy, "size": row.size,
            "collection_date": row.collection_date, "collection_time": iso(row.collection_date),
            "seconds_into_run": round(point.seconds, 6), "collection_cost": row.collection_cost,
            "machine": place.machine, "machine_class": place.machine_class, "worker": place.worker, "error": error}


def parameter_columns(runs: Sequence[RunData]) -> Dict[str, str]:
    """{parameter name: its column name} in order of first appearance."""
    columns: Dict[str, str] = {}
    for run in runs:
        for point in run.points:
            for key in (point.config if isinstance(point.config, dict) else {}):
                if key not in columns:
                    columns[key] = f"param:{key}" if key in COLUMNS else key
    return columns


def export_rows(runs: Sequence[RunData]) -> tuple[List[str], List[Dict[str, Any]]]:
    """(column names, one dict per result) of ``runs``, in run and result order."""
    params = parameter_columns(runs)
    rows = []
    for run in runs:
        for point, best in zip(run.points, run.best_so_far()):
            row = _fixed(run, point, best)
            config = point.config if isinstance(point.config, dict) else {}
            row.update({column: config.get(key) for key, column in params.items()})
            rows.append(row)
    if any(is_multi_objective(run) for run in runs):   # several objectives: mark each run's front
        flags = [flag for run in runs for flag in on_front_flags(run)]
        for row, flag in zip(rows, flags):
            row[FRONT_COLUMN] = flag
        return list(COLUMNS) + [FRONT_COLUMN] + list(params.values()), rows
    return list(COLUMNS) + list(params.values()), rows


def _flat(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


def _finite(value: Any) -> Any:
    """None for NaN and infinities (not JSON), else the value."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _csv(columns: List[str], rows: List[Dict[str, Any]], out: TextIO) -> None:
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else _flat(v)) for k, v in row.items()})


def _parquet(columns: List[str], rows: List[Dict[str, Any]], path: str) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ReportError("--format parquet needs pyarrow: pip install 'tunerlib[parquet]' "
                          "(or use --format csv or json)") from None
    data = {c: [_flat(r.get(c)) for r in rows] for c in columns}
    arrays = {}
    for column, values in data.items():
        try:
            arrays[column] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):   # mixed types (e.g. 1 and "a"): keep text
            arrays[column] = pa.array([None if v is None else str(v) for v in values])
    pq.write_table(pa.table(arrays), path)


def write_export(runs: Sequence[RunData], fmt: str, path: Optional[str]) -> int:
    """Write every result of ``runs`` as ``fmt`` to ``path`` (``-`` or None: stdout, not for parquet);
    returns the number of rows."""
    to_file = path if path is not None and path != "-" else None
    if fmt == "parquet" and to_file is None:
        raise ReportError("--format parquet writes a file: pass -o FILE.parquet")
    columns, rows = export_rows(runs)
    try:
        if fmt == "parquet":
            assert to_file is not None
            _parquet(columns, rows, to_file)
            return len(rows)
        out = sys.stdout if to_file is None else open(to_file, "w", encoding="utf-8", newline="")
        try:
            if fmt == "csv":
                _csv(columns, rows, out)
            else:
                json.dump([{k: _finite(v) for k, v in row.items()} for row in rows], out, default=str)
                out.write("\n")
        finally:
            if out is not sys.stdout:
                out.close()
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(rows)
