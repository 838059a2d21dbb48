"""The figures of ``tunerlib plot`` and the HTML report (matplotlib: extra ``[plot]``).

matplotlib is imported only when a figure is drawn, through its object-oriented API (``Figure``, no
pyplot and no global backend), so drawing works headless. Artists carry a ``gid`` naming what they
show (``median:<label>:evals``, ``newbest:<label>:<technique>``, ``configs``, ``importance`` ...) so the
data of a figure can be read back and checked.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .data import FAILURE_STATES, ReportError, RunData, by_label
from .axes import category_ticks, new_figure, objective_ticks, spread_ticks, value_label
from .encode import encode, encoded_space, same_space
from .importance import importance
from .pareto import front_figure
from .series import allocation, band, eval_curves, failures, time_curves

__all__ = ["KINDS", "draw", "same_space"]

KINDS = ("history", "techniques", "params", "importance", "slice", "contour", "front")
MARKERS = {"ERROR": "x", "TIMEOUT": "v", "INFEASIBLE": "s"}
#: at most this many parameters get an axis in the parallel-coordinates view
MAX_AXES = 16


def _colors(n: int, name: str = "tab10") -> List[Any]:
    from matplotlib import colormaps
    cmap = colormaps[name if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _set_scale(ax: Any, values: np.ndarray, log: bool) -> None:
    if not log:
        return
    finite = values[np.isfinite(values)]
    ax.set_yscale("log" if finite.size and finite.min() > 0 else "symlog")


def _draw_band(ax: Any, data: Any, label: str, color: Any, axis: str, resumed: int = 0) -> None:
    note = f", {resumed} resumed: dotted lines" if resumed else ""
    ax.plot(data.x, data.median, color=color, gid=f"median:{label}:{axis}",
            label=f"{label} (median of {data.runs} run{'s' if data.runs != 1 else ''}{note})",
            drawstyle="steps-post" if axis == "evals" else "default")
    if data.runs > 1:
        ax.fill_between(data.x, data.low, data.high, color=color, alpha=0.2, linewidth=0,
                        gid=f"band:{label}:{axis}", step="post" if axis == "evals" else None)


def _draw_resumes(axes: Sequence[Any], members: Sequence[RunData], label: str, color: Any) -> int:
    """A dotted line where each resume of a run continued it (after its last result before the
    resume, and at the resume's time); returns how many of ``members`` were resumed."""
    for run in members:
        for mark in run.resumes:
            where = {"evals": mark.get("after_tests", 0) + 0.5,
                     "time": max(0.0, float(mark.get("date") or run.start_date) - run.start_date)}
            for ax, axis in zip(axes, ("evals", "time")):
                ax.axvline(where[axis], color=color, linestyle=":", linewidth=1.2,
                           gid=f"resume:{label}:{run.uuid}:{axis}")
    return sum(1 for run in members if run.resumes)


def _draw_failures(axes: Sequence[Any], members: Sequence[RunData], row: int, label: str, color: Any) -> int:
    found = failures(members)
    for state, hits in found.items():
        for ax, col, axis in ((axes[0], 0, "evals"), (axes[1], 1, "time")):
            xs = [hit[col] for hit in hits]
            ax.scatter(xs, np.full(len(xs), row), marker=MARKERS[state], color=color, s=18, linewidths=1,
                       gid=f"fail:{state}:{label}:{axis}")
    return sum(len(h) for h in found.values())


def history_figure(runs: Sequence[RunData], log: bool = False) -> Any:
    """Best so far vs evaluations and vs seconds: per label the median and 20-80 % band across its
    runs; below, a strip marking each failed result (ERROR x, TIMEOUT v, INFEASIBLE square)."""
    groups = by_label(runs)
    fig = new_figure(figsize=(11, 3.2 + 0.35 * len(groups) + 3))
    grid = fig.add_gridspec(2, 2, height_ratios=[4, 0.6 + 0.3 * len(groups)])
    top = [fig.add_subplot(grid[0, c]) for c in range(2)]
    strip = [fig.add_subplot(grid[1, c], sharex=top[c]) for c in range(2)]
    colors, failed, values = _colors(len(groups)), 0, []
    for row, (label, members) in enumerate(groups.items()):
        resumed = _draw_resumes(top, members, label, colors[row])
        for ax, axis, curves in ((top[0], "evals", eval_curves(members)), (top[1], "time", time_curves(members))):
            data = band(*curves)
            _draw_band(ax, data, label, colors[row], axis, resumed)
            values.append(data.median)
        failed += _draw_failures(strip, members, row, label, colors[row])
    for ax, xlabel in zip(top, ("evaluations", "seconds since the run started")):
        ax.set_title(f"best so far vs {xlabel.split()[0]}")
        ax.set_ylabel(value_label(runs, "best"))
        _set_scale(ax, np.concatenate(values), log)
        ax.grid(alpha=0.3)
    top[0].legend(fontsize="small")
    for ax, xlabel in zip(strip, ("evaluations", "seconds since the run started")):
        ax.set_yticks(range(len(groups)), list(groups), fontsize="small")
        ax.set_ylim(-0.7, len(groups) - 0.3)
        ax.set_xlabel(xlabel)
    strip[0].set_title("failures" if failed else "failures: none (ERROR / TIMEOUT / INFEASIBLE)",
                       fontsize="small", loc="left")
    if failed:
        _failure_legend(strip[1], failures(runs))
    return fig


def _failure_legend(ax: Any, found: Dict[str, Any]) -> None:
    """A legend of the failure markers of the states that occur."""
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], marker=MARKERS[s], color="black", linestyle="", label=s)
               for s in FAILURE_STATES if s in found]
    ax.legend(handles=handles, fontsize="x-small", loc="upper right", ncols=len(handles))


def techniques_figure(runs: Sequence[RunData], log: bool = False) -> Any:
    """Per label: each new best with the technique that proposed it (left), and the share of the
    requests each technique made over the run (right: the meta-technique's allocation)."""
    groups = by_label(runs)
    names = sorted({t for r in runs for t in r.requests} | {p.technique for r in runs for p in r.points})
    color = dict(zip(names, _colors(len(names), "tab20" if len(names) > 10 else "tab10")))
    fig = new_figure(figsize=(11, 3.0 * len(groups) + 0.8))
    axes = fig.subplots(len(groups), 2, squeeze=False)
    for row, (label, members) in enumerate(groups.items()):
        _new_bests(axes[row][0], members, label, color, log)
        _allocation(axes[row][1], members, label, color)
    handles = [axes[0][1].fill_between([], [], color=color[n], label=n) for n in names]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(4, len(names)), fontsize="small")
    return fig


def _new_bests(ax: Any, members: Sequence[RunData], label: str, color: Dict[str, Any], log: bool) -> None:
    points: Dict[str, List[Any]] = {}
    for run in members:
        for p in run.new_bests():
            points.setdefault(p.technique, []).append((p.index, p.value))
    for technique, xy in sorted(points.items()):
        xs, ys = zip(*xy)
        ax.scatter(xs, ys, color=color[technique], s=22, gid=f"newbest:{label}:{technique}")
    _set_scale(ax, np.array([v for xy in points.values() for _, v in xy], dtype=float), log)
    ax.set_title(f"{label}: new bests by technique ({len(members)} run{'s' if len(members) != 1 else ''})",
                 fontsize="medium")
    ax.set_xlabel("evaluation")
    ax.set_ylabel(value_label(members))
    ax.grid(alpha=0.3)


def _allocation(ax: Any, members: Sequence[RunData], label: str, color: Dict[str, Any]) -> None:
    centres, shares = allocation(members)
    if shares:
        names = sorted(shares)
        polys = ax.stackplot(centres, *[shares[n] for n in names], colors=[color[n] for n in names])
        for poly, name in zip(polys, names):
            poly.set_gid(f"alloc:{label}:{name}")
    ax.set_ylim(0, 1)
    ax.set_title(f"{label}: share of requests per technique", fontsize="medium")
    ax.set_xlabel("request")
    ax.set_ylabel("share")


def params_figure(runs: Sequence[RunData], log: bool = False) -> Any:
    """Parallel coordinates: one polyline per OK result across the parameters (scaled to their
    measured range; categories spread evenly) and the objective; the best one in red."""
    from matplotlib.collections import LineCollection
    from matplotlib import colormaps
    from matplotlib.colors import LogNorm, Normalize
    chosen, enc = encoded_space(runs, "the parameter view")
    names = enc.names[:MAX_AXES]
    unit = enc.unit()[:, :len(names)]
    yv = np.log10(enc.y) if log and enc.y.min() > 0 else enc.y
    span = np.ptp(yv)
    obj = (yv - yv.min()) / span if span > 0 else np.full(yv.size, 0.5)
    coords = np.column_stack([unit, obj])
    order = np.argsort(-enc.sign * enc.y, kind="stable")        # best drawn last
    xs = np.arange(coords.shape[1])
    norm = (LogNorm if log and enc.y.min() > 0 else Normalize)(enc.y.min(), enc.y.max())
    cmap = colormaps["viridis_r" if enc.sign > 0 else "viridis"]
    fig = new_figure(figsize=(max(7, 1.1 * len(xs) + 3), 5))
    ax = fig.add_subplot()
    lines = LineCollection([np.column_stack([xs, coords[i]]) for i in order], cmap=cmap, norm=norm,
                           linewidths=0.8, alpha=0.6, gid="configs")
    lines.set_array(enc.y[order])
    ax.add_collection(lines)
    ax.plot(xs, coords[order[-1]], color="red", linewidth=2.2, gid="best", label="best")
    _axes_labels(ax, enc, names, xs, log, value_label(chosen))
    fig.colorbar(lines, ax=ax, label=value_label(chosen))
    title = f"{chosen[0].program}: {enc.y.size} successful results of {len(chosen)} run(s)"
    left_out = enc.skipped + enc.names[MAX_AXES:]
    ax.set_title(title + (f"\n(not shown: {', '.join(left_out)})" if left_out else ""), fontsize="medium")
    ax.legend(loc="upper right", fontsize="small")
    return fig


def _axes_labels(ax: Any, enc: Any, names: Sequence[str], xs: np.ndarray, log: bool, objective: str) -> None:
    """Each axis's values at their places (every category or ordinal value; a numeric range at a few
    points) and the objective's values on the last axis; texts with gid ``tick:<name>``."""
    for j, name in enumerate(names):
        ax.axvline(j, color="grey", linewidth=0.8)
        cats = enc.categories.get(name)
        if cats:
            where, labels = category_ticks(cats)
            where = [w / (len(cats) - 1) if len(cats) > 1 else 0.5 for w in where]
        else:
            where, labels = spread_ticks(enc.X[:, j], name in enc.log_scaled)
        _ticks(ax, j, where, labels, name)
    ax.axvline(xs[-1], color="black", linewidth=1)
    _ticks(ax, xs[-1], *objective_ticks(enc.y, log), "objective")
    shown = [f"{n} (log)" if n in enc.log_scaled else n for n in names]
    ax.set_xticks(xs, shown + [objective], rotation=30, ha="right", fontsize="small")
    ax.set_yticks([])
    ax.set_xlim(-0.3, xs[-1] + 0.6)
    ax.set_ylim(-0.05, 1.05)


def _ticks(ax: Any, x: float, where: Sequence[float], labels: Sequence[str], name: str) -> None:
    for y, text in zip(where, labels):
        ax.plot([x - 0.04, x], [y, y], color="grey", linewidth=0.8)
        ax.text(x + 0.04, y, text, ha="left", va="center", fontsize="xx-small", gid=f"tick:{name}",
                bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0, "pad": 0.5})


def importance_figure(runs: Sequence[RunData], log: bool = False) -> Any:
    """Bar chart of each parameter's main-effect variance fraction (see :mod:`.importance`)."""
    chosen = same_space(runs)
    result = importance(encode(chosen))
    fig = new_figure(figsize=(7, 1.2 + 0.35 * len(result.names)))
    ax = fig.add_subplot()
    bars = ax.barh(result.names[::-1], result.fractions[::-1], color="tab:blue", gid="importance")
    ax.bar_label(bars, fmt="%.2f", fontsize="x-small", padding=2)
    ax.set_xlim(0, 1.08)
    ax.set_xlabel("share of variance explained by the parameter alone")
    note = f"; not modelled: {', '.join(result.skipped)}" if result.skipped else ""
    caution = "\nthe forest explains little of the results: read with care" if result.r2 < 0.5 else ""
    ax.set_title(f"{chosen[0].program}: parameter importance\n(random forest on {result.results} results, "
                 f"out-of-bag R² {result.r2:.2f}{note}){caution}", fontsize="small")
    return fig


_DRAW = {"history": history_figure, "techniques": techniques_figure, "params": params_figure,
         "importance": importance_figure, "front": front_figure}


def draw(kind: str, runs: Sequence[RunData], log: bool = False, params: Optional[Sequence[str]] = None) -> Any:
    """The figure ``kind`` (one of :data:`KINDS`) of ``runs``; ``params`` (``--params``) chooses the
    parameters of the slice and contour views (ReportError for another kind)."""
    from .views import VIEWS
    if kind in VIEWS:
        return VIEWS[kind](runs, log, params)
    if params:
        raise ReportError(f"--params chooses the parameters of --kind {' or '.join(VIEWS)}, not of --kind {kind}")
    return _DRAW[kind](runs, log)
