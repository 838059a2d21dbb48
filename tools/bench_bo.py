"""CPU cost of BayesianOptimization per suggestion as observations grow, and its best value at 100.

    python tools/bench_bo.py [--evals 1000] [--seed 1] [--quality-seeds 5] [--hp-refit-growth G] [--copula-every K]

Drives the technique directly (bind / propose / observe, no database) on a 6-parameter mixed
function (4 floats, an integer, an enum), so the figures are the technique's own cost: model fits,
the feasibility model and the acquisition search.  Prints the mean and 90th percentile of CPU
seconds per suggestion (propose + observe) in windows of evaluations, then the best value after
100 evaluations over ``--quality-seeds`` seeds (median and worst), the check that making BO
cheaper did not make it worse.  The target is at most 0.1 s per suggestion at 100 observations
and at most 0.5 s at 1,000.
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from typing import Any, Dict, List, Tuple

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter
from tunerlib.techniques import Feedback
from tunerlib.techniques.bo import BayesianOptimization

ENUM_COST = {"a": 0.0, "b": 0.6, "c": 1.5, "d": 3.0}


def space() -> ConfigurationManipulator:
    """Four floats in [-5, 5], an integer in [0, 40] and a four-way enum."""
    params: List[Any] = [FloatParameter(f"x{i}", -5.0, 5.0) for i in range(4)]
    return ConfigurationManipulator(params + [IntegerParameter("n", 0, 40), EnumParameter("e", list(ENUM_COST))])


def objective(c: Dict[str, Any]) -> float:
    """A smooth bowl with an interaction, a rugged term, an integer optimum at 13 and an enum offset
    (minimum 0 at x = (1, -0.5, 2, 0), n = 13, e = 'a')."""
    x = np.array([c[f"x{i}"] for i in range(4)]) - np.array([1.0, -0.5, 2.0, 0.0])
    bowl = float(x @ x) + 0.5 * x[0] * x[1]
    rugged = 0.3 * (1.0 - math.cos(2.0 * x[2]))
    return bowl + rugged + 0.02 * (c["n"] - 13) ** 2 + ENUM_COST[c["e"]]


def drive(evals: int, seed: int, **options: Any) -> Tuple[List[float], List[float]]:
    """(CPU seconds of each suggestion, value of each evaluation) of one run."""
    m = space()
    tech = BayesianOptimization(**options)
    tech.bind(m, random.Random(seed), "BayesianOptimization")
    costs: List[float] = []
    values: List[float] = []
    best = math.inf
    for _ in range(evals):
        start = time.process_time()
        proposal = tech.propose()
        spent = time.process_time() - start
        if proposal is None:
            break
        value = objective(proposal.config)
        feedback = Feedback(proposal.config, m.hash_config(proposal.config), value, "ok",
                            proposal.requestor, value < best)
        best = min(best, value)
        start = time.process_time()
        tech.observe(feedback)
        costs.append(spent + time.process_time() - start)
        values.append(value)
    return costs, values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quality-seeds", type=int, default=5, help="seeds for the best value at 100 (0: skip)")
    ap.add_argument("--hp-refit-growth", type=float, help="BO option hp_refit_growth (default: BO's own)")
    ap.add_argument("--copula-every", type=int, help="BO option copula_every (default: BO's own)")
    args = ap.parse_args()
    options = {k: v for k, v in (("hp_refit_growth", args.hp_refit_growth), ("copula_every", args.copula_every))
               if v is not None}
    costs, values = drive(args.evals, args.seed, **options)
    print(f"seed {args.seed}: {len(costs)} evaluations, best {min(values):.4g}")
    print(f"{'evaluations':>14} {'mean s':>8} {'p90 s':>8}")
    edges = [0, 50, 100, 200, 400, 600, 800, 1000, 2000, 5000]
    for lo, hi in zip(edges, edges[1:]):
        part = np.asarray(costs[lo:hi])
        if part.size:
            print(f"{lo + 1:>6}-{lo + part.size:<7} {part.mean():8.3f} {np.percentile(part, 90):8.3f}")
    around = np.asarray(costs[90:110])
    if around.size:
        print(f"around 100 observations (91-110): mean {around.mean():.3f} s")
    tail = np.asarray(costs[-50:])
    print(f"last 50 suggestions: mean {tail.mean():.3f} s")
    if args.quality_seeds:
        bests = [min(drive(100, s, **options)[1]) for s in range(1, args.quality_seeds + 1)]
        print(f"best after 100 evaluations over seeds 1-{args.quality_seeds}: median "
              f"{statistics.median(bests):.4f}, worst {max(bests):.4f}  ({', '.join(f'{b:.4f}' for b in bests)})")


if __name__ == "__main__":
    main()
