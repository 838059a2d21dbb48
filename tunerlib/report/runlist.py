"""``tunerlib runs DB``: the runs of a results database as a table with a header: state, results,
the best value with its unit, and the technique each run was started with."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

from ..db.admin import shown_state
from ..objectives import UNIT_KEY
from .data import ReportError, metric_value, objective_parts, open_results
from .summary import iso, technique_text

__all__ = ["HEADER", "run_table", "write_table"]

HEADER = ["run", "program", "program version", "state", "results", "best", "technique", "label", "started",
          "seed"]


def _best(store: Any, run_id: int, objective: str, args: dict) -> str:
    """The run's best value with its unit (``1.25 ms``, ``-`` before a successful result); the
    objective when it cannot be read back."""
    try:
        sign, metric = objective_parts(objective)
    except ReportError:
        return f"- ({objective})"
    values = [v for v in (metric_value(metric, row) for row in store.run_results(run_id)) if v is not None]
    if not values:
        return "-"
    unit = args.get(UNIT_KEY) if UNIT_KEY in args else "(unit not recorded)"
    best = min(values, key=lambda v: sign * v)
    return f"{best:.6g}" + (f" {unit}" if unit else "") + f" ({metric}, {'lower' if sign > 0 else 'higher'} is better)"


def run_table(url: str) -> Tuple[List[str], List[List[str]]]:
    """(header, one row per run in id order) of the results database at ``url``; ReportError when
    there is no database there. Called by ``tunerlib runs``."""
    rows = []
    with open_results(url) as store:
        for info in store.list_runs():
            export = store.run_export(info["id"])
            args = export["args"] or {}
            rows.append([info["uuid"], f"{info['project']}/{info['program']}", str(info["version"]),
                         shown_state(info), str(info["tests"]), _best(store, info["id"], export["objective"] or "",
                                                                      args),
                         technique_text(args), info["label"] if info["label"] is not None else "-",
                         iso(info["start_date"]), str(info.get("seed"))])
    return HEADER, rows


def write_table(header: List[str], rows: List[List[str]], out: Any, note: Optional[str] = None) -> None:
    """An aligned text table with its header (the last column is not padded)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    last = len(header) - 1
    for cells in [header, *rows]:
        out.write("  ".join(c if i == last else c.ljust(widths[i]) for i, c in enumerate(cells)) + "\n")
    if note:
        out.write(note + "\n")
