"""Hypervolume ratio of multi-objective techniques on recorded tables with two metrics.

    python -m tools.bench_pareto --shared ../shared [--seeds 10] [--problems rise_kmeans ...]
                                          [--techniques MultiObjectiveBO NSGA2 PureRandom] [--budgets 20,60,100]

For every problem and technique, ``--seeds`` runs of ``max(budgets)`` evaluations each; prints the
median and the worst hypervolume ratio at every budget, and the median processor time the technique
spent per evaluation (``cpu s/eval``: its proposals and observations, not the table look-ups).  The ratio is the hypervolume of the front
found in the first ``n`` evaluations over that of the true front (every OK row of the table in the
search space), in the metrics' own units, with the reference point 1.1 x the true front's nadir
(:func:`hypervolume_ratio`): 1 means the true front was found.  ``--normalised`` adds a second,
stricter figure on a line of its own marked ``[normalised]``: both metrics min-max normalised by the
true front's ideal and nadir and the reference point (1.1, 1.1) (:func:`normalised_hypervolume_ratio`),
which weighs the front's region near its ideal more than the raw figure does.

Problems (:data:`METRICS`): the RISE K-means and stencil tables (compute time, energy) and the Kernel
Tuner caches of the 2-D convolution and the dedispersion on the A100, the A4000 and the MI250X (kernel
time, compile time); without ``--problems``, the first four (:data:`DEFAULT_PROBLEMS`, the tables the
techniques were developed on).  A problem name may also be ``NAME=FILE``: that problem's
metrics on another recording of its kernel (tests/helpers/other_machine.py writes perturbed copies).

The techniques are driven through their protocol (bind / propose / observe, no database), as the
search driver does: each new configuration is one evaluation (failed and not-measured ones too),
duplicates and proposals violating a known constraint are answered at no cost.  :func:`load` and
:func:`hypervolume_ratio` are what another tuner is fed the same tables with (a plain function).
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from tunerlib.parameters import ConfigurationManipulator
from tunerlib.techniques import Feedback, create_technique, dominates, hypervolume, non_dominated, registry

if __package__ in (None, ""):   # run as a script (python tools/NAME.py): import tools from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.replay_problems import replay_problems

#: the second metric of each problem (the first is the recorded time), read from a record's extra
METRICS: Dict[str, str] = {"rise_kmeans": "energy", "rise_stencil": "energy",
                           "conv_a100": "compile_s", "dedisp_a100": "compile_s",
                           "conv_a4000": "compile_s", "conv_mi250x": "compile_s",
                           "dedisp_a4000": "compile_s", "dedisp_mi250x": "compile_s"}
#: the tables run when --problems is not given (the ones the techniques were developed on); the A4000's
#: and the MI250X's caches are for validation and are named with --problems
DEFAULT_PROBLEMS = ("rise_kmeans", "rise_stencil", "conv_a100", "dedisp_a100")
DEFAULT_TECHNIQUES = ("MultiObjectiveBO", "NSGA2", "PureRandom")
Vector = Tuple[float, ...]
#: metric vectors: a sequence of tuples or an array of one row per point
Points = Union[Sequence[Vector], np.ndarray]


@dataclass
class ParetoProblem:
    """A table with two metrics: ``measure(config)`` is ``("ok", (time, metric))``, ``("failed", None)``
    or ``("not_measured", None)``; ``ideal`` and ``nadir`` are the true front's corners."""

    name: str
    manipulator: Callable[[], ConfigurationManipulator]
    measure: Callable[[Mapping[str, Any]], Tuple[str, Optional[Vector]]]
    front: np.ndarray
    ideal: np.ndarray
    nadir: np.ndarray
    points: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))

    def values(self) -> Dict[str, List[Any]]:
        """Each parameter's legal values (for a peer tuner's categorical search space)."""
        return {p.name: _legal_values(p) for p in self.manipulator().parameters}

    def normalised(self, points: Points) -> np.ndarray:
        """Points min-max normalised by the true front's ideal and nadir."""
        span = np.where(self.nadir > self.ideal, self.nadir - self.ideal, 1.0)
        return (np.asarray(points, dtype=float).reshape(-1, len(self.ideal)) - self.ideal) / span


def load(shared: Optional[str], name: str) -> ParetoProblem:
    """The problem ``name`` (a key of :data:`METRICS`, or ``NAME=FILE``) with its true front."""
    base, _, path = name.partition("=")
    metric = METRICS.get(base)
    if metric is None:
        raise KeyError(f"unknown problem {base!r}; choose from {', '.join(METRICS)}")
    bench = replay_problems(shared, [name if path else base])[name if path else base].benchmark

    def measure(config: Mapping[str, Any]) -> Tuple[str, Optional[Vector]]:
        rec = bench.lookup(config)
        if rec is None:
            return "not_measured", None
        if not rec.ok or rec.value is None or not isinstance(rec.extra.get(metric), (int, float)):
            return "failed", None
        return "ok", (float(rec.value), float(rec.extra[metric]))

    space = bench.manipulator()
    rows = [v for v in (measure(c)[1] for c in bench.recorded_configs(ok_only=True)
                        if space.is_valid(c) and space.is_feasible(c)) if v is not None]
    pts = np.asarray(rows, dtype=float)
    front = pts[non_dominated(pts)]
    return ParetoProblem(name, bench.manipulator, measure, front, front.min(axis=0), front.max(axis=0), pts)


def reference_point(nadir: np.ndarray) -> np.ndarray:
    """1.1 x ``nadir`` (10 % of its size beyond it, so also beyond a negative or zero coordinate)."""
    nadir = np.asarray(nadir, dtype=float)
    return nadir + np.where(nadir != 0, 0.1 * np.abs(nadir), 0.1)


def _legal_values(parameter: Any) -> List[Any]:
    """A categorical parameter's options, or an ordinal one's values."""
    return list(parameter.options if hasattr(parameter, "options") else parameter.values)


def hypervolume_ratio(problem: ParetoProblem, found: Points) -> float:
    """Hypervolume of ``found`` over the true front's, in the metrics' units, reference 1.1 x the
    true front's nadir (0 when ``found`` is empty)."""
    ref = reference_point(problem.nadir)
    true = hypervolume(problem.front, ref)
    pts = np.asarray(found, dtype=float).reshape(-1, len(ref))
    return hypervolume(pts, ref) / true if len(pts) else 0.0


def normalised_hypervolume_ratio(problem: ParetoProblem, found: Points) -> float:
    """The ratio with both metrics min-max normalised by the true front's ideal and nadir and the
    reference point (1.1, ..., 1.1) (0 when ``found`` is empty)."""
    ref = [1.1] * len(problem.ideal)
    true = hypervolume(problem.normalised(problem.front), ref)
    return hypervolume(problem.normalised(found), ref) / true if len(found) else 0.0


def run(problem: ParetoProblem, technique: str, seed: int, budget: int,
        cpu: Optional[List[float]] = None, bound: Optional[Callable[[Any], None]] = None) -> List[Optional[Vector]]:
    """One run: the vector (None: failed or not measured) of each of ``budget`` evaluations.  With
    ``cpu``, appends the run's processor seconds spent in the technique (``propose`` and ``observe``)
    per evaluation; ``bound`` is called with the technique once it is bound (to trace its proposals)."""
    m = problem.manipulator()
    tech = create_technique([technique])
    tech.bind(m, random.Random(seed), tech.name)
    if bound is not None:
        bound(tech)
    known: Dict[str, Tuple[str, Optional[Vector], bool]] = {}
    out: List[Optional[Vector]] = []
    front: List[Vector] = []
    idle = 0
    spent = 0.0
    while len(out) < budget and idle < 1000:
        started = time.process_time()
        prop = tech.propose()
        spent += time.process_time() - started
        if prop is None:
            idle += 1
            continue
        cfg, key = prop.config, m.hash_config(prop.config)
        if key in known or not m.is_feasible(cfg):
            idle += 1
            state, vec, unmeasured = known.get(key, ("infeasible", None, False))
            duplicate = key in known
        else:
            idle = 0
            status, vec = problem.measure(cfg)
            state, unmeasured, duplicate = ("ok" if vec else "infeasible"), status == "not_measured", False
            known[key] = (state, vec, unmeasured)
            out.append(vec)
        new = vec is not None and not duplicate and not any(all(a <= b for a, b in zip(p, vec)) for p in front)
        if new and vec is not None:
            front = [p for p in front if not dominates(vec, p)] + [vec]
        values = vec if vec is not None else (math.inf, math.inf)
        started = time.process_time()
        tech.observe(Feedback(cfg, key, values[0], state, prop.requestor, new, duplicate, unmeasured,
                              values=tuple(values)))
        spent += time.process_time() - started
    if cpu is not None:
        cpu.append(spent / max(len(out), 1))
    return out


def ratios_at(problem: ParetoProblem, vectors: Sequence[Optional[Vector]], budgets: Sequence[int],
              ratio: Callable[[ParetoProblem, Sequence[Vector]], float] = hypervolume_ratio) -> List[float]:
    """The hypervolume ratio (``ratio``) of the OK results among the first ``n`` evaluations, for each ``n``."""
    return [ratio(problem, [v for v in vectors[:n] if v is not None]) for n in budgets]


def table_line(label: str, per_seed: Sequence[Sequence[float]], cpu: Sequence[float] = ()) -> str:
    """``label  median/worst`` at every budget (columns of ``per_seed``), then the median of ``cpu``
    (processor seconds per evaluation of each seed) when given."""
    cols = list(zip(*per_seed))
    cells = "".join(f"  {statistics.median(c):5.2f} / {min(c):4.2f}" for c in cols)
    return f"{label:<28}" + cells + (f"  {statistics.median(cpu):8.3f}" if cpu else "")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print the table of median / worst hypervolume ratios (exit 2 on bad arguments)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=None, metavar="DIR", help="shared data folder (default: $TUNERLIB_SHARED_DIR)")
    ap.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS),
                    help=f"problem names or NAME=FILE (default: {' '.join(DEFAULT_PROBLEMS)}; also: "
                         f"{' '.join(n for n in METRICS if n not in DEFAULT_PROBLEMS)})")
    ap.add_argument("--techniques", nargs="+", default=list(DEFAULT_TECHNIQUES),
                    help="technique names, options allowed (Name;option,value); those not registered are left "
                         "out with a notice")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds run: FIRST_SEED to FIRST_SEED + SEEDS - 1")
    ap.add_argument("--budgets", default="20,60,100")
    ap.add_argument("--normalised", action="store_true",
                    help="also print the ratio with min-max normalised metrics and reference (1.1, 1.1)")
    args = ap.parse_args(argv)
    try:
        budgets = sorted(int(b) for b in args.budgets.split(","))
        problems = [load(args.shared, n) for n in args.problems]
    except (KeyError, ValueError, FileNotFoundError) as exc:
        print(f"bench_pareto: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    names = list(args.techniques)
    for missing in [t for t in names if t.split(";")[0] not in registry()]:
        print(f"bench_pareto: {missing} is not registered here; left out", file=sys.stderr)
    names = [t for t in names if t.split(";")[0] in registry()]
    header = "".join(f"  {'@' + str(b):>13}" for b in budgets)
    for problem in problems:
        print(f"\n{problem.name}: true front {len(problem.front)} points; median / worst of {args.seeds} seeds "
              f"({args.first_seed}-{args.first_seed + args.seeds - 1})")
        print(f"{'technique':<28}{header}  {'cpu s/eval':>8}")
        for name in names:
            runs: List[List[Optional[Vector]]] = []
            cpu: List[float] = []
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                runs.append(run(problem, name, seed, budgets[-1], cpu))
                print(f"  {problem.name} {name} seed {seed}: " + " ".join(
                    f"{r:.3f}" for r in ratios_at(problem, runs[-1], budgets)) + f"  cpu {cpu[-1]:.3f} s/eval",
                    file=sys.stderr, flush=True)
            print(table_line(name, [ratios_at(problem, r, budgets) for r in runs], cpu), flush=True)
            if args.normalised:
                norm = [ratios_at(problem, r, budgets, normalised_hypervolume_ratio) for r in runs]
                print(table_line(f"{name} [normalised]", norm), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
