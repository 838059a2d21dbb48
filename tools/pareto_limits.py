"""How far can a model get on a recorded two-metric table?  Two figures per problem of tools/bench_pareto.py.

    python -m tools.pareto_limits --shared ../shared [--problems rise_stencil dedisp_a100] [--draws 300]

* **Predictability**: the cross-validated R^2 (5 folds) of a random forest predicting the log of each
  (positive) metric from the parameters (numbers as they are, anything else by its index among the parameter's
  values), over every row of the table and over the fastest 10 % only.  Trained on the whole table,
  far more data than a run of 100 evaluations has: an R^2 near or below 0 among the fast rows says
  that which fast configuration has a low second metric cannot be learned from the parameters.
* **Oracle draws**: the median hypervolume ratio (tools/bench_pareto.py's) of ``k`` configurations
  drawn at random from the ``m`` truly fastest of the table (``--draws`` draws of ``k`` distinct
  rows each), for ``k`` in ``--picks`` and ``m`` in ``--fastest``: what a search that knew the time
  ranking exactly, but not the second metric, would reach with ``k`` evaluations.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import KFold, cross_val_predict

if __package__ in (None, ""):   # run as a script (python tools/NAME.py): import tools from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.bench_pareto import METRICS, ParetoProblem, hypervolume_ratio, load
from tools.replay_problems import replay_problems


def table_rows(shared: Optional[str], name: str, problem: ParetoProblem) -> Tuple[np.ndarray, np.ndarray]:
    """(parameter matrix, metric vectors) of every OK row in the search space, in recorded order."""
    bench = replay_problems(shared, [name])[name].benchmark
    space = bench.manipulator()
    values = problem.values()
    X: List[List[float]] = []
    V: List[Tuple[float, ...]] = []
    for cfg in bench.recorded_configs(ok_only=True):
        if not (space.is_valid(cfg) and space.is_feasible(cfg)):
            continue
        status, vec = problem.measure(cfg)
        if vec is None:
            continue
        X.append([float(cfg[p]) if isinstance(cfg[p], (int, float)) else float(values[p].index(cfg[p]))
                  for p in values])
        V.append(vec)
    return np.asarray(X, dtype=float), np.asarray(V, dtype=float)


def cv_r2(X: np.ndarray, y: np.ndarray, seed: int = 0) -> float:
    """5-fold cross-validated R^2 of a random forest (100 trees, leaves of 2) predicting ``y``."""
    forest = RandomForestRegressor(100, min_samples_leaf=2, random_state=seed, n_jobs=1)
    pred = cross_val_predict(forest, X, y, cv=KFold(5, shuffle=True, random_state=seed))
    return float(1.0 - np.sum((pred - y) ** 2) / np.sum((y - y.mean()) ** 2))


def oracle_median(problem: ParetoProblem, V: np.ndarray, m: int, k: int, draws: int) -> float:
    """Median ratio of ``k`` distinct rows drawn from the ``m`` fastest (seeds 0 to draws-1)."""
    fastest = np.argsort(V[:, 0], kind="stable")[:m]
    return statistics.median(hypervolume_ratio(problem, V[fastest[random.Random(s).sample(range(m), k)]])
                             for s in range(draws))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print both figures for every problem (exit 2 on bad arguments)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=None, metavar="DIR", help="shared data folder (default: $TUNERLIB_SHARED_DIR)")
    ap.add_argument("--problems", nargs="+", default=list(METRICS), help="problem names or NAME=FILE")
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--picks", default="20,40,60", help="evaluations k of the oracle draws")
    ap.add_argument("--fastest", default="36,112,358", help="sizes m of the fastest sets drawn from")
    args = ap.parse_args(argv)
    try:
        picks = [int(k) for k in args.picks.split(",")]
        sizes = [int(m) for m in args.fastest.split(",")]
        problems = [(name, load(args.shared, name)) for name in args.problems]
    except (KeyError, ValueError, FileNotFoundError) as exc:
        print(f"pareto_limits: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    for name, problem in problems:
        X, V = table_rows(args.shared, name, problem)
        fast = V[:, 0] <= np.quantile(V[:, 0], 0.1)
        print(f"\n{name}: {len(V)} rows; CV R^2 of log time / log {METRICS[name.partition('=')[0]]}")
        for label, rows in (("all rows", slice(None)), (f"fastest 10 % ({int(fast.sum())})", fast)):
            r2 = [cv_r2(X[rows], np.log(V[rows, j]) if np.all(V[:, j] > 0) else V[rows, j]) for j in range(2)]
            print(f"  {label:<22} {r2[0]:6.2f} / {r2[1]:6.2f}")
        print(f"  oracle: median ratio of k draws from the m fastest ({args.draws} draws)")
        for m in sizes:
            cells = [f"k={k}: {oracle_median(problem, V, m, k, args.draws):.2f}" for k in picks if k <= min(m, len(V))]
            print(f"  m={m:<5} " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
