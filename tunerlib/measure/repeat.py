"""Benchmarks over several seeds: re-timing passes, their noise, and spreads over seeds.

A benchmark script tunes a kernel once per seed, then re-times every seed's best together with the
baselines in interleaved rounds (:func:`~tunerlib.measure.time_interleaved`).  One such re-timing
gives one minimum per configuration; how far it can be trusted is seen by doing it again:
:func:`retime_passes` repeats the whole interleaved re-timing ``passes`` times and keeps each
configuration's minimum of every pass, :func:`pass_noise` is how much those minimums of the same
configuration differ (``max / min - 1``: 0.05 = the same configuration re-timed 5 % apart), and
:func:`spread` summarises per-seed speed-ups as median and range::

    per_pass = retime_passes(lambda: retime_all(configs), passes=2)   # {name: [min pass 1, min pass 2]}
    times = {name: min(v) for name, v in per_pass.items()}
    noise = pass_noise(per_pass)                                      # {name: 0.04, ...}
    spread([1.2, 0.9, 1.5]).text()                                    # '1.20x (0.90-1.50x)'
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence


def retime_passes(retime: Callable[[], Mapping[str, Optional[float]]], passes: int) -> Dict[str, List[float]]:
    """Call ``retime`` (one interleaved re-timing of all configurations: ``{name: min seconds, or
    None when it could not be timed}``) ``passes`` times; returns ``{name: [its minimum in each pass
    that timed it]}`` (names never timed are left out).  ValueError when ``passes < 1``."""
    if passes < 1:
        raise ValueError(f"re-timing passes must be >= 1, got {passes}")
    out: Dict[str, List[float]] = {}
    for _ in range(passes):
        for name, seconds in retime().items():
            if seconds is not None:
                out.setdefault(name, []).append(seconds)
    return out


def pass_noise(per_pass: Mapping[str, Sequence[float]]) -> Dict[str, float]:
    """``max / min - 1`` of each configuration's per-pass minimums (only those timed in two passes
    or more): how far two re-timings of the same configuration disagree."""
    return {name: max(v) / min(v) - 1.0 for name, v in per_pass.items() if len(v) >= 2 and min(v) > 0}


@dataclass(frozen=True)
class Spread:
    """Median, lowest and highest of a series of per-seed values (``n`` of them)."""

    median: float
    low: float
    high: float
    n: int

    def text(self, unit: str = "x", digits: int = 2) -> str:
        """``"1.20x (0.90-1.50x)"``; a single value prints alone (``"1.20x"``)."""
        if self.n == 1:
            return f"{self.median:.{digits}f}{unit}"
        return f"{self.median:.{digits}f}{unit} ({self.low:.{digits}f}-{self.high:.{digits}f}{unit})"


def spread(values: Sequence[float]) -> Optional[Spread]:
    """The :class:`Spread` of ``values`` (None when there are none)."""
    if not values:
        return None
    return Spread(statistics.median(values), min(values), max(values), len(values))
