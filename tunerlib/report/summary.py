"""What ``tunerlib report`` says about each run and across labels, as plain data (no formatting)."""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ..parameters import ConfigurationManipulator, ParameterError, parameter_from_json
from ..techniques import DEFAULT_TECHNIQUE
from .data import FAILURE_STATES, Point, RunData, by_label

__all__ = ["CompareRow", "RunSummary", "compare_rows", "error_text", "summarize", "technique_text"]


@dataclass
class RunSummary:
    """One run as the report shows it."""

    run: RunData
    log10_size: Optional[float]
    parameters: List[str]
    technique: str
    #: technique -> (requests, results, new bests)
    allocation: Dict[str, tuple]
    best: Optional[Point]
    baseline: Optional[Point]
    baseline_kind: str                 #: "seed", "first result" or "" (none)
    failures: Dict[str, int]
    first_errors: Dict[str, str] = field(default_factory=dict)

    @property
    def improvement(self) -> Optional[float]:
        """baseline / best for minimisation (best / baseline when maximising): how many times better
        the best is than the baseline; None when either is missing or not positive."""
        if self.best is None or self.baseline is None:
            return None
        a, b = self.baseline.value, self.best.value
        if a is None or b is None or a <= 0 or b <= 0:
            return None
        return a / b if self.run.sign > 0 else b / a

    @property
    def duration(self) -> Optional[float]:
        """Seconds from the start of the run to its end (or its last result)."""
        end = self.run.end_date or (self.run.start_date + max((p.seconds for p in self.run.points), default=0))
        return max(0.0, end - self.run.start_date)


def _space(parameter_info: str) -> tuple[Optional[float], List[str]]:
    """(log10 size of the space without constraints, inf with continuous parameters; parameter
    names) of a stored space; (None, []) when it cannot be read."""
    try:
        params = [parameter_from_json(p) for p in json.loads(parameter_info)["parameters"]]
    except (ValueError, KeyError, TypeError, ParameterError):
        return None, []
    return ConfigurationManipulator(params).log10_search_space_size(), [p.name for p in params]


def technique_text(args: Dict[str, Any]) -> str:
    """The technique the run was started with, as the command line named it."""
    if args.get("generate_bandit_technique"):
        return f"generated AUC bandit (C={args.get('bandit_c')}, window {args.get('bandit_window')})"
    names = list(args.get("technique") or [])
    if len(names) > 1:
        return f"AUC bandit over {', '.join(names)}"
    return names[0] if names else f"{DEFAULT_TECHNIQUE} (default)"


def error_text(extra: Any, limit: int = 400) -> str:
    """The most telling line of a failed result's extra: its error, else the last line of its
    traceback or stderr; "" when it has none."""
    if not isinstance(extra, dict):
        return ""
    for key in ("error", "message", "traceback", "stderr"):
        value = extra.get(key)
        if isinstance(value, str) and value.strip():
            text = value.strip() if key in ("error", "message") else value.strip().splitlines()[-1]
            return text if len(text) <= limit else text[:limit] + " ..."
    return ""


def _allocation(run: RunData) -> Dict[str, tuple]:
    requests = Counter(run.requests)
    results = Counter(p.technique for p in run.points)
    bests = Counter(p.technique for p in run.new_bests())
    names = sorted(set(requests) | set(results), key=lambda n: (-requests[n], n))
    return {n: (requests[n], results[n], bests[n]) for n in names}


def _baseline(run: RunData) -> tuple[Optional[Point], str]:
    seeds = [(p.value, p) for p in run.points if p.technique == "seed" and p.value is not None]
    if seeds:
        return min(seeds, key=lambda vp: run.sign * vp[0])[1], "seed"
    first = next((p for p in run.points if p.value is not None), None)
    return first, ("first result" if first is not None else "")


def summarize(run: RunData) -> RunSummary:
    """The :class:`RunSummary` of one run."""
    size, names = _space(run.parameter_info)
    failures = Counter(p.state for p in run.points if p.state in FAILURE_STATES)
    first_errors: Dict[str, str] = {}
    for p in run.points:
        if p.state in FAILURE_STATES and p.state not in first_errors:
            first_errors[p.state] = f"result {p.result_id}: " + (error_text(getattr(p.row, "extra", None))
                                                                  or "no error text recorded")
    baseline, kind = _baseline(run)
    return RunSummary(run, size, names, technique_text(run.args), _allocation(run), run.best_point(), baseline,
                      kind, dict(failures), first_errors)


@dataclass
class CompareRow:
    """One label across its runs (the compare table)."""

    label: str
    runs: int
    evaluations: float                   #: median evaluations per run
    at_budgets: Dict[int, tuple]         #: budget -> (median, p20, p80) of the best within it
    best: Optional[float]                #: the best value of all its runs
    failure_share: float
    median_seconds: float
    #: the objective's unit as its runs recorded it (``RunData.unit_text``: ``in s``, ``unitless``,
    #: ``unit not recorded``), one entry per different text, in order of first appearance
    units: List[str] = field(default_factory=list)
    #: how many of its runs were continued with ``--resume``
    resumed: int = 0


def _stats(values: Sequence[Optional[float]]) -> tuple:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return (None, None, None)
    return (float(np.median(finite)), float(np.percentile(finite, 20)), float(np.percentile(finite, 80)))


def budgets_of(runs: Sequence[RunData]) -> List[int]:
    """The budgets of the compare table: a quarter, half and all of the shortest run's evaluations."""
    shortest = min(len(r.points) for r in runs)
    return sorted({max(1, shortest // 4), max(1, shortest // 2), shortest})


def compare_rows(runs: Sequence[RunData]) -> tuple[List[int], List[CompareRow]]:
    """(budgets, one row per label) over the runs that have results."""
    runs = [r for r in runs if r.points]
    budgets = budgets_of(runs)
    rows = []
    for label, members in by_label(runs).items():
        curves = [m.best_so_far() for m in members]
        at = {b: _stats([c[b - 1] for c in curves]) for b in budgets}
        finals = [v for c in curves if (v := c[-1]) is not None]
        best = (min(finals, key=lambda v: members[0].sign * v) if finals else None)
        points = [p for m in members for p in m.points]
        failed = sum(p.state in FAILURE_STATES for p in points) / max(1, len(points))
        seconds = float(np.median([summarize_seconds(m) for m in members]))
        units = list(dict.fromkeys(m.unit_text for m in members))
        rows.append(CompareRow(label, len(members), float(np.median([len(m.points) for m in members])), at,
                               best, failed, seconds, units, sum(1 for m in members if m.resumes)))
    return budgets, rows


def summarize_seconds(run: RunData) -> float:
    """Seconds from the start of the run to its last result."""
    return max((p.seconds for p in run.points), default=0.0)


def iso(timestamp: Optional[float]) -> str:
    """Unix seconds as local ISO 8601 (``-`` when missing)."""
    if timestamp is None:
        return "-"
    return datetime.fromtimestamp(float(timestamp)).astimezone().isoformat(timespec="seconds")
