"""What a user prior is worth, and what a wrong one costs: evaluations to reach 1.05 x the optimum of
recorded tables with no prior, a prior centred on a good region and one centred on a bad region.

    python tools/bench_priors.py --shared ../shared [--problems rise_kmeans rise_stencil]
        [--techniques BayesianOptimization auto] [--seeds 10] [--max-evals 200] [--confidence 0.6] [--jobs 2]
        [--per-parameter]

Each problem is a replay table (a name of :mod:`tools.replay_problems`, a table file or
``BENCHMARK=FILE``, e.g. a copy recorded on another GPU).  The priors come from the table by one rule
for every table: the OK recorded configurations in the space are sorted by time; the good prior is
one prior near a configuration (``set_prior_near``, confidence ``--confidence``; with
``--per-parameter`` an independent ``Near`` prior on each parameter instead) centred on a
configuration drawn (by the seed) from the fastest 5 %, the bad one on a configuration drawn from
the slowest 25 %.  Every run
stops at the first evaluation within 1.05 x the optimum (the best recorded time in the space) or at
``--max-evals`` (then it counts as ``--max-evals`` and the table marks it ``>``).

Prints, per problem and technique, the median and worst evaluations over the seeds for each prior
and the ratios of the medians to no prior's (targets: good <= 0.5, bad <= 1.3).
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path
from multiprocessing import Pool
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tunerlib import MinimizeAttribute, Result, TuningRunManager
from tunerlib.parameters import ConfigurationManipulator, Near

if __package__ in (None, ""):   # run as a script (python tools/NAME.py): import tools from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.replay_problems import Problem, replay_problems

PRIORS = ("none", "good", "bad")
TARGET = 1.05
_PROBLEMS: Dict[str, Problem] = {}


def prior_centre(problem: Problem, kind: str, seed: int) -> Optional[Dict[str, Any]]:
    """The configuration a ``kind`` prior is centred on (None for ``"none"``): drawn by ``seed`` from
    the fastest 5 % (``"good"``) or the slowest 25 % (``"bad"``) of the OK recorded configurations
    that lie in the space."""
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
    n = len(ranked)
    pool = ranked[: max(1, math.ceil(0.05 * n))] if kind == "good" else ranked[n - max(1, math.ceil(0.25 * n)):]
    return dict(random.Random(f"{seed}:{kind}").choice(pool)[1])


def evaluations_to_target(problem: Problem, technique: str, kind: str, seed: int, max_evals: int,
                          confidence: float, per_parameter: bool = False) -> int:
    """Evaluations one run needs to reach TARGET x the optimum (``max_evals + 1`` when it does not).
    The prior is one prior near the centre configuration, or with ``per_parameter`` an independent
    ``Near`` prior on each parameter."""
    space: ConfigurationManipulator = problem.manipulator()
    centre = prior_centre(problem, kind, seed)
    if centre is not None and per_parameter:
        for n in space.names:
            space.set_prior(n, Near(centre[n], confidence))
    elif centre is not None:
        space.set_prior_near({n: centre[n] for n in space.names}, confidence)
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


def _job(job: Tuple[str, str, str, int, int, float, bool]) -> Tuple[str, str, str, int, int]:
    name, technique, kind, seed, max_evals, confidence, per_parameter = job
    return name, technique, kind, seed, evaluations_to_target(_PROBLEMS[name], technique, kind, seed,
                                                              max_evals, confidence, per_parameter)


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


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", help="shared data folder (default $TUNERLIB_SHARED_DIR)")
    ap.add_argument("--problems", nargs="+", default=["rise_kmeans", "rise_stencil"])
    ap.add_argument("--techniques", nargs="+", default=["BayesianOptimization", "auto"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--max-evals", type=int, default=200)
    ap.add_argument("--confidence", type=float, default=0.6, help="confidence of the Near priors")
    ap.add_argument("--jobs", type=int, default=1, help="runs in parallel (processes)")
    ap.add_argument("--per-parameter", action="store_true",
                    help="an independent Near prior per parameter instead of one prior near the configuration")
    args = ap.parse_args(argv)
    try:
        _PROBLEMS.update(replay_problems(args.shared, args.problems))
    except (FileNotFoundError, KeyError, ValueError) as exc:
        print(f"bench_priors: {exc}", file=sys.stderr)
        return 2
    jobs = [(p, t, k, s, args.max_evals, args.confidence, args.per_parameter) for p in args.problems
            for t in args.techniques for k in PRIORS for s in range(1, args.seeds + 1)]
    results: Dict[Tuple[str, str, str], List[int]] = {}
    with Pool(max(1, args.jobs)) as pool:
        for p, t, k, _, n in pool.imap_unordered(_job, jobs):
            results.setdefault((p, t, k), []).append(n)
    form = "an independent Near prior per parameter" if args.per_parameter else "one prior near the configuration"
    print(f"evaluations to reach {TARGET} x optimum; {args.seeds} seeds; {form}, confidence "
          f"{args.confidence}; runs capped at {args.max_evals}")
    print("\n".join(table(results, args.problems, args.techniques, args.max_evals)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
