"""History generation (DeepTuner thesis §5.4): tuning runs with random search approaches, uploaded to the
cross-session store as they finish.

    python -m tools.history generate --problems att48 berlin52 --runs 12 --evaluations 3000 \\
        --store history.db --work-dir history-runs --jobs 2 --seed 1

Each run is an AUC bandit with a window drawn from {500, 200, 100}, C from {0.05, 0.15, 0.45} and 5
techniques, each drawn from the catalogue or generated as a random composable technique
(``--generate-bandit-technique``). Run ``i`` of problem ``p`` draws everything from ``--seed``, ``p`` and
``i`` alone, so the plan is the same in every invocation. Each run keeps its results database in the
work directory; a run whose database holds a finished run is not measured again, only re-uploaded
(which changes nothing when it is already in the store), so an interrupted generation resumes where it
stopped. Runs go in parallel worker processes (``--jobs``).

``tunerlib history starter --store history.db`` (an installed command) writes the starter history
shipped with tunerlib (:mod:`tunerlib.store.starter`) from such a store.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tunerlib import TuningRunManager, MinimizeAttribute, Result
from tunerlib.store import CrossSessionStore, StoreError
from tunerlib.store import upload

if __package__ in (None, ""):  # run as ``python tools/NAME.py``: make the checkout holding tools/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.problems import Problem, default_problems, tsplib_names

WINDOWS = (500, 200, 100)
CS = (0.05, 0.15, 0.45)
_PROBLEMS: Dict[str, Problem] = {}

Job = Tuple[str, int, int, int, str, str, bool]  # problem, index, seed, evaluations, work dir, store, configs


def approach(base_seed: int, problem: str, index: int) -> Tuple[int, int, float]:
    """(run seed, bandit window, C) of run ``index`` of ``problem``: a function of its arguments only."""
    rng = random.Random(f"history:{base_seed}:{problem}:{index}")
    return rng.randrange(2**31), rng.choice(WINDOWS), rng.choice(CS)


def _finished(path: Path) -> bool:
    if not path.exists():
        return False
    from tunerlib.db import ResultsDB
    db = ResultsDB(str(path))
    try:
        return any(run["state"] == "COMPLETE" for run in db.list_runs())
    finally:
        db.close()


def run_job(job: Job) -> Tuple[str, int, str]:
    """Measure (unless already done) and upload one run; returns (problem, index, outcome)."""
    problem, index, base_seed, evaluations, work_dir, store_url, configs = job
    path = Path(work_dir) / f"{problem}-{index:04d}.db"
    if not _finished(path):
        for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            stale.unlink(missing_ok=True)
        _measure(_PROBLEMS[problem], index, base_seed, evaluations, str(path))
    with CrossSessionStore(store_url) as store:
        report = upload(str(path), store, configs, progress=None)
    return problem, index, ",".join(sorted(report.outcomes)) or "nothing"


def _measure(problem: Problem, index: int, base_seed: int, evaluations: int, database: str) -> None:
    seed, window, c = approach(base_seed, problem.name, index)
    manager = TuningRunManager.for_space(
        problem.make_space(), MinimizeAttribute("value"), program_name=problem.name,
        seed_configurations=problem.data.get("seeds", ()), database=database, seed=seed,
        test_limit=evaluations, generate_bandit_technique=True, bandit_c=c, bandit_window=window,
        quiet=True, label=f"history-{index}")
    while (desired := manager.get_next_desired_result()) is not None:
        try:
            value = problem.evaluate(desired.configuration.data)
        except Exception as exc:  # a failing configuration is an ERROR result, as in a tuner
            manager.report_result(desired, Result(state="ERROR", extra={"error": repr(exc)}))
            continue
        manager.report_result(desired, Result(state="ERROR") if value is None else Result(extra={"value": float(value)}))
    manager.finish()


def generate(problems: Sequence[str], runs: int, evaluations: int, store: str, work_dir: str, jobs: int,
             seed: int, include_configurations: bool = False, out: Any = None,
             shared: Optional[str] = None) -> Dict[str, int]:
    """Generate (or finish generating) the history, with a progress line on ``out`` (default the
    current sys.stderr); returns {outcome: runs}.  ``shared``: the shared data folder of the
    problems (default ``$TUNERLIB_SHARED_DIR``)."""
    out = out if out is not None else sys.stderr
    _PROBLEMS.update(default_problems(list(problems), shared))
    Path(work_dir).mkdir(parents=True, exist_ok=True)
    CrossSessionStore(store).close()  # create the schema once, before the workers race for it
    plan: List[Job] = [(p, i, seed, evaluations, work_dir, store, include_configurations)
                       for i in range(runs) for p in problems]
    counts: Dict[str, int] = {}
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with ctx.Pool(max(1, jobs)) as pool:
        for done, (problem, index, outcome) in enumerate(pool.imap_unordered(run_job, plan), 1):
            counts[outcome] = counts.get(outcome, 0) + 1
            out.write(f"\rhistory: {done}/{len(plan)} runs ({problem} #{index}: {outcome})   ")
            out.flush()
    out.write("\n")
    return counts


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m tools.history generate ...``."""
    parser = argparse.ArgumentParser(prog="python -m tools.history", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest="action", required=True)
    gen = actions.add_parser("generate", help="runs with random search approaches, uploaded as they finish")
    gen.add_argument("--problems", nargs="+", help="problem names (tools/compare.py's; default: --all-tsp)")
    gen.add_argument("--all-tsp", action="store_true", help="every TSPLIB instance under the shared data")
    gen.add_argument("--exclude", nargs="+", default=[], help="problems to leave out")
    gen.add_argument("--runs", type=int, default=10, help="runs per problem")
    gen.add_argument("--evaluations", type=int, default=3000, help="evaluations per run")
    gen.add_argument("--store", help="store URL or path (default $TUNERLIB_STORE or the user data directory)")
    gen.add_argument("--work-dir", default="tunerlib-history", help="where each run's results database is kept")
    gen.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    gen.add_argument("--seed", type=int, default=0, help="seed of the whole plan")
    gen.add_argument("--include-configurations", action="store_true", help="store best configurations too")
    gen.add_argument("--shared", metavar="DIR",
                     help="shared data folder holding data/tsplib (default: $TUNERLIB_SHARED_DIR)")
    gen.set_defaults(handler=main_generate)
    return parser


def main_generate(ns: argparse.Namespace) -> int:
    """Run ``python -m tools.history generate``; one-line errors with exit code 2."""
    names = list(ns.problems or []) + (tsplib_names(ns.shared) if ns.all_tsp or not ns.problems else [])
    names = [n for n in dict.fromkeys(names) if n not in set(ns.exclude)]
    if not names:
        print("tools.history: error: generate: no problems (pass --problems, or --all-tsp with the shared "
              "data folder: --shared DIR or $TUNERLIB_SHARED_DIR)", file=sys.stderr)
        return 2
    from tunerlib.store import default_store_url
    store = ns.store or default_store_url()
    try:
        counts = generate(names, ns.runs, ns.evaluations, store, ns.work_dir, ns.jobs, ns.seed,
                          ns.include_configurations, shared=ns.shared)
    except (StoreError, SystemExit) as exc:
        print(f"tools.history: error: generate: {exc}", file=sys.stderr)
        return 2
    print(f"history: {sum(counts.values())} runs of {len(names)} problems in {store}: "
          + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m tools.history generate ...``; returns the exit code."""
    ns = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return ns.handler(ns)


if __name__ == "__main__":
    sys.exit(main())
