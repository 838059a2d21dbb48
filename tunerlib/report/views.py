"""The slice and contour views of ``tunerlib plot`` (matplotlib, extra ``[plot]``).

* slice: the objective against each parameter, one panel per parameter, every OK result a point
  coloured by its evaluation number, the best one a red star;
* contour: the objective over two parameters (``--params A,B``; by default the two most important,
  :mod:`.importance`) as the random forest of the importance view predicts it with the other
  parameters averaged over their measured values (their partial dependence), the measured results on
  top. Categorical parameters sit at evenly spaced places labelled with their values.

Artists carry a ``gid`` (``slice:<name>``, ``best:<name>``, ``contour``, ``points``, ``best``) so the
data of a figure can be read back and checked.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .axes import category_ticks, new_figure, value_label
from .data import ReportError, RunData
from .encode import Encoded, encoded_space, space_info
from .importance import MIN_RESULTS, background, fit_forest, importance

__all__ = ["VIEWS", "contour_figure", "slice_figure"]

#: at most this many panels in the slice view (the first parameters of the space)
MAX_SLICES = 12
_GRID = 40
_BACKGROUND = 64


def _pick(enc: Encoded, params: Optional[Sequence[str]]) -> List[str]:
    """The parameters named by ``--params`` (checked), or [] when none were named."""
    wanted = [p for p in (params or []) if p]
    unknown = [p for p in wanted if p not in enc.names]
    if unknown:
        why = f" ({', '.join(enc.skipped)} cannot be placed on an axis)" if unknown[0] in enc.skipped else ""
        raise ReportError(f"--params: no parameter {unknown[0]!r} to plot{why}; parameters: {', '.join(enc.names)}")
    return list(dict.fromkeys(wanted))


def _evaluations(runs: Sequence[RunData], enc: Encoded) -> np.ndarray:
    index = {p.result_id: p.index for r in runs for p in r.points}
    return np.array([index[i] for i in enc.result_ids], dtype=float)


def _positions(enc: Encoded, name: str, jitter: bool) -> np.ndarray:
    """The values of ``name`` as x or y positions (categories spread a little when ``jitter``, so
    that the results of one category do not hide each other)."""
    column = enc.X[:, enc.names.index(name)]
    if name in enc.categories and jitter:
        return column + np.random.default_rng(0).uniform(-0.15, 0.15, column.size)
    return column


def _place(ax: Any, enc: Encoded, name: str, axis: str, options: Optional[Sequence[Any]]) -> None:
    """Label ``axis`` (x or y) of ``ax`` with the parameter: category names at their codes, every
    measured value of a numeric ordinal (its declared ``options``) at its place, a log scale for
    log-scaled parameters."""
    column = enc.X[:, enc.names.index(name)]
    log = name in enc.log_scaled and column.min() > 0
    getattr(ax, f"set_{axis}label")(name + (" (log scale)" if log else ""))
    if log:
        getattr(ax, f"set_{axis}scale")("log")
    if name in enc.categories:
        getattr(ax, f"set_{axis}ticks")(*category_ticks(enc.categories[name]))
    elif options:
        values = [v for v in options if v in set(column.tolist())]
        getattr(ax, f"set_{axis}ticks")(values, [str(v) for v in values])


def _options(runs: Sequence[RunData]) -> Dict[str, Any]:
    """{parameter: its declared values} of the runs' space (ordinals, enums, booleans)."""
    return {name: info["options"] for name, info in space_info(runs[0].parameter_info).items() if info["options"]}


def slice_figure(runs: Sequence[RunData], log: bool = False, params: Optional[Sequence[str]] = None) -> Any:
    """The objective against each parameter (``params``: only these), see the module docstring."""
    chosen, enc = encoded_space(runs)
    names = _pick(enc, params) or enc.names[:MAX_SLICES]
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    fig = new_figure(figsize=(4.2 * cols + 1, 3.3 * rows + 0.7))
    axes = fig.subplots(rows, cols, squeeze=False, sharey=True).ravel()
    evals, best = _evaluations(chosen, enc), int(np.argmin(enc.sign * enc.y))
    options = _options(chosen)
    points = None
    for ax, name in zip(axes, names):
        x = _positions(enc, name, True)
        points = ax.scatter(x, enc.y, c=evals, cmap="viridis", s=14, alpha=0.8, gid=f"slice:{name}")
        ax.scatter([x[best]], [enc.y[best]], marker="*", s=140, color="red", edgecolors="black",
                   linewidths=0.5, gid=f"best:{name}", label="best")
        _place(ax, enc, name, "x", options.get(name))
        ax.grid(alpha=0.3)
    for i, ax in enumerate(axes):
        if i >= len(names):
            ax.set_visible(False)
        elif i % cols == 0:
            ax.set_ylabel(value_label(chosen))
    if log and enc.y.min() > 0:
        axes[0].set_yscale("log")
    axes[0].legend(fontsize="small")
    fig.colorbar(points, ax=list(axes[:len(names)]), label="evaluation")
    left_out = enc.skipped + ([] if params else enc.names[MAX_SLICES:])
    fig.suptitle(f"{chosen[0].program}: objective against each parameter ({enc.y.size} successful results "
                 f"of {len(chosen)} run(s))" + (f"\nnot shown: {', '.join(left_out)}" if left_out else ""),
                 fontsize="medium")
    return fig


def _axis_grid(enc: Encoded, name: str) -> np.ndarray:
    column = enc.X[:, enc.names.index(name)]
    if name in enc.categories:
        return np.arange(len(enc.categories[name]), dtype=float)
    if name in enc.log_scaled and column.min() > 0:
        return np.geomspace(column.min(), column.max(), _GRID)
    return np.unique(column) if np.unique(column).size <= _GRID else np.linspace(column.min(), column.max(), _GRID)


def _contour_pair(enc: Encoded, params: Optional[Sequence[str]]) -> List[str]:
    picked = _pick(enc, params)
    if picked and len(picked) != 2:
        raise ReportError(f"--params: the contour view shows two parameters, got {len(picked)}: pass --params A,B")
    if len(enc.names) < 2:
        raise ReportError(f"the contour view needs two parameters that can be placed on an axis; these runs have "
                          f"{', '.join(enc.names)}" + (f" (and {', '.join(enc.skipped)})" if enc.skipped else ""))
    return picked or importance(enc).names[:2]


def partial_dependence(enc: Encoded, pair: Sequence[str]) -> Dict[str, Any]:
    """The forest's prediction (the user's objective values) on the grid of the two parameters, the
    other parameters averaged over rows drawn from their measured values: {"x", "y", "z", "r2"}."""
    if enc.y.size < MIN_RESULTS:
        raise ReportError(f"the contour view needs at least {MIN_RESULTS} successful results; these runs have "
                          f"{enc.y.size}")
    forest = fit_forest(enc.X, enc.sign * enc.y)
    rows = background(enc.X, np.random.default_rng(0), _BACKGROUND)
    a, b = (enc.names.index(n) for n in pair)
    gx, gy = _axis_grid(enc, pair[0]), _axis_grid(enc, pair[1])
    stacked = np.repeat(rows[None, :, :], gx.size * gy.size, axis=0)
    xx, yy = np.meshgrid(gx, gy)                       # z[i, k]: y = gy[i], x = gx[k]
    stacked[:, :, a] = xx.reshape(-1, 1)
    stacked[:, :, b] = yy.reshape(-1, 1)
    predicted = forest.predict(stacked.reshape(-1, enc.X.shape[1])).reshape(gy.size, gx.size, -1).mean(axis=2)
    return {"x": gx, "y": gy, "z": enc.sign * predicted, "r2": float(forest.oob_score_)}


def contour_figure(runs: Sequence[RunData], log: bool = False, params: Optional[Sequence[str]] = None) -> Any:
    """The objective over two parameters, see the module docstring."""
    from matplotlib.colors import LogNorm, Normalize
    chosen, enc = encoded_space(runs)
    pair = _contour_pair(enc, params)
    pd = partial_dependence(enc, pair)
    z = pd["z"]
    norm = (LogNorm if log and z.min() > 0 else Normalize)(z.min(), z.max())
    cmap = "viridis_r" if enc.sign > 0 else "viridis"
    fig = new_figure(figsize=(7.5, 5.5))
    ax = fig.add_subplot()
    if any(n in enc.categories for n in pair):
        mesh = ax.pcolormesh(pd["x"], pd["y"], z, shading="nearest", cmap=cmap, norm=norm, gid="contour")
    else:
        mesh = ax.contourf(pd["x"], pd["y"], z, levels=14, cmap=cmap, norm=norm)
        mesh.set_gid("contour")
    x, y = _positions(enc, pair[0], True), _positions(enc, pair[1], True)
    ax.scatter(x, y, s=10, color="white", edgecolors="black", linewidths=0.4, gid="points", label="measured")
    best = int(np.argmin(enc.sign * enc.y))
    ax.scatter([x[best]], [y[best]], marker="*", s=160, color="red", edgecolors="black", linewidths=0.5,
               gid="best", label="best")
    options = _options(chosen)
    _place(ax, enc, pair[0], "x", options.get(pair[0]))
    _place(ax, enc, pair[1], "y", options.get(pair[1]))
    ax.legend(fontsize="small", loc="upper right")
    fig.colorbar(mesh, ax=ax, label=f"predicted {value_label(chosen)}")
    caution = "; the forest explains little: read with care" if pd["r2"] < 0.5 else ""
    ax.set_title(f"{chosen[0].program}: {pair[0]} and {pair[1]} ({enc.y.size} successful results)\n"
                 f"random forest prediction, other parameters averaged over their measured values "
                 f"(out-of-bag R² {pd['r2']:.2f}{caution})", fontsize="small")
    return fig


#: kind -> drawing function taking (runs, log, params)
VIEWS = {"slice": slice_figure, "contour": contour_figure}
