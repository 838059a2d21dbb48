"""What the figures write on their axes: the objective with its unit (``best time (s)``), the
values of categorical and ordinal parameters at their places, and new matplotlib figures.

Every value axis names the objective's metric and the unit its runs recorded (``time (s)``; nothing
for unitless objectives; ``(unit not recorded)`` for runs from before units were recorded; the
units of each run when they differ, which no axis can hold together honestly)."""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import numpy as np

from .data import ReportError, RunData, objective_parts

__all__ = ["category_ticks", "new_figure", "objective_ticks", "unit_suffix", "value_label"]

#: at most this many values of an ordinal or numeric parameter are written on its axis
MAX_TICKS = 12


def new_figure(**kw: Any) -> Any:
    """A new matplotlib Figure (object-oriented API, no pyplot); ReportError naming the extra when
    matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401  (the package itself: its submodules may be cached)
        from matplotlib.figure import Figure
    except ImportError:
        raise ReportError("plots need matplotlib: pip install 'tunerlib[plot]'") from None
    return Figure(layout="constrained", **kw)


def unit_suffix(runs: Sequence[RunData]) -> str:
    """`` (s)``, ``""`` (unitless), `` (unit not recorded)`` or `` (mixed units: s, ms)``."""
    texts = list(dict.fromkeys(r.unit_text for r in runs))
    shown = [t[3:] if t.startswith("in ") else t for t in texts]
    if len(shown) > 1:
        return f" (mixed units: {', '.join(shown)})"
    return "" if not shown or shown[0] == "unitless" else f" ({shown[0]})"


def value_label(runs: Sequence[RunData], prefix: str = "") -> str:
    """The label of an axis of objective values: ``best time (s)`` with ``prefix="best"``."""
    try:
        metric = objective_parts(runs[0].objective or "")[1]
    except ReportError:
        metric = runs[0].objective or "objective"
    return f"{prefix + ' ' if prefix else ''}{metric}{unit_suffix(runs)}"


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def category_ticks(values: Sequence[Any]) -> Tuple[List[float], List[str]]:
    """(positions 0..k-1, labels) of categories coded 0..k-1."""
    return [float(i) for i in range(len(values))], [_short(v) for v in values]


def spread_ticks(column: np.ndarray, log: bool) -> Tuple[List[float], List[str]]:
    """(positions in [0, 1], labels) of the measured values of a numeric axis scaled to its range
    (on log values when ``log``): every distinct value when there are few (ordinals, small
    integers), else evenly spaced values of the range."""
    values = np.unique(column)
    scale = np.log if log and values.min() > 0 else (lambda v: v)
    lo, hi = float(scale(values.min())), float(scale(values.max()))
    if values.size > MAX_TICKS:
        picked = np.linspace(lo, hi, 5)
        values = np.exp(picked) if scale is np.log else picked
    where = [(float(scale(v)) - lo) / (hi - lo) if hi > lo else 0.5 for v in values]
    return where, [_short(float(v)) if not float(v).is_integer() else str(int(v)) for v in values]


def objective_ticks(y: np.ndarray, log: bool, count: int = 5) -> Tuple[List[float], List[str]]:
    """(positions in [0, 1], labels) of ``count`` objective values evenly spaced along an axis that
    maps min..max of ``y`` (of log10 y when ``log``) onto 0..1."""
    use_log = log and y.min() > 0
    lo, hi = (np.log10(y.min()), np.log10(y.max())) if use_log else (y.min(), y.max())
    if hi <= lo:
        return [0.5], [f"{float(y.min()):.4g}"]
    where = np.linspace(0.0, 1.0, count)
    values = lo + where * (hi - lo)
    return list(where), [f"{10 ** v if use_log else v:.4g}" for v in values]
