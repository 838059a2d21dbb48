"""What MultiObjectiveBO's extreme turns spend and gain on a recorded table with two metrics.

    python -m tools.trace_extremes --shared ../shared [--problems rise_stencil rise_kmeans] [--seeds 10]
                                   [--first-seed 0] [--budget 100] [--technique 'MultiObjectiveBO;...']

Runs :func:`tools.bench_pareto.run` with the technique's proposals traced and labels every
evaluation by what proposed it: an extreme turn of objective ``j`` (``x0`` time, ``x1`` the second
metric), the expected hypervolume improvement (``ehvi``), or anything else (``other``: the initial
design and the random fallbacks).  Per run it prints, for each objective, the extreme turns made,
how many improved that objective's best value (a gain, which resets ``extreme_patience``'s count),
the BO proposal at which the objective's turns stopped (its first scheduled turn skipped for
``extreme_patience`` misses in a row; ``-`` if they never stopped), and each gain as
``evaluation:relative improvement%:ratio added:share`` (the share of the hypervolume of the front
found so far that the result added, :func:`front_share`); then the hypervolume ratio
(:func:`tools.bench_pareto.hypervolume_ratio`) added by each kind of proposal (sum over its
evaluations of the ratio after it minus before it) and the number of evaluations of each kind.  The last lines sum every kind over the seeds.
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

if __package__ in (None, ""):   # run as a script (python tools/NAME.py): import tools from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from scipy.stats import spearmanr

from tunerlib.techniques import hypervolume, non_dominated
from tools.bench_pareto import ParetoProblem, Vector, hypervolume_ratio, load, reference_point, run


class Trace:
    """The labels of one run's proposals and its extreme turns' outcomes, filled by the hooks that
    :meth:`attach` puts on a bound MultiObjectiveBO."""

    def __init__(self) -> None:
        self.kind: Dict[str, str] = {}           # configuration hash -> "x0", "x1", "ehvi"
        #: hash of an extreme proposal that improved its objective (a gain) -> (objective, relative gain)
        self.gains: Dict[str, Tuple[int, float]] = {}
        self.stopped: Dict[int, int] = {}         # objective -> BO proposals made before its first skipped turn
        self.order: List[str] = []                # hash of each evaluation, in order
        self.proposals = 0

    def attach(self, tech: Any) -> None:
        """Wrap the technique's BO proposal and its extreme turns' schedule (instance attributes)."""
        turns, proposal = tech._extremes, tech._bo_proposal
        aim, observed = turns.aim, turns.observed
        last: List[Optional[int]] = [None]

        def traced_aim(objectives: int, dimension: Optional[int] = None) -> Optional[int]:
            scheduled = turns.every > 0 and turns.turn % turns.every == turns.every - 1
            j = (turns.turn // turns.every) % objectives if scheduled else None
            last[0] = aim(objectives, dimension)
            if j is not None and last[0] is None:
                self.stopped.setdefault(j, self.proposals)
            return last[0]

        def traced_proposal() -> Any:
            last[0] = None
            cfg = proposal()
            self.proposals += 1
            if cfg is not None:
                self.kind[tech.manipulator.hash_config(cfg)] = "ehvi" if last[0] is None else f"x{last[0]}"
            return cfg

        def traced_observed(key: str, vector: Optional[Sequence[float]], best: Optional[Sequence[float]]) -> None:
            j = turns.aimed.get(key)
            observed(key, vector, best)
            if j is not None and vector is not None and (best is None or vector[j] < best[j]):
                self.gains[key] = (j, 1.0 if best is None or best[j] == 0 else (best[j] - vector[j]) / abs(best[j]))

        turns.aim, turns.observed, tech._bo_proposal = traced_aim, traced_observed, traced_proposal

    def measured(self, problem: ParetoProblem) -> ParetoProblem:
        """``problem`` with its measurements recorded in order (one per evaluation)."""
        space = problem.manipulator()
        inner = problem.measure

        def measure(config: Mapping[str, Any]) -> Tuple[str, Optional[Vector]]:
            self.order.append(space.hash_config(config))
            return inner(config)
        return replace(problem, measure=measure)


def front_share(found: Sequence[Vector], vector: Vector) -> float:
    """The share of the hypervolume of the front of ``found`` and ``vector`` that ``vector`` adds, the
    reference point 1.1 x the nadir of that front (with ``vector`` in it, so a result beyond the old
    front's nadir in another metric is worth what it extends); 1 when nothing was found before it."""
    if not found:
        return 1.0
    points = np.asarray(list(found) + [vector], dtype=float)
    reference = reference_point(points[non_dominated(points)].max(axis=0))
    total = hypervolume(points, reference)
    return (total - hypervolume(points[:-1], reference)) / total if total > 0 else 0.0


def agreement(found: Sequence[Vector], objective: int) -> float:
    """Spearman's rank correlation of the two metrics among the half of ``found`` (OK results so far)
    best in the other metric (NaN with fewer than 10 results or a constant metric there): near 1,
    where the other metric is good this one falls with it."""
    if len(found) < 10:
        return math.nan
    points = np.asarray(found, dtype=float)
    best = points[np.argsort(points[:, 1 - objective], kind="stable")[: len(points) // 2]]
    if np.ptp(best[:, 0]) == 0 or np.ptp(best[:, 1]) == 0:
        return math.nan
    return float(spearmanr(best[:, 0], best[:, 1])[0])


def table_figures(problem: ParetoProblem) -> str:
    """The table's rank correlation of the metrics over its OK rows and among its fastest tenth, the time
    of its least-metric row over the fastest time, and the share of the true front's hypervolume left
    without the front's least-metric end."""
    pts = problem.points
    fast = pts[pts[:, 0] <= np.quantile(pts[:, 0], 0.1)]
    ref = reference_point(problem.nadir)
    front = problem.front[np.argsort(problem.front[:, 1], kind="stable")]
    kept = hypervolume(front[1:], ref) / hypervolume(front, ref)
    return (f"{problem.name} table: {len(pts)} OK rows, rank correlation {spearmanr(pts[:, 0], pts[:, 1])[0]:.2f} "
            f"(fastest tenth {spearmanr(fast[:, 0], fast[:, 1])[0]:.2f}); least second metric at "
            f"{pts[np.argmin(pts[:, 1]), 0] / pts[:, 0].min():.1f} x the fastest time; the front without "
            f"that end keeps {kept:.3f} of its hypervolume")


def landing(problem: ParetoProblem, runs: Sequence[Mapping[str, Any]]) -> List[str]:
    """Per kind of proposal, where its results over ``runs`` lie (see the module's docstring)."""
    ref = reference_point(problem.nadir)
    lines = []
    for kind in sorted({k for r in runs for k, _ in r["landed"]}):
        ok = np.array([v for r in runs for k, v in r["landed"] if k == kind and v is not None], dtype=float)
        total = sum(k == kind for r in runs for k, _ in r["landed"])
        rho = [a for r in runs for k, a in r["agreement"] if k == kind and not math.isnan(a)]
        inside = int(np.sum((ok[:, 0] < ref[0]) & (ok[:, 1] < ref[1]))) if len(ok) else 0
        shown = f"; agreement at its turns, median {np.median(rho):+.2f} of {len(rho)}" if rho else ""
        lines.append(f"{problem.name} {kind}: {total} evaluations, {len(ok)} OK; time / best "
                     f"{np.median(ok[:, 0]) / problem.ideal[0]:.2f}, second metric / best "
                     f"{np.median(ok[:, 1]) / problem.ideal[1]:.2f} (medians); inside the reference box "
                     f"{inside}{shown}" if len(ok) else f"{problem.name} {kind}: {total} evaluations, none OK")
    return lines


def traced_run(problem: ParetoProblem, technique: str, seed: int, budget: int) -> Dict[str, Any]:
    """One traced run: per kind of proposal the evaluations and the ratio they added, per objective
    its turns, gains (evaluation, relative gain, ratio added) and the BO proposal its turns stopped at."""
    trace = Trace()
    vectors = run(trace.measured(problem), technique, seed, budget, bound=trace.attach)
    found: List[Vector] = []
    before = 0.0
    added: Dict[str, float] = {}
    count: Dict[str, int] = {}
    gains: Dict[int, List[Tuple[int, float, float, float]]] = {0: [], 1: []}
    turns = {0: 0, 1: 0}
    landed: List[Tuple[str, Optional[Vector]]] = []
    rhos: List[Tuple[str, float]] = []
    for i, (key, vec) in enumerate(zip(trace.order, vectors)):
        share = front_share(found, vec) if vec is not None else 0.0
        kind = trace.kind.get(key, "other")
        landed.append((kind, vec))
        if kind.startswith("x"):
            rhos.append((kind, agreement(found, int(kind[1:]))))
        if vec is not None:
            found.append(vec)
        after = hypervolume_ratio(problem, found)
        added[kind] = added.get(kind, 0.0) + after - before
        count[kind] = count.get(kind, 0) + 1
        if key in trace.gains:
            j, rel = trace.gains[key]
            gains[j].append((i + 1, rel, after - before, share))
        if kind.startswith("x"):
            turns[int(kind[1:])] += 1
        before = after
    return {"added": added, "count": count, "gains": gains, "turns": turns, "stopped": trace.stopped,
            "final": before, "landed": landed, "agreement": rhos}


def report(name: str, seed: int, r: Mapping[str, Any]) -> str:
    """One run's lines (see the module's docstring)."""
    lines = [f"{name} seed {seed}: final ratio {r['final']:.3f}"]
    for j in (0, 1):
        stop = r["stopped"].get(j)
        shown = " ".join(f"{e}:{100 * g:.1f}%:{a:+.3f}:{100 * s:.2f}%" for e, g, a, s in r["gains"][j])
        lines.append(f"  objective {j}: {r['turns'][j]} turns, {len(r['gains'][j])} gains, stopped at BO proposal "
                     f"{'-' if stop is None else stop}; gains {shown or '-'}")
    lines.append("  ratio added: " + ", ".join(f"{k} {r['added'][k]:+.3f} in {r['count'][k]}" for k in sorted(r["count"])))
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print every run's trace and the sums over the seeds (exit 2 on bad arguments)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=None, metavar="DIR", help="shared data folder (default: $TUNERLIB_SHARED_DIR)")
    ap.add_argument("--problems", nargs="+", default=["rise_stencil", "rise_kmeans"])
    ap.add_argument("--technique", default="MultiObjectiveBO", help="MultiObjectiveBO, options allowed")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--landing", action="store_true", help="where each kind's results lie, and the table's figures")
    args = ap.parse_args(argv)
    try:
        problems = [load(args.shared, n) for n in args.problems]
    except (KeyError, FileNotFoundError) as exc:
        print(f"trace_extremes: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    for problem in problems:
        added: Dict[str, float] = {}
        count: Dict[str, int] = {}
        runs = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            r = traced_run(problem, args.technique, seed, args.budget)
            runs.append(r)
            print(report(problem.name, seed, r), flush=True)
            for k in r["count"]:
                added[k] = added.get(k, 0.0) + r["added"][k]
                count[k] = count.get(k, 0) + r["count"][k]
        print(f"{problem.name} over {args.seeds} seeds: " + ", ".join(
            f"{k} {added[k]:+.3f} in {count[k]} ({added[k] / count[k]:+.4f} each)" for k in sorted(count)), flush=True)
        if args.landing:
            print("\n".join([table_figures(problem)] + landing(problem, runs)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
