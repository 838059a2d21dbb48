"""Hypervolume ratio of multi-objective techniques on a recorded table with two metrics.

    python tools/bench_pareto.py [--benchmark rise_kmeans] [--objectives time,energy]
                                 [--techniques NSGA2 PureRandom] [--seeds 5] [--budgets 20,60,100]

Each run goes through the real driver (:class:`tunerlib.TuningRunManager` with a
:class:`tunerlib.MultiObjective`), measuring by replaying the table (``--shared-dir`` or
``$TUNERLIB_SHARED_DIR``).  The true front is the Pareto front of every OK record of the table inside the
search space; the reference point is 1.1 x its nadir; a run's hypervolume ratio at budget B is the
hypervolume of the front of its first B results over the true front's.  Prints the median, minimum and
maximum ratio of each technique at each budget over the seeds.
"""
from __future__ import annotations

import argparse
import statistics
from typing import Dict, List, Sequence, Tuple

import numpy as np

from tunerlib import MultiObjective, TuningRunManager, parse_objectives
from tunerlib.replay import ReplayBenchmark, replay_result
from tunerlib.techniques import hypervolume, non_dominated
from tunerlib.tools.recorded import load_benchmark, shared_folder

Vector = Tuple[float, ...]


def true_front(benchmark: ReplayBenchmark, objective: MultiObjective) -> np.ndarray:
    """The oriented vectors of the Pareto front of every OK record inside the search space."""
    space = benchmark.manipulator()
    points = []
    for cfg in benchmark.recorded_configs(ok_only=True):
        if space.is_feasible(cfg):
            points.append(objective.values(replay_result(benchmark, cfg)))
    arr = np.asarray(points, dtype=float)
    return arr[non_dominated(arr)]


def run_vectors(benchmark: ReplayBenchmark, objective: MultiObjective, technique: str, budget: int,
                seed: int) -> List[Vector]:
    """The oriented vector of each result of one run, in order (inf for failed and unmeasured ones)."""
    manager = TuningRunManager.for_space(benchmark.manipulator(), objective, f"bench-{benchmark.name}",
                                         technique=[technique], test_limit=budget, seed=seed, quiet=True)
    vectors: List[Vector] = []
    while (desired := manager.get_next_desired_result()) is not None:
        result = replay_result(benchmark, desired.configuration.data)
        manager.report_result(desired, result)
        vectors.append(objective.values(result))
    manager.finish()
    return vectors


def ratios(vectors: Sequence[Vector], budgets: Sequence[int], reference: np.ndarray, best: float) -> List[float]:
    """Hypervolume of the first B vectors over ``best``, for each budget B."""
    out = []
    for b in budgets:
        ok = [v for v in vectors[:b] if np.all(np.isfinite(v))]
        out.append(hypervolume(ok, reference) / best if ok else 0.0)
    return out


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmark", default="rise_kmeans")
    parser.add_argument("--objectives", default="time,energy")
    parser.add_argument("--techniques", nargs="+", default=["NSGA2", "PureRandom"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budgets", default="20,60,100")
    parser.add_argument("--shared-dir", default=None)
    args = parser.parse_args(list(argv) or None)
    objective = parse_objectives(args.objectives)
    if not isinstance(objective, MultiObjective):
        parser.error("--objectives needs at least two metrics")
    budgets = [int(b) for b in args.budgets.split(",")]
    benchmark = load_benchmark(args.benchmark, shared_folder(args.shared_dir, "--shared-dir DIR"))
    front = true_front(benchmark, objective)
    reference = 1.1 * front.max(axis=0)
    best = hypervolume(front, reference)
    print(f"{args.benchmark} ({args.objectives}): true front {len(front)} points, reference {reference.tolist()}")
    print(f"{'technique':<14}" + "".join(f"{'at ' + str(b):>22}" for b in budgets))
    for technique in args.techniques:
        table: Dict[int, List[float]] = {b: [] for b in budgets}
        for seed in range(args.seeds):
            for b, r in zip(budgets, ratios(run_vectors(benchmark, objective, technique, max(budgets), seed),
                                            budgets, reference, best)):
                table[b].append(r)
        cells = [f"{statistics.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]" for v in table.values()]
        print(f"{technique:<14}" + "".join(f"{c:>22}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
