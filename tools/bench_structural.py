"""CPU cost of StructuralSurrogate per suggestion as observations grow, on a random n-city tour.

    python tools/bench_structural.py [--cities 100] [--evals 3000] [--seed 1] [--technique MetricStructuralSurrogate]

Drives the technique directly (bind / propose / observe, no database), so the figures are the
technique's own cost: the model update and the search of the sampled model.  Prints the mean and
the 90th percentile of CPU milliseconds per suggestion (propose + observe) in windows of evaluations,
and the tour length reached.  The target is at most 5 ms per suggestion at 3,000 observations
on a 100-city tour.
"""
from __future__ import annotations

import argparse
import random
import time
from typing import List

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.techniques import Feedback
from tunerlib.techniques.structural import (LowRankStructuralSurrogate, MetricStructuralSurrogate,
                                            StructuralSurrogate)


def random_matrix(cities: int, seed: int) -> np.ndarray:
    """Rounded Euclidean distances of ``cities`` uniform points in a 1000 x 1000 square."""
    pts = np.random.default_rng(seed).random((cities, 2)) * 1000.0
    return np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)).round()


def measure(cities: int, evals: int, seed: int, technique: str = "StructuralSurrogate") -> List[float]:
    """CPU milliseconds of each suggestion (propose + observe); prints the tour length reached."""
    M = random_matrix(cities, seed)
    space = ConfigurationManipulator([PermutationParameter("tour", list(range(cities)))])
    tech = {"StructuralSurrogate": StructuralSurrogate,
            "LowRankStructuralSurrogate": LowRankStructuralSurrogate,
            "MetricStructuralSurrogate": MetricStructuralSurrogate}[technique]()
    tech.bind(space, random.Random(seed), technique)
    costs, best = [], np.inf
    for _ in range(evals):
        start = time.process_time()
        proposal = tech.propose()
        spent = time.process_time() - start
        assert proposal is not None
        tour = np.asarray(proposal.config["tour"])
        value = float(M[tour, np.roll(tour, -1)].sum())
        feedback = Feedback(proposal.config, space.hash_config(proposal.config), value, "ok",
                            proposal.requestor, value < best)
        best = min(best, value)
        start = time.process_time()
        tech.observe(feedback)
        costs.append(1000.0 * (spent + time.process_time() - start))
    print(f"{cities} cities, {evals} evaluations, seed {seed}: best tour {best:g}")
    return costs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cities", type=int, default=100)
    ap.add_argument("--evals", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--window", type=int, default=500)
    ap.add_argument("--technique", choices=["StructuralSurrogate", "LowRankStructuralSurrogate",
                                            "MetricStructuralSurrogate"],
                    default="StructuralSurrogate")
    args = ap.parse_args()
    costs = np.asarray(measure(args.cities, args.evals, args.seed, args.technique))
    print(f"{'evaluations':>14} {'mean ms':>8} {'p90 ms':>8}")
    for lo in range(0, args.evals, args.window):
        part = costs[lo:lo + args.window]
        print(f"{lo + 1:>6}-{lo + part.size:<7} {part.mean():8.2f} {np.percentile(part, 90):8.2f}")
    print(f"{'all':>14} {costs.mean():8.2f} {np.percentile(costs, 90):8.2f}")


if __name__ == "__main__":
    main()
