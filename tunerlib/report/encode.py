"""Configurations as a numeric matrix, for the parameter views and the importance model.

Numbers stay numbers; booleans and strings (enums, switches) become category codes, in the order of
the space's declared options where the stored search space names them; lists and other structured
values (permutations, arrays) cannot be placed on one axis and are left out (listed in ``skipped``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .data import ReportError, RunData

__all__ = ["Encoded", "encode", "encoded_space", "same_space", "space_info"]


@dataclass
class Encoded:
    """The OK results of some runs: one row per result, one column per parameter."""

    names: List[str]
    X: np.ndarray                          #: (results, parameters) raw numbers or category codes
    y: np.ndarray                          #: objective values as the user sees them
    sign: float                            #: +1 lower is better, -1 higher is better
    result_ids: List[int]
    categories: Dict[str, List[Any]] = field(default_factory=dict)   #: name -> values of codes 0..k-1
    skipped: List[str] = field(default_factory=list)
    #: numeric parameters the space declares log-scaled (their axes are logarithmic)
    log_scaled: List[str] = field(default_factory=list)

    def unit(self) -> np.ndarray:
        """X scaled to [0, 1] per column (observed min..max, on log values for log-scaled parameters;
        categories spread over 0..1)."""
        out = np.zeros_like(self.X, dtype=float)
        for j, name in enumerate(self.names):
            column = self.X[:, j]
            if name in self.categories:
                k = len(self.categories[name])
                out[:, j] = column / (k - 1) if k > 1 else 0.5
            else:
                if name in self.log_scaled and column.min() > 0:
                    column = np.log(column)
                lo, hi = float(column.min()), float(column.max())
                out[:, j] = (column - lo) / (hi - lo) if hi > lo else 0.5
        return out


_LOG_KINDS = ("pow2", "log_int", "log_float")


def space_info(parameter_info: str) -> Dict[str, Dict[str, Any]]:
    """{parameter name: {"options": declared values or None, "log": log-scaled}} in declared order;
    {} when the stored space cannot be read."""
    try:
        params = json.loads(parameter_info)["parameters"]
    except (ValueError, KeyError, TypeError):
        return {}
    found: Dict[str, Dict[str, Any]] = {}
    for p in params:
        if isinstance(p, dict) and "name" in p:
            kind: Any = p.get("kind")
            options = {"enum": p.get("options"), "ordinal": p.get("values"),
                       "bool": [False, True]}.get(kind)
            found[p["name"]] = {"options": list(options) if isinstance(options, list) else None,
                                "log": p.get("kind") in _LOG_KINDS or (p.get("kind") == "ordinal"
                                                                       and bool(p.get("log")))}
    return found


def _kind(values: Sequence[Any]) -> str:
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "number"
    if all(isinstance(v, (bool, str)) for v in values):
        return "category"
    return "skip"


def _column(values: List[Any], declared: Optional[List[Any]]) -> tuple[np.ndarray, Optional[List[Any]]]:
    """(codes or numbers, category values or None)."""
    kind = _kind(values)
    if kind == "number":
        return np.array(values, dtype=float), None
    seen = sorted(set(values), key=lambda v: (str(type(v)), v))
    cats = [c for c in (declared or []) if c in set(values)] + [v for v in seen if v not in (declared or [])]
    index = {c: i for i, c in enumerate(cats)}
    return np.array([index[v] for v in values], dtype=float), cats


def encode(runs: Sequence[RunData]) -> Encoded:
    """The OK results of ``runs`` (which share one search space) as an :class:`Encoded` matrix."""
    points = [p for r in runs for p in r.points if p.value is not None and isinstance(p.config, dict)]
    info = space_info(runs[0].parameter_info) if runs else {}
    order = {name: i["options"] for name, i in info.items()}
    keys = list(order) + sorted({k for p in points for k in p.config} - set(order))
    names, columns, categories, skipped = [], [], {}, []
    for key in keys:
        values = [p.config.get(key) for p in points]
        if not points or any(v is None for v in values) or _kind(values) == "skip":
            skipped.append(key)
            continue
        column, cats = _column(values, order.get(key))
        names.append(key)
        columns.append(column)
        if cats is not None:
            categories[key] = cats
    X = np.column_stack(columns) if columns else np.zeros((len(points), 0))
    sign = runs[0].sign if runs else 1.0
    logs = [n for n in names if info.get(n, {}).get("log") and n not in categories]
    return Encoded(names, X, np.array([p.value for p in points], dtype=float), sign,
                   [p.result_id for p in points], categories, skipped, logs)


def same_space(runs: Sequence[RunData]) -> List[RunData]:
    """The runs that share the first run's program and search space (parameter views need one space)."""
    first = runs[0]
    return [r for r in runs if (r.program, r.parameter_info) == (first.program, first.parameter_info)]


def encoded_space(runs: Sequence[RunData], view: str = "this view") -> tuple[List[RunData], Encoded]:
    """The runs that share the first run's space and their OK results encoded; called by every view
    that places parameters on axes.  ReportError (naming ``view``) when nothing can be placed."""
    chosen = same_space(runs)
    enc = encode(chosen)
    if not enc.names or enc.y.size == 0:
        raise ReportError(f"{view} needs successful results of numeric or categorical parameters; these "
                          f"runs have {enc.y.size} OK results and parameters "
                          f"{', '.join(enc.names + enc.skipped) or 'none'}")
    return chosen, enc
