"""The report of tools/compare.py: one block per problem, from the runs just made or reloaded.

:func:`report` is called by ``compare.main`` (and by tests, with hand-made runs) once all runs are
in: per technique and budget the median best value with its 20th/80th percentiles and the median and
worst ratios to the optimum, the runs within 1 % of the optimum, the expert configuration and named
baselines where the problem has them, then the reference, target and ``auto`` check lines
(tools/references.py, tools/targets.py) and, with ``score``, the methodology's score
(tools/compare_scores.py).  Each run's values may end with its CPU seconds, negated
(``compare_runs.split_cpu``): they give the ``cpu s/eval`` column.
"""
from __future__ import annotations

import math
import statistics
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from tools.compare_runs import split_cpu
from tools.compare_scores import score_block, score_summary
from tools.problems import Problem
from tools.references import reference_lines
from tools.score import SpaceScore, within
from tools.targets import auto_lines, is_kernel_tuner_cache, percentile, target_lines


def _best_at(values: Sequence[float], budget: int) -> float:
    return min(values[:budget], default=math.inf)


def report(results: Dict[Tuple[str, str], List[List[float]]], problems: Dict[str, Problem],
           budgets: Union[Sequence[int], Mapping[str, Sequence[int]]], out: Any = None, score: bool = False,
           costs: Optional[Dict[Tuple[str, str], List[List[float]]]] = None, shared: Optional[str] = None) -> None:
    """Print one block per problem: technique × budget → median [p20, p80] (median and worst
    run as ratios to the optimum, when known); ``budgets`` is one list for every problem or a list per
    problem.  With ``score``, also the runs within 5 % of the
    optimum, the autotuning-methodology score per problem (``costs``: simulated seconds per
    evaluation, for the time-based score) and a closing table of the scores and their mean, with the
    published scores found under the shared data folder ``shared`` (default ``$TUNERLIB_SHARED_DIR``)."""
    out = out or sys.stdout
    per_space: Dict[str, Dict[str, SpaceScore]] = {}
    for pname, problem in problems.items():
        own = list(budgets[pname] if isinstance(budgets, Mapping) else budgets)
        _problem_block(out, pname, problem, results, own, score, costs, per_space)
    if score:
        caches = [p for p, prob in problems.items() if is_kernel_tuner_cache(prob.data)]
        score_summary(out, {p: s for p, s in per_space.items() if s}, shared, caches)


def _problem_block(out: Any, pname: str, problem: Problem, results: Dict[Tuple[str, str], List[List[float]]],
                   budgets: List[int], score: bool, costs: Optional[Dict[Tuple[str, str], List[List[float]]]],
                   per_space: Dict[str, Dict[str, SpaceScore]]) -> None:
    """One problem's block of :func:`report` at its ``budgets``; its score goes into ``per_space``."""
    opt = problem.optimum
    unit = f" {problem.unit}" if problem.unit else ""
    out.write(f"\n== {pname}" + (f" (optimum {opt:g}{unit})" if opt else "") + "\n")
    head = "technique" + (f" (best, {problem.unit})" if problem.unit else "")
    out.write(f"{head:<32}" + "".join(f"{'@' + str(b):>46}" for b in budgets) + "  cpu s/eval\n")
    for (p, tech), raw in sorted(results.items()):
        if p != pname:
            continue
        split = [split_cpu(v) for v in raw]
        runs = [v for v, _ in split]
        cpu = [c / max(1, len(v)) for v, c in split if c is not None]
        cells = [_cell(runs, b, opt) for b in budgets]
        per_eval = f"{statistics.mean(cpu):>12.4f}" if cpu else ""
        out.write(f"{tech + f' (n={len(runs)})':<32}" + "".join(f" {c:>45}" for c in cells) + per_eval + "\n")
        if opt:
            out.write(f"{'':<4}runs within 1% of the optimum: {_within_text(runs, budgets, opt, .01)}\n")
            if score:
                out.write(f"{'':<4}runs within 5% of the optimum: {_within_text(runs, budgets, opt, .05)}\n")
    _expert_lines(out, pname, problem, results, budgets)
    _baseline_lines(out, pname, problem, results, budgets)
    runs_of = _runs_of(results, pname)
    for line in (reference_lines(pname) + target_lines(pname, problem.data, runs_of, opt, max(budgets))
                 + auto_lines(runs_of, budgets, opt)):
        out.write(line + "\n")
    if score:
        per_space[pname] = score_block(out, pname, problem, results, costs or {}, max(budgets))


def _expert_lines(out: Any, pname: str, problem: Problem, results: Dict[Tuple[str, str], List[List[float]]],
                  budgets: List[int]) -> None:
    """Where the problem has an expert configuration: its value and each technique's runs that reach it."""
    opt, unit = problem.optimum, f" {problem.unit}" if problem.unit else ""
    expert = problem.data.get("expert_value")
    if expert is None and problem.data.get("expert_value_fn"):
        expert = problem.data["expert_value"] = problem.data["expert_value_fn"]()
    if not expert:
        return
    out.write(f"  expert configuration: {expert:g}{unit} ({expert / opt:.3f}x the optimum)\n" if opt else
              f"  expert configuration: {expert:g}{unit}\n")
    for (p, tech), raw in sorted(results.items()):
        if p == pname:
            runs = [split_cpu(v)[0] for v in raw]
            reached = ", ".join(f"@{b} {sum(_best_at(v, b) <= expert for v in runs)}/{len(runs)} "
                                f"(median best/expert {statistics.median(_best_at(v, b) for v in runs) / expert:.3f})"
                                for b in budgets)
            out.write(f"{'':<4}{tech}: runs at least as good as the expert: {reached}\n")


def _runs_of(results: Dict[Tuple[str, str], List[List[float]]], pname: str) -> Dict[str, List[List[float]]]:
    """technique -> the values per evaluation of each of its runs on ``pname`` (CPU times split off)."""
    return {tech: [split_cpu(v)[0] for v in raw] for (p, tech), raw in results.items() if p == pname}


def _within_text(runs: List[List[float]], budgets: Sequence[int], opt: float, tolerance: float) -> str:
    return ", ".join(f"@{b} {within(runs, b, opt, tolerance)}/{len(runs)}" for b in budgets)


def _baseline_lines(out: Any, pname: str, problem: Any, results: Dict[Tuple[str, str], List[Any]],
                    budgets: Sequence[int]) -> None:
    """Median best/baseline per technique and budget, for problems that name baselines (Halide:
    the default schedule and each autoscheduler, timed when the report is written)."""
    fn = problem.data.get("baselines_fn")
    times = problem.data.get("baseline_values") or (fn() if fn else None)
    if not times:
        return
    problem.data["baseline_values"] = times
    unit = f" {problem.unit}" if getattr(problem, "unit", "") else ""
    out.write("  baselines: " + ", ".join(f"{n} {t:g}{unit}" for n, t in times.items()) + "\n")
    for (p, tech), raw in sorted(results.items()):
        if p != pname:
            continue
        runs = [split_cpu(v)[0] for v in raw]
        for b in budgets:
            med = statistics.median(_best_at(v, b) for v in runs)
            out.write(f"{'':<4}{tech} @{b}: median best / " + ", ".join(f"{n} {med / t:.2f}" for n, t in times.items())
                      + "\n")


def _cell(runs: List[List[float]], budget: int, opt: Optional[float]) -> str:
    """median [p20, p80] of the best value within ``budget`` (and median, worst ratios to ``opt``)."""
    bests = [_best_at(v, budget) for v in runs]
    med = statistics.median(bests)
    ratio = f" ({med / opt:.3f}x)" if opt else ""
    worst = f" max {max(bests) / opt:.3f}x" if opt else ""
    return f"{med:>10.5g} [{percentile(bests, .2):.5g}, {percentile(bests, .8):.5g}]{ratio}{worst}"
