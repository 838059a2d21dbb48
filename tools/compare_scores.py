"""The autotuning-methodology score in tools/compare.py's report (``--score``).

:func:`score_block` is called by ``compare_report.report`` after each problem's table: it prints
every technique's score on that problem (tools/score.py: 0 random search, 1 the optimum) and returns
them.  :func:`score_summary` is called once after the last problem with the scores of every problem
that has them: it prints the closing table (score per space, the means) and the published and target
lines under it.  A problem has a score when its recorded table is exhaustive (its population).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from tools.compare_runs import split_cpu
from tools.problems import Problem, shared_root
from tools.references import KERNEL_TUNER_SCORE_SPACES, score_reference_lines
from tools.score import (CUTOFF_PERCENTILE, Population, SpaceScore, aggregate, cutoff_evaluations,
                         replay_population, score_table, space_score)
from tools.targets import score_target_lines


def _population(problem: Problem) -> Optional[Population]:
    """The score's population of a replay problem (cached in its data); None for other problems and
    for sparse tables (random search over their space is not known from the table)."""
    if "population" not in problem.data:
        bench = problem.data.get("benchmark")
        usable = bench is not None and not problem.data.get("sparse")
        problem.data["population"] = (replay_population(bench, problem.data.get("table_space", False))
                                      if usable else None)
    return problem.data["population"]


def score_block(out: Any, pname: str, problem: Problem, results: Dict[Tuple[str, str], List[List[float]]],
                costs: Dict[Tuple[str, str], List[List[float]]], top: int) -> Dict[str, SpaceScore]:
    """Print and return each technique's score on one problem (nothing without a population)."""
    pop = _population(problem)
    if pop is None:
        out.write("  score: needs an exhaustively recorded space (a non-sparse replay table)\n")
        return {}
    scores = {tech: space_score([split_cpu(v)[0] for v in raw], pop, top, costs.get((p, tech)))
              for (p, tech), raw in sorted(results.items()) if p == pname}
    if not scores:
        return {}
    first, last = next(iter(scores.values())).budgets
    out.write(f"  score (autotuning methodology: 0 random search, 1 the optimum; mean over evaluations "
              f"{first}..{last}; the methodology's cutoff here: {cutoff_evaluations(pop, CUTOFF_PERCENTILE)} evaluations):\n")
    for tech, s in scores.items():
        timed = f"   time-based {s.time_mean:.3f}" if s.time_mean is not None else ""
        out.write(f"{'':<4}{tech:<32} {s.mean:6.3f} (sd over runs {s.std:.3f}, n={s.runs}){timed}"
                  f"   median-rank {s.rank:.3f}\n")
    return scores


def score_summary(out: Any, per_space: Dict[str, Dict[str, SpaceScore]], shared: Optional[str] = None,
                  caches: Sequence[str] = ()) -> None:
    """The closing table: score per space, the mean over spaces (evaluation- and time-based), the
    mean over Kernel Tuner's anchor spaces when all were run, and the Kernel Tuner reference lines."""
    if not per_space:
        return
    techniques = sorted({t for scores in per_space.values() for t in scores})
    spaces = sorted(per_space)
    anchor = all(s in per_space for s in KERNEL_TUNER_SCORE_SPACES)
    widths = [max(7, len(s)) + 1 for s in spaces]
    out.write("\n== autotuning-methodology score per space; mean over spaces (evaluation-based; time-based "
              "from the recorded simulated seconds)\n")
    out.write(f"{'technique':<32}" + "".join(f"{s:>{w}}" for s, w in zip(spaces, widths))
              + f"{'mean':>8}{'time':>8}{'rank':>8}" + (f"{'conv+dedisp':>13}" if anchor else "") + "\n")
    rows = score_table(per_space, techniques)
    for row in rows:
        cells = row.per_space
        text = "".join(f"{cells[s]:>{w}.3f}" if s in cells else f"{'-':>{w}}" for s, w in zip(spaces, widths))
        sub = aggregate({s: cells[s] for s in KERNEL_TUNER_SCORE_SPACES if s in cells})
        text += "".join(f"{x:>8.3f}" if x is not None else f"{'-':>8}" for x in (row.mean, row.time_mean, row.rank_mean))
        out.write(f"{row.technique:<32}{text}" + (f"{sub:>13.3f}" if anchor else "") + "\n")
    out.write("  mean: of the evaluation-based scores; time: of the time-based ones; rank: of the methodology's "
              "median-rank estimator" + ("; conv+dedisp: the mean over Kernel Tuner's anchor spaces" if anchor else "")
              + "\n")
    for line in (score_reference_lines(shared_root(shared) / "data" / "gpu_cache" / "published_scores")
                 + score_target_lines({r.technique: r.per_space for r in rows}, caches)):
        out.write(line + "\n")
