"""The numbers behind the plots (numpy only): best-so-far curves and their bands across runs, failures,
the technique credited with each new best and the allocation of requests over time."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np

from .data import FAILURE_STATES, RunData

__all__ = ["Band", "allocation", "band", "eval_curves", "failures", "time_curves"]

#: the band drawn around the median: these percentiles across runs of a label
LOW, HIGH = 20.0, 80.0


@dataclass
class Band:
    """Median and 20th/80th percentiles across runs at each x (NaN where no run has a value)."""

    x: np.ndarray
    median: np.ndarray
    low: np.ndarray
    high: np.ndarray
    runs: int


def eval_curves(runs: Sequence[RunData]) -> Tuple[np.ndarray, np.ndarray]:
    """(evaluations 1..N, best so far of each run after each evaluation): one row per run, NaN before a
    run's first OK result and after its last result."""
    length = max((len(r.points) for r in runs), default=0)
    matrix = np.full((len(runs), length), np.nan)
    for i, run in enumerate(runs):
        best = [np.nan if b is None else b for b in run.best_so_far()]
        matrix[i, :len(best)] = best
    return np.arange(1, length + 1), matrix


def time_curves(runs: Sequence[RunData], points: int = 200) -> Tuple[np.ndarray, np.ndarray]:
    """(seconds grid, best so far of each run at each time): NaN before a run's first OK result; a run
    that ended keeps its final best (so a median across runs never rises when one run stops early)."""
    end = max((p.seconds for r in runs for p in r.points), default=0.0)
    grid = np.linspace(0.0, end, points) if end > 0 else np.zeros(1)
    matrix = np.full((len(runs), grid.size), np.nan)
    for i, run in enumerate(runs):
        seconds, best = _best_by_time(run)
        upto = np.searchsorted(seconds, grid, side="right") - 1
        inside = upto >= 0
        matrix[i, inside] = best[upto[inside]]
    return grid, matrix


def _best_by_time(run: RunData) -> Tuple[np.ndarray, np.ndarray]:
    """(result times in increasing order, best value among the results stored by then; NaN before
    the first OK one)."""
    order = sorted(run.points, key=lambda p: (p.seconds, p.index))
    oriented = np.array([np.inf if p.value is None else run.sign * p.value for p in order])
    best = np.minimum.accumulate(oriented) * run.sign
    return np.array([p.seconds for p in order]), np.where(np.isfinite(best), best, np.nan)


def band(x: np.ndarray, matrix: np.ndarray) -> Band:
    """Median and the 20-80 % band of ``matrix``'s rows at each column (ignoring NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN, as wanted
        median = np.nanmedian(matrix, axis=0) if matrix.size else np.array([])
        low = np.nanpercentile(matrix, LOW, axis=0) if matrix.size else np.array([])
        high = np.nanpercentile(matrix, HIGH, axis=0) if matrix.size else np.array([])
    return Band(x, median, low, high, matrix.shape[0])


def failures(runs: Sequence[RunData]) -> Dict[str, List[Tuple[int, float]]]:
    """{failure state: [(evaluation number, seconds into the run), ...]} over ``runs``."""
    found: Dict[str, List[Tuple[int, float]]] = {state: [] for state in FAILURE_STATES}
    for run in runs:
        for point in run.points:
            if point.state in found:
                found[point.state].append((point.index, point.seconds))
    return {state: hits for state, hits in found.items() if hits}


def allocation(runs: Sequence[RunData], bins: int = 20) -> Tuple[np.ndarray, Dict[str, np.ndarray]]:
    """(centre request number of each bin, {technique: share of the bin's requests}) over ``runs``: which
    share of the requests each technique made, in ``bins`` equal windows of the request sequence."""
    length = max((len(r.requests) for r in runs), default=0)
    if length == 0:
        return np.array([]), {}
    edges = np.linspace(0, length, min(bins, length) + 1)
    names = sorted({t for r in runs for t in r.requests})
    counts = {name: np.zeros(edges.size - 1) for name in names}
    for run in runs:
        where = np.searchsorted(edges, np.arange(len(run.requests)), side="right") - 1
        for technique, b in zip(run.requests, where):
            counts[technique][min(b, edges.size - 2)] += 1
    total = sum(counts.values())
    total = np.where(total > 0, total, 1)
    centres = (edges[:-1] + edges[1:]) / 2 + 0.5
    return centres, {name: c / total for name, c in counts.items()}
