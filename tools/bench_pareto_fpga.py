"""HPVM2FPGA, latency against total resource share: does a short run's front dominate random search's?

    python -m tools.bench_pareto_fpga [--seeds 3] [--first-seed 0] [--technique MultiObjectiveBO]
                                      [--budget 100] [--random-budget 1000]

The problem is the edge-detection space of ``examples/hpvm2fpga`` evaluated by its analytical model
(a model, not synthesis): the first metric is the modelled latency in seconds, the second the total
resource share, the sum of the LUT, FF, DSP and BRAM shares of the device (0 to 4).  A design that
does not fit the device or whose node fusion is illegal is a failed evaluation.  For every seed the
technique runs ``--budget`` evaluations and random search ``--random-budget`` (both driven as
:func:`tools.bench_pareto.run` does), and every technique front is compared with every random front:

* ``covers``: the share of the random front's points that some point of the technique's front weakly
  dominates (Zitzler's coverage; 1.00 in both directions means equal fronts);
* the technique's front *dominates* the random one when it covers all of it and the random front
  covers less than all of the technique's;
* ``hv``: each front's hypervolume over the larger, reference 1.1 x the worst point of the two fronts.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from tunerlib.techniques import hypervolume, non_dominated, registry

if __package__ in (None, ""):   # run as a script (python tools/NAME.py): import tools from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.bench_pareto import ParetoProblem, Vector, reference_point, run
from tools.example_problems import examples_dir, load_example


def fpga_problem(examples: Optional[str] = None) -> ParetoProblem:
    """The edge-detection space with (latency, total resource share); its true front is unknown (empty)."""
    bench = load_example(examples_dir(examples, "bench_pareto_fpga") / "hpvm2fpga" / "fpga_bench.py",
                         "tunerlib_example_fpga_bench", "bench_pareto_fpga")
    design, model = bench.make_problem()["design"], bench.fpga_model

    def measure(config: Mapping[str, Any]) -> Tuple[str, Optional[Vector]]:
        report = model.evaluate(design, config)
        if not report.fits:
            return "failed", None
        return "ok", (float(report.seconds), float(sum(report.utilisation().values())))

    empty = np.zeros((0, 2))
    return ParetoProblem("hpvm2fpga_edge_detection", design.manipulator, measure, empty, empty, empty)


def front_of(vectors: Sequence[Optional[Vector]]) -> np.ndarray:
    """The distinct non-dominated points among the OK vectors."""
    pts = np.asarray([v for v in vectors if v is not None], dtype=float).reshape(-1, 2)
    return np.unique(pts[non_dominated(pts)], axis=0) if len(pts) else pts


def coverage(a: np.ndarray, b: np.ndarray) -> float:
    """The share of ``b``'s points that some point of ``a`` weakly dominates (1.0 for an empty ``b``)."""
    if not len(b):
        return 1.0
    return float(np.mean([bool(np.any(np.all(a <= p, axis=1))) for p in b])) if len(a) else 0.0


def compare(found: np.ndarray, baseline: np.ndarray) -> Dict[str, float]:
    """Coverage both ways, whether ``found`` dominates ``baseline``, and both hypervolumes over the larger."""
    ab, ba = coverage(found, baseline), coverage(baseline, found)
    both = np.vstack([found, baseline])
    ref = reference_point(both.max(axis=0))
    hv_a, hv_b = hypervolume(found, ref), hypervolume(baseline, ref)
    top = max(hv_a, hv_b) or 1.0
    return {"covers": ab, "covered": ba, "dominates": float(ab == 1.0 and ba < 1.0),
            "hv": hv_a / top, "hv_random": hv_b / top}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print each front's size and every (technique seed, random seed) comparison; exit 2 on bad arguments."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--technique", default="MultiObjectiveBO",
                    help="technique name, options allowed (Name;option,value)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds run: FIRST_SEED to FIRST_SEED + SEEDS - 1")
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--random-budget", type=int, default=1000)
    ap.add_argument("--examples", default=None, metavar="DIR", help="examples folder (default: the checkout's)")
    args = ap.parse_args(argv)
    if args.technique.split(";")[0] not in registry() or min(args.seeds, args.budget, args.random_budget) < 1 \
            or args.first_seed < 0:
        print(f"bench_pareto_fpga: error: need a registered --technique (not {args.technique!r}) and --seeds, "
              "--budget, --random-budget of at least 1 (--first-seed at least 0)", file=sys.stderr)
        return 2
    problem = fpga_problem(args.examples)
    fronts: List[np.ndarray] = []
    randoms: List[np.ndarray] = []
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for seed in seeds:
        randoms.append(front_of(run(problem, "PureRandom", seed, args.random_budget)))
        fronts.append(front_of(run(problem, args.technique, seed, args.budget)))
        same = compare(fronts[-1], randoms[-1])
        print(f"seed {seed}: {args.technique} front {len(fronts[-1])} points at {args.budget} evaluations, "
              f"PureRandom {len(randoms[-1])} at {args.random_budget}; covers {same['covers']:.2f}, "
              f"covered {same['covered']:.2f}", flush=True)
    print(f"\n{args.technique} seed vs PureRandom seed: covers / covered / dominates / hv / hv random")
    wins = 0
    for i, found in zip(seeds, fronts):
        for j, base in zip(seeds, randoms):
            c = compare(found, base)
            wins += int(c["dominates"])
            print(f"  {i} vs {j}: {c['covers']:.2f} / {c['covered']:.2f} / {'yes' if c['dominates'] else 'no '}"
                  f" / {c['hv']:.3f} / {c['hv_random']:.3f}")
    print(f"dominates in {wins} of {len(fronts) * len(randoms)} pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
