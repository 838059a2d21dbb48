"""What a user prior is worth, and what a wrong one costs: evaluations to reach 1.05 x the optimum of
recorded tables with no prior, a prior centred on a good region and one centred on a bad region.

    python tools/bench_priors.py --shared ../shared [--problems rise_kmeans rise_stencil]
        [--techniques BayesianOptimization auto] [--seeds 10] [--max-evals 200] [--confidence 0.6]
        [--region 0.05] [--jobs 2] [--per-parameter]

Each problem is a replay table (a name of :mod:`tools.replay_problems`, a table file or
``BENCHMARK=FILE``, e.g. a copy recorded on another GPU).  The priors come from the table by one rule
for every table: a good region is where the fastest ``--region`` share (5 %) of the OK recorded
configurations in the space lie, a bad one where the slowest share lie, and the prior is centred on
the region's centre taken parameter by parameter (the lower median on each parameter's own scale, so
no single recorded configuration, the optimum included, is singled out).  The prior is one prior
near that configuration (``set_prior_near``, confidence ``--confidence``; with ``--per-parameter``
an independent ``Near`` prior on each parameter instead); it is the same for every seed.  Every run
stops at the first evaluation within 1.05 x the optimum (the best recorded time in the space) or at
``--max-evals`` (then it counts as ``--max-evals`` + 1 and the table marks it ``>``).

Prints, per problem and technique, the median and worst evaluations over the seeds for each prior
and the ratios of the medians to no prior's (targets: good <= 0.5, bad <= 1.3), then each prior's
centre and its recorded time over the optimum.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path
from multiprocessing import Pool
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tunerlib import MinimizeAttribute, Result, TuningRunManager
from tunerlib.parameters import ConfigurationManipulator, Near, PrimitiveParameter

if __package__ in (None, ""):   # run as a script (python tools/NAME.py): import tools from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.replay_problems import Problem, replay_problems

PRIORS = ("none", "good", "bad")
TARGET = 1.05
#: share of the OK recorded configurations whose centre a good (fastest) or bad (slowest) prior is on
REGION = 0.05
_PROBLEMS: Dict[str, Problem] = {}


def prior_centre(problem: Problem, kind: str, fraction: float = REGION) -> Optional[Dict[str, Any]]:
    """The configuration a ``kind`` prior is centred on (None for ``"none"``): the centre of the
    fastest (``"good"``) or slowest (``"bad"``) ``fraction`` of the OK recorded configurations that
    lie in the space, parameter by parameter -- the lower median of the values on the parameter's
    own unit scale (a log scale for log-scaled parameters), or the most common value of a parameter
    without one.  When that combination breaks a known constraint, the configuration of the region
    nearest to it (unit distance, then rank) stands in."""
    if kind == "none":
        return None
    space = problem.manipulator()
    bench = problem.benchmark
    ranked = []
    for key, rec in bench.table.items():
        if rec.ok:
            cfg = bench.table.config_of(key)
            if space.is_valid(cfg) and space.is_feasible(cfg):
                ranked.append((rec.value, sorted(cfg.items())))
    ranked.sort()
    size = max(1, math.ceil(fraction * len(ranked)))
    region = [dict(c) for _, c in (ranked[:size] if kind == "good" else ranked[len(ranked) - size:])]
    centre = {n: _central_value(space.parameter(n), [c[n] for c in region]) for n in space.names}
    if space.is_feasible(centre):
        return centre
    unit = _unit_distance(space, centre)
    return min(region, key=unit)


def _central_value(param: Any, values: List[Any]) -> Any:
    """The lower median of ``values`` on ``param``'s unit scale, or their most common value
    (first seen on ties) for a parameter without a unit scale."""
    if param.encoding == "unit":
        return sorted(values, key=lambda v: param.get_unit_value({param.name: v}))[(len(values) - 1) // 2]
    counts: Dict[Any, int] = {}
    for v in values:
        counts[repr(v)] = counts.get(repr(v), 0) + 1
    return max(values, key=lambda v: counts[repr(v)])


def _unit_distance(space: ConfigurationManipulator, centre: Dict[str, Any]) -> Any:
    """Distance of a configuration from ``centre``: unit-scale differences summed over the
    parameters with a unit scale, 1 per other parameter that differs."""
    def dist(cfg: Dict[str, Any]) -> float:
        total = 0.0
        for n in space.names:
            p = space.parameter(n)
            if p.encoding == "unit" and isinstance(p, PrimitiveParameter):
                total += abs(p.get_unit_value({n: cfg[n]}) - p.get_unit_value({n: centre[n]}))
            else:
                total += float(cfg[n] != centre[n])
        return total
    return dist


def evaluations_to_target(problem: Problem, technique: str, kind: str, seed: int, max_evals: int,
                          confidence: float, per_parameter: bool = False, region: float = REGION) -> int:
    """Evaluations one run needs to reach TARGET x the optimum (``max_evals + 1`` when it does not).
    The prior is one prior near the centre configuration, or with ``per_parameter`` an independent
    ``Near`` prior on each parameter."""
    space: ConfigurationManipulator = problem.manipulator()
    centre = prior_centre(problem, kind, region)
    if centre is not None and per_parameter:
        for name in space.names:
            space.set_prior(name, Near(centre[name], confidence))
    elif centre is not None:
        space.set_prior_near({name: centre[name] for name in space.names}, confidence)
    manager = TuningRunManager.for_space(space, MinimizeAttribute("value"), problem.name, (),
                                         test_limit=max_evals, seed=seed, database="memory://", quiet=True,
                                         technique=[technique])
    goal = TARGET * problem.optimum
    reached = max_evals + 1
    try:
        for n in range(1, max_evals + 1):
            desired = manager.get_next_desired_result()
            if desired is None:
                break
            config = desired.configuration.data
            cost = problem.simulated_s(config)
            if problem.status(config) == "not_measured":
                manager.report_result(desired, Result(state="ERROR", extra={"not_measured": True}), cost)
                continue
            value = problem.evaluate(config)
            if value is None or not math.isfinite(value):
                manager.report_result(desired, Result(state="ERROR"), cost)
                continue
            manager.report_result(desired, Result(extra={"value": float(value)}), cost)
            if value <= goal:
                reached = n
                break
    finally:
        manager.finish()
    return reached


def _job(job: Tuple[str, str, str, int, int, float, bool, float]) -> Tuple[str, str, str, int, int]:
    name, technique, kind, seed, max_evals, confidence, per_parameter, region = job
    return name, technique, kind, seed, evaluations_to_target(_PROBLEMS[name], technique, kind, seed,
                                                              max_evals, confidence, per_parameter, region)


def _cell(values: Sequence[int], max_evals: int) -> str:
    med = statistics.median(values)
    worst = max(values)
    shown = lambda v: f">{max_evals}" if v > max_evals else f"{v:g}"  # noqa: E731
    return f"{shown(med):>6} {shown(worst):>6}"


def table(results: Dict[Tuple[str, str, str], List[int]], problems: Sequence[str], techniques: Sequence[str],
          max_evals: int) -> List[str]:
    """The printed table: one row per problem and technique."""
    head = (f"{'problem':<28} {'technique':<22} " + " ".join(f"{k + ' med/worst':>13}" for k in PRIORS)
            + f" {'good/none':>9} {'bad/none':>8}")
    lines = [head, "-" * len(head)]
    for p in problems:
        for t in techniques:
            cells = [results[(p, t, k)] for k in PRIORS]
            base = statistics.median(cells[0])
            ratios = [statistics.median(c) / base for c in cells[1:]]
            lines.append(f"{p:<28} {t:<22} " + " ".join(f"{_cell(c, max_evals):>13}" for c in cells)
                         + f" {ratios[0]:>9.2f} {ratios[1]:>8.2f}")
    return lines


def centre_lines(problems: Sequence[str], region: float) -> List[str]:
    """One line per problem and prior: its centre and the centre's recorded time over the optimum."""
    lines = [f"prior centres (the centre of the fastest / slowest {region:.0%} of the recorded configurations):"]
    for p in problems:
        problem = _PROBLEMS[p]
        for kind in PRIORS[1:]:
            centre = prior_centre(problem, kind, region)
            value = problem.evaluate(centre) if centre is not None else None
            shown = f"{value / problem.optimum:.2f} x optimum" if value is not None else "not measured or failed"
            lines.append(f"  {p} {kind}: {centre} ({shown})")
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", help="shared data folder (default $TUNERLIB_SHARED_DIR)")
    ap.add_argument("--problems", nargs="+", default=["rise_kmeans", "rise_stencil"])
    ap.add_argument("--techniques", nargs="+", default=["BayesianOptimization", "auto"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--max-evals", type=int, default=200)
    ap.add_argument("--confidence", type=float, default=0.6, help="confidence of the Near priors")
    ap.add_argument("--region", type=float, default=REGION,
                    help="share of the recorded configurations whose centre the good/bad prior is on")
    ap.add_argument("--jobs", type=int, default=1, help="runs in parallel (processes)")
    ap.add_argument("--per-parameter", action="store_true",
                    help="an independent Near prior per parameter instead of one prior near the configuration")
    args = ap.parse_args(argv)
    try:
        _PROBLEMS.update(replay_problems(args.shared, args.problems))
    except (FileNotFoundError, KeyError, ValueError) as exc:
        print(f"bench_priors: {exc}", file=sys.stderr)
        return 2
    if not 0.0 < args.region <= 1.0:
        print(f"bench_priors: --region must be in (0, 1], got {args.region:g}", file=sys.stderr)
        return 2
    jobs = [(p, t, k, s, args.max_evals, args.confidence, args.per_parameter, args.region) for p in args.problems
            for t in args.techniques for k in PRIORS for s in range(1, args.seeds + 1)]
    results: Dict[Tuple[str, str, str], List[int]] = {}
    with Pool(max(1, args.jobs)) as pool:
        for p, t, k, _, n in pool.imap_unordered(_job, jobs):
            results.setdefault((p, t, k), []).append(n)
    form = "an independent Near prior per parameter" if args.per_parameter else "one prior near the configuration"
    print(f"evaluations to reach {TARGET} x optimum; {args.seeds} seeds; {form}, confidence "
          f"{args.confidence}; runs capped at {args.max_evals}")
    print("\n".join(table(results, args.problems, args.techniques, args.max_evals)))
    print("\n".join(centre_lines(args.problems, args.region)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
