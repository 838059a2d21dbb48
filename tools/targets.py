"""The benchmark targets, checked on the runs tools/compare.py has just made or reloaded.

:func:`target_lines` is called by ``compare_report.report`` once per problem, after the reference lines; it
returns the problem's target and, for every technique of the run, its figure and ``met`` or
``missed``.  :func:`score_target_lines` is called under the aggregate score table.  Which target
applies follows from the problem's data (``tools/problems.py``):

* an exhaustively recorded Kernel Tuner cache: the median best/optimum at 100 evaluations at or below
  the better of the default technique's median in the same run and Kernel Tuner's genetic algorithm
  (its recorded reference figure, where ``references.REFERENCES`` has one);
* a RISE table searched in its kernel's space (known constraints), fully recorded: the worst seed's
  best/optimum at 60 evaluations at most 1.05;
* a table searched over its recorded configurations only (``@table``): the median at 100 at most 1.10;
* the aggregate score: ``references.SCORE_TARGETS``.

Nothing is printed for other problems.  :func:`auto_lines` (every problem) prints, per budget,
``auto``'s median best against the best other technique's median in the run and against the old
default's (``AUCBanditMetaTechniqueG``).  A target needs the run to reach its budget (``--budgets``).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence

from tunerlib.techniques import DEFAULT_TECHNIQUE
from tools.references import REFERENCES, SCORE_TARGETS, best_over_opt

GA_REFERENCE = "Kernel Tuner GA"


@dataclass(frozen=True)
class Target:
    """One per-problem target: ``statistic`` ("median" or "worst") of best/optimum over the runs at
    ``budget`` evaluations must be at most ``limit`` (None: set by the run, see :func:`cache_limit`)."""

    statistic: str
    budget: int
    limit: Optional[float]
    text: str


def is_kernel_tuner_cache(data: Mapping[str, Any]) -> bool:
    """Whether a compare.py problem is an exhaustively recorded Kernel Tuner cache in its own space."""
    return bool(data.get("replay") and data.get("family") == "kerneltuner" and not data.get("sparse")
                and not data.get("table_space"))


def problem_target(name: str, data: Mapping[str, Any]) -> Optional[Target]:
    """The target that applies to a problem of tools/compare.py (None: none does)."""
    if not data.get("replay"):
        return None
    if data.get("table_space"):
        return Target("median", 100, 1.10, "median best/opt at 100 evaluations <= 1.10 (a @table space)")
    if data.get("sparse"):
        return None
    if is_kernel_tuner_cache(data):
        return Target("median", 100, None, f"median best/opt at 100 evaluations <= the better of "
                                           f"{DEFAULT_TECHNIQUE}'s (this run) and {GA_REFERENCE}'s")
    if data.get("family") == "rise":
        return Target("worst", 60, 1.05, "worst seed's best/opt at 60 evaluations <= 1.05")
    return None


def ratio_at(runs: Sequence[Sequence[float]], budget: int, optimum: float, statistic: str) -> float:
    """The median or worst best/optimum over ``runs`` (values per evaluation) after ``budget``."""
    ratios = [min(r[:budget], default=math.inf) / optimum for r in runs]
    return max(ratios) if statistic == "worst" else statistics.median(ratios)


def cache_limit(name: str, runs: Mapping[str, Sequence[Sequence[float]]], optimum: float) -> Dict[str, float]:
    """The figures a Kernel Tuner cache's target compares with: {who: median best/opt at 100}."""
    limits = {}
    if runs.get(DEFAULT_TECHNIQUE):
        limits[f"{DEFAULT_TECHNIQUE} (this run)"] = ratio_at(runs[DEFAULT_TECHNIQUE], 100, optimum, "median")
    for who, budget, fig, conv in REFERENCES.get(name.split("=")[0], []):
        if who == GA_REFERENCE and budget == 100:
            limits[f"{GA_REFERENCE} (recorded)"] = best_over_opt(fig, conv)
    return limits


def target_lines(name: str, data: Mapping[str, Any], runs: Mapping[str, Sequence[Sequence[float]]],
                 optimum: Optional[float], top_budget: int) -> List[str]:
    """The target of problem ``name`` and each technique's figure against it (``runs``: technique ->
    values per evaluation of each run); [] when no target applies or the optimum is unknown."""
    target = problem_target(name, data)
    if target is None or not optimum or not runs:
        return []
    head = f"  target: {target.text}"
    if top_budget < target.budget:
        return [head + f"; not checked: the runs stop at {top_budget} evaluations (pass --budgets ... {target.budget})"]
    limit = target.limit
    if limit is None:
        limits = cache_limit(name, runs, optimum)
        if not limits:
            return [head + f"; not checked: run {DEFAULT_TECHNIQUE} beside it (no recorded {GA_REFERENCE} figure)"]
        who = min(limits, key=limits.__getitem__)
        limit = limits[who]
        head += f": {limit:.3f}x ({who})"
    lines = [head]
    for tech, tech_runs in sorted(runs.items()):
        if target.limit is None and tech == DEFAULT_TECHNIQUE:
            continue
        value = ratio_at(tech_runs, target.budget, optimum, target.statistic)
        miss = 100 * (value / limit - 1)
        verdict = "met" if value <= limit + 1e-9 else f"missed by {miss:.{1 if miss >= 1 else 3}f} %"
        lines.append(f"    {tech}: {target.statistic} {value:.3f}x over {len(tech_runs)} runs -- {verdict}")
    return lines


def score_target_lines(scores: Mapping[str, Mapping[str, float]], caches: Sequence[str]) -> List[str]:
    """Each technique with a score target (``references.SCORE_TARGETS``) and whether its mean score
    over the Kernel Tuner ``caches`` of the run meets it (``scores``: technique -> {space: score})."""
    lines = []
    for tech, limit in SCORE_TARGETS.items():
        cells = [v for space, v in scores.get(tech, {}).items() if space in caches]
        if not cells:
            why = "not in this run" if tech not in scores else "no Kernel Tuner cache in this run"
            lines.append(f"  target: {tech} >= {limit} on the Kernel Tuner caches ({why})")
            continue
        mean = sum(cells) / len(cells)
        verdict = "met" if mean >= limit else "missed"
        lines.append(f"  target: {tech} >= {limit} on the Kernel Tuner caches: {mean:.3f} over the "
                     f"{len(cells)} of this run -- {verdict}")
    return lines


#: the technique the auto check is about, the old default it must never trail, and its tolerance
AUTO, OLD_DEFAULT, AUTO_TOLERANCE = "auto", "AUCBanditMetaTechniqueG", 0.02


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (0 <= q <= 1) as compare.py's tables print it: the value at the
    sorted position nearest to ``q * (n - 1)`` (of 10 seeds, the 8th best for the 80th percentile)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))]


def auto_lines(runs: Mapping[str, Sequence[Sequence[float]]], budgets: Sequence[int],
               optimum: Optional[float]) -> List[str]:
    """Per budget: ``auto``'s median best against the best other technique's median of the run
    (met when within :data:`AUTO_TOLERANCE` or inside that technique's 20th-80th percentile band of
    seeds) and against the old default's, with no verdict where both medians are infinite (most runs
    found no valid configuration, as in a sparse table's whole space); [] when ``auto`` or every other
    technique is absent."""
    others = {t: r for t, r in runs.items() if t != AUTO and r}
    if not runs.get(AUTO) or not others:
        return []
    scale = optimum if optimum else 1.0
    unit = "x" if optimum else ""

    def bests(tech: str, budget: int) -> List[float]:
        return [min(r[:budget], default=math.inf) / scale for r in runs[tech]]
    lines = []
    for budget in budgets:
        mine = statistics.median(bests(AUTO, budget))
        medians = {t: statistics.median(bests(t, budget)) for t in others}
        best = min(medians, key=lambda t: (medians[t], t))
        band = percentile(bests(best, budget), 0.8)
        text = (f"  auto check @{budget}: auto median {mine:.4g}{unit}, best other {best} {medians[best]:.4g}{unit} "
                f"(80th percentile {band:.4g}{unit}) -- {_auto_verdict(mine, medians[best], band)}")
        if OLD_DEFAULT in medians:
            text += f"; {OLD_DEFAULT} {medians[OLD_DEFAULT]:.4g}{unit} -- {_g_verdict(mine, medians[OLD_DEFAULT])}"
        lines.append(text)
    return lines


#: the verdict when neither median is a value: most runs of both found no valid configuration
NO_VERDICT = "no verdict (most runs found no value)"


def _auto_verdict(mine: float, best: float, band: float) -> str:
    """``auto``'s median ``mine`` against the best other median ``best`` and its 80th percentile ``band``:
    met, missed, or no verdict when both medians are infinite (a median run without a value is never met)."""
    if math.isinf(mine) and math.isinf(best):
        return NO_VERDICT
    ok = math.isfinite(mine) and (mine <= best * (1 + AUTO_TOLERANCE) + 1e-12 or mine <= band)
    return "met" if ok else "missed"


def _g_verdict(mine: float, old_default: float) -> str:
    """``auto``'s median against the old default's: worse, not worse, or no verdict (both infinite)."""
    if math.isinf(mine) and math.isinf(old_default):
        return NO_VERDICT
    return "worse" if mine > old_default + 1e-12 else "not worse"
