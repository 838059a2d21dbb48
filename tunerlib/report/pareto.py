"""The Pareto front of multi-objective runs in ``tunerlib plot --kind front``, the report and ``export``.

A run has several objectives when its stored objective text lists them (``minimize time, minimize
energy``).  Its front is the non-dominated set of its OK results (oriented: maximised metrics negated);
the hypervolume curve measures the front of the first N results against a reference point beyond the
nadir of the run's final front (nadir + 10 % of the front's range in each objective, + 1 where the range
is 0), so the curves of one run are comparable along its evaluations.

The figure: for two objectives a scatter of every OK result with the front highlighted (gid ``front``)
and its staircase; for more, parallel coordinates (each objective scaled to [0, 1], front members
highlighted); beside it the hypervolume over evaluations (gid ``hypervolume:<run uuid>``).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..techniques.pareto import dominates, hypervolume, non_dominated
from ..multiobjective import UNITS_KEY
from .data import ReportError, RunData, metric_value

__all__ = ["front_figure", "front_members", "hypervolume_curve", "is_multi_objective", "metrics_of"]

Metric = Tuple[float, str]


def metrics_of(objective: str) -> List[Metric]:
    """[(sign, metric)] of a stored objective text; one entry for a single objective."""
    out = []
    for part in (objective or "").split(", "):
        words = part.split(" ", 1)
        if len(words) != 2 or words[0] not in ("minimize", "maximize"):
            return []
        out.append((1.0 if words[0] == "minimize" else -1.0, words[1]))
    return out


def is_multi_objective(run: RunData) -> bool:
    """True when the run optimised several objectives."""
    return len(metrics_of(run.objective)) > 1


def oriented(run: RunData) -> List[Optional[Tuple[float, ...]]]:
    """Each point's oriented vector (lower is better), None unless OK with every metric."""
    metrics = metrics_of(run.objective)
    out: List[Optional[Tuple[float, ...]]] = []
    for point in run.points:
        raw = [metric_value(name, point.row) for _, name in metrics] if point.row is not None else [None]
        values = [v for v in raw if v is not None]
        out.append(None if len(values) < len(raw) else tuple(s * v for (s, _), v in zip(metrics, values)))
    return out


def front_members(run: RunData) -> List[int]:
    """Indices (into ``run.points``) of the results on the run's Pareto front."""
    ok = [(i, v) for i, v in enumerate(oriented(run)) if v is not None]
    return [ok[j][0] for j in non_dominated([v for _, v in ok])] if ok else []


def reference_point(points: np.ndarray) -> np.ndarray:
    """Nadir + 10 % of the range per objective (+1 where the range is 0)."""
    low, high = points.min(axis=0), points.max(axis=0)
    span = high - low
    return high + np.where(span > 0, 0.1 * span, 1.0)


def hypervolume_curve(run: RunData) -> Tuple[List[int], List[float]]:
    """(evaluation numbers, hypervolume of the front of the first N results): the first OK result and every
    result that entered the front of those before it."""
    vectors = oriented(run)
    members = front_members(run)
    if not members:
        return [], []
    ref = reference_point(np.asarray([vectors[i] for i in members], dtype=float))
    xs: List[int] = []
    ys: List[float] = []
    front: List[Tuple[float, ...]] = []
    for i, v in enumerate(vectors):
        if v is None or any(all(a <= b for a, b in zip(q, v)) for q in front):
            continue
        front = [q for q in front if not dominates(v, q)] + [v]
        xs.append(run.points[i].index)
        ys.append(hypervolume(front, ref))
    return xs, ys


def _new_figure(**kw: Any) -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ReportError("plots need matplotlib: pip install 'tunerlib[plot]'") from None
    return Figure(layout="constrained", **kw)


def front_figure(runs: Sequence[RunData], log: bool = False) -> Any:
    """One row per multi-objective run: its front (scatter or parallel coordinates) and hypervolume."""
    chosen = [r for r in runs if is_multi_objective(r) and front_members(r)]
    if not chosen:
        raise ReportError("no run with several objectives and an OK result: the front figure needs "
                          "a run started with --objectives A,B")
    fig = _new_figure(figsize=(11, 4 * len(chosen)))
    axes = fig.subplots(len(chosen), 2, squeeze=False)
    for row, run in enumerate(chosen):
        metrics = metrics_of(run.objective)
        if len(metrics) == 2:
            _scatter(axes[row][0], run, metrics, log)
        else:
            _parallel(axes[row][0], run, metrics)
        xs, ys = hypervolume_curve(run)
        axes[row][1].plot(xs, ys, drawstyle="steps-post", gid=f"hypervolume:{run.uuid}")
        axes[row][1].set_xlabel("evaluations")
        axes[row][1].set_ylabel("hypervolume")
        axes[row][1].set_title(f"{run.program} {run.uuid[:8]}: hypervolume of the front so far\n(reference: "
                               "final front's nadir + 10 % of its range)", fontsize="small")
    return fig


def _scatter(ax: Any, run: RunData, metrics: Sequence[Metric], log: bool) -> None:
    vectors = oriented(run)
    members = set(front_members(run))
    shown = np.asarray([[s * x for (s, _), x in zip(metrics, v)] for v in vectors if v is not None])
    ax.scatter(shown[:, 0], shown[:, 1], s=12, color="0.6", label="results", gid="results")
    front = np.asarray(sorted([s * x for (s, _), x in zip(metrics, v)] for i in members
                              if (v := vectors[i]) is not None))
    ax.scatter(front[:, 0], front[:, 1], s=30, color="C3", label=f"Pareto front ({len(front)})", gid="front",
               zorder=3)
    ax.plot(front[:, 0], front[:, 1], color="C3", drawstyle="steps-post", linewidth=1)
    ax.set_xlabel(_label(run, metrics[0][1]))
    ax.set_ylabel(_label(run, metrics[1][1]))
    if log and shown.min() > 0:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.legend(fontsize="small")
    ax.set_title(f"{run.program} {run.uuid[:8]}: {run.objective}", fontsize="small")


def _parallel(ax: Any, run: RunData, metrics: Sequence[Metric]) -> None:
    vectors = oriented(run)
    members = set(front_members(run))
    ok = [i for i, v in enumerate(vectors) if v is not None]
    arr = np.asarray([vectors[i] for i in ok], dtype=float)
    low, span = arr.min(axis=0), np.ptp(arr, axis=0)
    scaled = (arr - low) / np.where(span > 0, span, 1.0)
    xs = np.arange(len(metrics))
    for row, i in zip(scaled, ok):
        on = i in members
        ax.plot(xs, row, color="C3" if on else "0.75", linewidth=1.5 if on else 0.5, zorder=3 if on else 1,
                gid="front" if on else "results")
    ax.set_xticks(xs, [_label(run, name) for _, name in metrics], rotation=20, fontsize="small")
    ax.set_ylabel("scaled objective (0 = best seen)")
    ax.set_title(f"{run.program} {run.uuid[:8]}: Pareto front ({len(members)}, red) in parallel coordinates",
                 fontsize="small")


def _label(run: RunData, metric: str) -> str:
    units = run.args.get(UNITS_KEY) if isinstance(run.args, dict) else None
    unit = units.get(metric) if isinstance(units, dict) else None
    return metric if unit is None else f"{metric} ({unit})"


def on_front_flags(run: RunData) -> List[Optional[bool]]:
    """For ``export``: per point, whether it is on the run's front (None for single-objective runs)."""
    if not is_multi_objective(run):
        return [None] * len(run.points)
    members = set(front_members(run))
    return [i in members for i in range(len(run.points))]
