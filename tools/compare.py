"""Compare techniques on benchmark problems: best value at several budgets over many seeds.

Runs every (technique, problem, seed) in parallel worker processes through tunerlib's public
``tune_function`` (in-memory results database), then prints, per problem and technique, the median
and the 20th/80th percentiles of the best value found within each budget, and the median ratio to
the known optimum.  With ``--opentuner-python PY`` (a Python with ``opentuner==0.8.8`` installed,
e.g. a separate virtual environment) OpenTuner's default technique runs on the TSP problems too and appears as the
row ``opentuner-0.8.8``.

    python tools/compare.py --problems att48 --techniques AUCBanditMetaTechniqueA PureRandom \\
        --budgets 300 1000 3000 --seeds 20

``--score`` adds, for every exhaustively recorded replay problem (the Kernel Tuner caches, the RISE
kmeans/stencil tables, any ``@table`` problem), the autotuning methodology's score of each technique
(tools/score.py: 0 random search, 1 the optimum, averaged over the budget range up to the largest
budget), the mean over problems in a closing table with Kernel Tuner's figures, and the runs within
5 % of the optimum.

The recommendation bandits (``rec-bndt-dbi`` ...) read the store given by ``--store`` (made by
``python -m tools.history generate``); ``--leave-one-out`` hides each problem's own runs from them, so the
history comes from the other problems only (the thesis' protocol, Table 7.3). Where the store holds no run of
a similar search space they read the starter history shipped with tunerlib, unless ``--no-starter-history``.

The TSPLIB instances and recorded tables come from the shared data folder (``--shared DIR``, else
``$TUNERLIB_SHARED_DIR``; without one those problems are absent), the problems measured by the
examples from ``--examples DIR`` (default: the ``examples/`` folder beside this tool in a checkout).
A table recorded elsewhere is named by its file: ``BENCHMARK=FILE`` (e.g.
``rise_kmeans=/tmp/kmeans_othergpu.csv.gz``) or a bare ``FILE`` whose columns identify its kernel is
replayed in that kernel's space, known constraints included; add ``@table`` to search only its
recorded configurations.  Such problems need no shared folder.

``--database-dir DIR`` also records every tunerlib run in a results database per problem,
``DIR/<problem>.db``, labelled with its technique, so that ``tunerlib plot DIR/att48.db`` and
``tunerlib report DIR/att48.db`` show the comparison (median and band across seeds per technique).
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from tunerlib import Result, tune_function
from tunerlib.techniques import AFFINITY_METRICS, DEFAULT_TECHNIQUE

if __package__ in (None, ""):  # run as ``python tools/NAME.py``: make the checkout holding tools/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import exit_from
from tools.problems import Problem, default_problems, shared_root
from tools.references import KERNEL_TUNER_SCORE_SPACES, reference_lines, score_reference_lines
from tools.targets import auto_lines, is_kernel_tuner_cache, score_target_lines, target_lines
from tools.score import (CUTOFF_PERCENTILE, Population, SpaceScore, aggregate, cutoff_evaluations,
                                  replay_population, score_table, space_score, within)

_PROBLEMS: Dict[str, Problem] = {}
DEFAULT_TECHNIQUES = [DEFAULT_TECHNIQUE, "AUCBanditMetaTechniqueG", "PureRandom"]
#: cross-session store options of every run (--store, --leave-one-out, --affinity-metric)
_STORE: Dict[str, Any] = {}


RunOut = Tuple[str, str, int, List[float], List[float]]


def _run_one(job: Tuple[str, str, int, int]) -> RunOut:
    """One run (in a worker process): returns the value of every evaluation (inf when failed),
    followed by the run's CPU seconds (the technique's and framework's time: replayed and test
    functions cost next to nothing), and the simulated seconds of every evaluation (replay problems;
    [] otherwise)."""
    problem_name, technique, seed, budget = job
    problem = _PROBLEMS[problem_name]
    costs: List[float] = []
    start = time.process_time()
    run = tune_function(problem.make_space(), _costed(problem, costs), test_limit=budget,
                        technique=[technique], seed=seed, program_name=problem_name,
                        seed_configurations=problem.data.get("seeds", ()),
                        measurement_cost=problem.data.get("simulated_s"), **_store_options(problem_name),
                        **_database_options(problem_name, technique))
    return problem_name, technique, seed, list(run.values) + [-(time.process_time() - start)], costs


def _costed(problem: Problem, costs: List[float]):
    """``problem.evaluate``, noting the recorded simulated seconds of each evaluation in ``costs``
    (problems whose data give ``simulated_s``: the replays).  A configuration a replayed table has no
    row for is an ERROR result marked ``not_measured`` (techniques see ``Feedback.unmeasured``)."""
    cost, status = problem.data.get("simulated_s"), problem.data.get("status")
    if cost is None:
        return problem.evaluate

    def evaluate(config: Dict[str, Any]) -> Union[None, float, Result]:
        costs.append(cost(config))
        if status is not None and status(config) == "not_measured":
            return Result(state="ERROR", extra={"not_measured": True})
        return problem.evaluate(config)
    return evaluate


def _store_options(problem_name: str) -> Dict[str, Any]:
    """TuningOptions fields for the store: its URL, and the problem itself left out (leave-one-out)."""
    if not _STORE.get("store"):
        return {"no_starter_history": True} if _STORE.get("no_starter") else {}
    options = {"store": _STORE["store"], "affinity_metric": _STORE.get("metric"),
               "no_starter_history": bool(_STORE.get("no_starter"))}
    if _STORE.get("leave_one_out"):
        options["store_exclude"] = [problem_name]
    return options


#: --database-dir of every run (set before the worker processes fork)
_RECORD: Dict[str, Optional[str]] = {}


def _database_options(problem_name: str, technique: str) -> Dict[str, Any]:
    """--database-dir: the run goes to DIR/<problem>.db, labelled with its technique."""
    folder = _RECORD.get("database_dir")
    if not folder:
        return {}
    return {"database": os.path.join(folder, f"{problem_name}.db"), "label": technique}


def _record_runs(folder: Optional[str], problems: Sequence[str]) -> None:
    """--database-dir (None: off): create DIR and each problem's results database once, before the
    workers write to them."""
    _RECORD["database_dir"] = folder
    if not folder:
        return
    from tunerlib.db import DatabaseError, ResultsDB
    try:
        os.makedirs(folder, exist_ok=True)
        for name in problems:
            ResultsDB(os.path.join(folder, f"{name}.db")).close()
    except (OSError, DatabaseError) as exc:
        raise SystemExit(f"compare: --database-dir {folder}: {exc}") from None
    print(f"recording runs in {folder}/<problem>.db: tunerlib plot|report "
          f"{os.path.join(folder, problems[0] + '.db')}")


def _split_cpu(values: List[float]) -> Tuple[List[float], Optional[float]]:
    """(evaluation values, CPU seconds or None): the run's CPU time is stored as a negative tail."""
    if values and values[-1] < 0:
        return values[:-1], -values[-1]
    return values, None


_OT_TSP = textwrap.dedent("""
    import json, sys
    import opentuner
    from opentuner import ConfigurationManipulator, PermutationParameter, MeasurementInterface, Result
    matrix = json.load(open(sys.argv[1]))
    values = []
    class T(MeasurementInterface):
        def manipulator(self):
            m = ConfigurationManipulator()
            m.add_parameter(PermutationParameter("tour", list(range(len(matrix)))))
            return m
        def run(self, desired_result, input, limit):
            t = desired_result.configuration.data["tour"]
            v = sum(matrix[t[i]][t[(i + 1) % len(t)]] for i in range(len(t)))
            values.append(v)
            return Result(time=v)
        def save_final_config(self, c):
            pass
    args = opentuner.default_argparser().parse_args(sys.argv[3:])
    try:
        T.main(args)
    except SystemExit:
        pass
    json.dump(values, open(sys.argv[2], "w"))
""")


def _run_opentuner(job: Tuple[str, str, int, int, str]) -> RunOut:
    problem_name, python, seed, budget, matrix_file = job
    with tempfile.TemporaryDirectory() as tmp:
        script, out = os.path.join(tmp, "ot.py"), os.path.join(tmp, "values.json")
        with open(script, "w") as fh:
            fh.write(_OT_TSP)
        subprocess.run([python, script, matrix_file, out, f"--test-limit={budget}", f"--seed={seed}",
                        f"--database=sqlite:///{tmp}/ot.db"], cwd=tmp, capture_output=True, text=True)
        values = json.load(open(out)) if os.path.exists(out) else []
    return problem_name, "opentuner-0.8.8", seed, values, []


def _best_at(values: Sequence[float], budget: int) -> float:
    return min(values[:budget], default=math.inf)


def _pct(xs: List[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))]


def report(results: Dict[Tuple[str, str], List[List[float]]], problems: Dict[str, Problem],
           budgets: List[int], out: Any = None, score: bool = False,
           costs: Optional[Dict[Tuple[str, str], List[List[float]]]] = None, shared: Optional[str] = None) -> None:
    """Print one block per problem: technique × budget → median [p20, p80] (median and worst
    run as ratios to the optimum, when known).  With ``score``, also the runs within 5 % of the
    optimum, the autotuning-methodology score per problem (``costs``: simulated seconds per
    evaluation, for the time-based score) and a closing table of the scores and their mean, with the
    published scores found under the shared data folder ``shared`` (default ``$TUNERLIB_SHARED_DIR``)."""
    out = out or sys.stdout
    per_space: Dict[str, Dict[str, SpaceScore]] = {}
    for pname, problem in problems.items():
        opt = problem.optimum
        unit = f" {problem.unit}" if problem.unit else ""
        out.write(f"\n== {pname}" + (f" (optimum {opt:g}{unit})" if opt else "") + "\n")
        head = "technique" + (f" (best, {problem.unit})" if problem.unit else "")
        out.write(f"{head:<32}" + "".join(f"{'@' + str(b):>46}" for b in budgets) + "  cpu s/eval\n")
        for (p, tech), raw in sorted(results.items()):
            if p != pname:
                continue
            split = [_split_cpu(v) for v in raw]
            runs = [v for v, _ in split]
            cpu = [c / max(1, len(v)) for v, c in split if c is not None]
            cells = [_cell(runs, b, opt) for b in budgets]
            per_eval = f"{statistics.mean(cpu):>12.4f}" if cpu else ""
            out.write(f"{tech + f' (n={len(runs)})':<32}" + "".join(f"{c:>46}" for c in cells) + per_eval + "\n")
            if opt:
                within = _within_text(runs, budgets, opt, .01)
                out.write(f"{'':<4}runs within 1% of the optimum: {within}\n")
                if score:
                    out.write(f"{'':<4}runs within 5% of the optimum: {_within_text(runs, budgets, opt, .05)}\n")
        expert = problem.data.get("expert_value")
        if expert is None and problem.data.get("expert_value_fn"):
            expert = problem.data["expert_value"] = problem.data["expert_value_fn"]()
        if expert:
            out.write(f"  expert configuration: {expert:g}{unit} ({expert / opt:.3f}x the optimum)\n" if opt else
                      f"  expert configuration: {expert:g}{unit}\n")
            for (p, tech), raw in sorted(results.items()):
                if p == pname:
                    runs = [_split_cpu(v)[0] for v in raw]
                    reached = ", ".join(f"@{b} {sum(_best_at(v, b) <= expert for v in runs)}/{len(runs)} "
                                        f"(median best/expert {statistics.median(_best_at(v, b) for v in runs) / expert:.3f})"
                                        for b in budgets)
                    out.write(f"{'':<4}{tech}: runs at least as good as the expert: {reached}\n")
        _baseline_lines(out, pname, problem, results, budgets)
        for line in reference_lines(pname) + target_lines(pname, problem.data, _runs_of(results, pname), opt,
                                                          max(budgets)) + auto_lines(_runs_of(results, pname),
                                                                                     budgets, opt):
            out.write(line + "\n")
        if score:
            per_space[pname] = _score_block(out, pname, problem, results, costs or {}, max(budgets))
    if score:
        caches = [p for p, prob in problems.items() if is_kernel_tuner_cache(prob.data)]
        _score_summary(out, {p: s for p, s in per_space.items() if s}, shared, caches)


def _runs_of(results: Dict[Tuple[str, str], List[List[float]]], pname: str) -> Dict[str, List[List[float]]]:
    """technique -> the values per evaluation of each of its runs on ``pname`` (CPU times split off)."""
    return {tech: [_split_cpu(v)[0] for v in raw] for (p, tech), raw in results.items() if p == pname}


def _within_text(runs: List[List[float]], budgets: Sequence[int], opt: float, tolerance: float) -> str:
    return ", ".join(f"@{b} {within(runs, b, opt, tolerance)}/{len(runs)}" for b in budgets)


def _population(problem: Problem) -> Optional[Population]:
    """The score's population of a replay problem (cached in its data); None for other problems and
    for sparse tables (random search over their space is not known from the table)."""
    if "population" not in problem.data:
        bench = problem.data.get("benchmark")
        usable = bench is not None and not problem.data.get("sparse")
        problem.data["population"] = (replay_population(bench, problem.data.get("table_space", False))
                                      if usable else None)
    return problem.data["population"]


def _score_block(out: Any, pname: str, problem: Problem, results: Dict[Tuple[str, str], List[List[float]]],
                 costs: Dict[Tuple[str, str], List[List[float]]], top: int) -> Dict[str, SpaceScore]:
    """Print and return each technique's score on one problem (nothing without a population)."""
    pop = _population(problem)
    if pop is None:
        out.write("  score: needs an exhaustively recorded space (a non-sparse replay table)\n")
        return {}
    scores = {tech: space_score([_split_cpu(v)[0] for v in raw], pop, top, costs.get((p, tech)))
              for (p, tech), raw in sorted(results.items()) if p == pname}
    if not scores:
        return {}
    first, last = next(iter(scores.values())).budgets
    out.write(f"  score (autotuning methodology: 0 random search, 1 the optimum; mean over evaluations "
              f"{first}..{last}; the methodology's cutoff here: {cutoff_evaluations(pop, CUTOFF_PERCENTILE)} evaluations):\n")
    for tech, s in scores.items():
        timed = f"   time-based {s.time_mean:.3f}" if s.time_mean is not None else ""
        out.write(f"{'':<4}{tech:<32} {s.mean:6.3f} (sd over runs {s.std:.3f}, n={s.runs}){timed}"
                  f"   median-rank {s.rank:.3f}\n")
    return scores


def _score_summary(out: Any, per_space: Dict[str, Dict[str, SpaceScore]], shared: Optional[str] = None,
                   caches: Sequence[str] = ()) -> None:
    """The closing table: score per space, the mean over spaces (evaluation- and time-based), the
    mean over Kernel Tuner's anchor spaces when all were run, and the Kernel Tuner reference lines."""
    if not per_space:
        return
    techniques = sorted({t for scores in per_space.values() for t in scores})
    spaces = sorted(per_space)
    anchor = all(s in per_space for s in KERNEL_TUNER_SCORE_SPACES)
    widths = [max(7, len(s)) + 1 for s in spaces]
    out.write("\n== autotuning-methodology score per space; mean over spaces (evaluation-based; time-based "
              "from the recorded simulated seconds)\n")
    out.write(f"{'technique':<32}" + "".join(f"{s:>{w}}" for s, w in zip(spaces, widths))
              + f"{'mean':>8}{'time':>8}{'rank':>8}" + (f"{'conv+dedisp':>13}" if anchor else "") + "\n")
    rows = score_table(per_space, techniques)
    for row in rows:
        cells = row.per_space
        text = "".join(f"{cells[s]:>{w}.3f}" if s in cells else f"{'-':>{w}}" for s, w in zip(spaces, widths))
        sub = aggregate({s: cells[s] for s in KERNEL_TUNER_SCORE_SPACES if s in cells})
        text += "".join(f"{x:>8.3f}" if x is not None else f"{'-':>8}" for x in (row.mean, row.time_mean, row.rank_mean))
        out.write(f"{row.technique:<32}{text}" + (f"{sub:>13.3f}" if anchor else "") + "\n")
    out.write("  mean: of the evaluation-based scores; time: of the time-based ones; rank: of the methodology's "
              "median-rank estimator" + ("; conv+dedisp: the mean over Kernel Tuner's anchor spaces" if anchor else "")
              + "\n")
    for line in (score_reference_lines(shared_root(shared) / "data" / "gpu_cache" / "published_scores")
                 + score_target_lines({r.technique: r.per_space for r in rows}, caches)):
        out.write(line + "\n")


def _baseline_lines(out: Any, pname: str, problem: Any, results: Dict[Tuple[str, str], List[Any]],
                    budgets: Sequence[int]) -> None:
    """Median best/baseline per technique and budget, for problems that name baselines (Halide:
    the default schedule and each autoscheduler, timed when the report is written)."""
    fn = problem.data.get("baselines_fn")
    times = problem.data.get("baseline_values") or (fn() if fn else None)
    if not times:
        return
    problem.data["baseline_values"] = times
    unit = f" {problem.unit}" if getattr(problem, "unit", "") else ""
    out.write("  baselines: " + ", ".join(f"{n} {t:g}{unit}" for n, t in times.items()) + "\n")
    for (p, tech), raw in sorted(results.items()):
        if p != pname:
            continue
        runs = [_split_cpu(v)[0] for v in raw]
        for b in budgets:
            med = statistics.median(_best_at(v, b) for v in runs)
            out.write(f"{'':<4}{tech} @{b}: median best / " + ", ".join(f"{n} {med / t:.2f}" for n, t in times.items())
                      + "\n")


def _cell(runs: List[List[float]], budget: int, opt: Optional[float]) -> str:
    """median [p20, p80] of the best value within ``budget`` (and median, worst ratios to ``opt``)."""
    bests = [_best_at(v, budget) for v in runs]
    med = statistics.median(bests)
    ratio = f" ({med / opt:.3f}x)" if opt else ""
    worst = f" max {max(bests) / opt:.3f}x" if opt else ""
    return f"{med:>10.5g} [{_pct(bests, .2):.5g}, {_pct(bests, .8):.5g}]{ratio}{worst}"


Runs = Dict[Tuple[str, str], List[List[float]]]
#: suffix of the --json keys holding the simulated seconds of each evaluation ("problem|technique|simulated_s")
_COST_KEY = "simulated_s"
#: --json key of the problems' units (``{problem: "s"}``); files saved before it hold replay times in ms
_UNITS_KEY = "@units"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+",
                    help="problem names, or table files as BENCHMARK=FILE[@table] (default: all available)")
    ap.add_argument("--techniques", nargs="+",
                    help=f"techniques to run (default: {' '.join(DEFAULT_TECHNIQUES)}; with --from-json: "
                         "every saved one)")
    ap.add_argument("--budgets", nargs="+", type=int, help="budgets to report (default per problem)")
    ap.add_argument("--seeds", type=int, default=20, help="repetitions per technique and problem")
    ap.add_argument("--first-seed", type=int, default=0, metavar="N",
                    help="seeds N .. N + SEEDS - 1 (default 0), e.g. to validate on seeds not used for development")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--opentuner-python", help="python with opentuner==0.8.8 (TSP problems only)")
    ap.add_argument("--opentuner-seeds", type=int, default=5, help="OpenTuner repetitions (slow)")
    ap.add_argument("--store", help="cross-session store the recommendation bandits read (a path or URL)")
    ap.add_argument("--leave-one-out", action="store_true",
                    help="recommendations ignore the stored runs of the problem being tuned")
    ap.add_argument("--no-starter-history", action="store_true",
                    help="recommendations read only --store, never the starter history shipped with tunerlib "
                         "(which they read when the store holds no run of a similar search space)")
    ap.add_argument("--affinity-metric", choices=AFFINITY_METRICS,
                    help="search affinity of the recommendation bandits (default: theirs)")
    ap.add_argument("--score", action="store_true",
                    help="also report the autotuning-methodology score (0 random search, 1 the optimum; "
                         "tools/score.py) of every exhaustively recorded problem, up to the largest budget, "
                         "its mean over problems, and the runs within 5%% of the optimum")
    ap.add_argument("--database-dir", metavar="DIR",
                    help="also record every run in DIR/<problem>.db, labelled with its technique "
                         "(for `tunerlib plot` and `tunerlib report`)")
    ap.add_argument("--shared", metavar="DIR",
                    help="shared data folder holding data/tsplib, data/gpu_cache and data/taco_cache (default: "
                         "$TUNERLIB_SHARED_DIR)")
    ap.add_argument("--examples", metavar="DIR",
                    help="examples folder for the problems the examples measure (default: examples/ beside "
                         "this tool in a checkout)")
    ap.add_argument("--json", help="also write all raw value sequences to this JSON file")
    ap.add_argument("--from-json", nargs="+", metavar="FILE",
                    help="do not run: report the runs saved by --json (several files are merged; "
                         "without --budgets, up to the saved runs' length)")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    ns = _parser().parse_args(argv)
    _STORE.update(store=ns.store, leave_one_out=ns.leave_one_out, metric=ns.affinity_metric,
                  no_starter=ns.no_starter_history)
    _PROBLEMS.clear()  # main() may run more than once in a process (tests)
    try:
        _PROBLEMS.update(default_problems(ns.problems, ns.shared, ns.examples))
    except (FileNotFoundError, ValueError) as exc:     # a table file that is missing or not a recording
        print(f"compare: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        raise SystemExit(2) from None
    budgets = ns.budgets or sorted({b for p in _PROBLEMS.values() for b in p.budgets})
    if ns.from_json:
        results, costs = _load_saved(ns.from_json, ns.techniques)
        if not ns.budgets:
            budgets = _saved_budgets(results, budgets)
        report(results, _PROBLEMS, budgets, score=ns.score, costs=costs, shared=ns.shared)
        return 0
    results, costs = _run_all(ns, max(budgets))
    if ns.json:
        with open(ns.json, "w") as fh:
            json.dump({**{f"{p}|{t}": v for (p, t), v in results.items()},
                       **{f"{p}|{t}|{_COST_KEY}": c for (p, t), c in costs.items()},
                       _UNITS_KEY: {p: prob.unit for p, prob in _PROBLEMS.items()}}, fh)
    report(results, _PROBLEMS, budgets, score=ns.score, costs=costs, shared=ns.shared)
    if ns.store:
        print(f"store used: {ns.store}" + (" (leave-one-out: each problem's own runs ignored)"
                                            if ns.leave_one_out else ""))
    return 0


def _run_all(ns: argparse.Namespace, top: int) -> Tuple[Runs, Runs]:
    """Every (problem, technique, seed) run up to ``top`` evaluations in ``ns.jobs`` worker processes:
    (values per run, simulated seconds per evaluation per run where recorded)."""
    techniques = ns.techniques or DEFAULT_TECHNIQUES
    _record_runs(ns.database_dir, list(_PROBLEMS))
    seeds = range(ns.first_seed, ns.first_seed + ns.seeds)
    jobs = [(p, t, s, top) for p in _PROBLEMS for t in techniques for s in seeds]
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    results: Runs = {}
    costs: Runs = {}
    with tempfile.TemporaryDirectory() as tmp, ctx.Pool(ns.jobs) as pool:
        ot_jobs = []
        if ns.opentuner_python:
            for pname, prob in _PROBLEMS.items():
                if "matrix" in prob.data:
                    path = os.path.join(tmp, f"{pname}.json")
                    with open(path, "w") as fh:
                        json.dump(prob.data["matrix"], fh)
                    ot_jobs += [(pname, ns.opentuner_python, s, top, path) for s in range(ns.opentuner_seeds)]
        ot_async = pool.map_async(_run_opentuner, ot_jobs) if ot_jobs else None
        for pname, tech, _seed, values, cost in pool.imap_unordered(_run_one, jobs):
            results.setdefault((pname, tech), []).append(values)
            if cost:
                costs.setdefault((pname, tech), []).append(cost)
        for pname, tech, _seed, values, _cost in (ot_async.get() if ot_async else []):
            if values:
                results.setdefault((pname, tech), []).append(values)
    return results, costs


def _saved_budgets(results: Runs, defaults: Sequence[int]) -> List[int]:
    """Budgets for saved runs when ``--budgets`` is not given: the default ones they reach and their
    length, so that the score covers the evaluations it covered when the runs were made (runs are
    made up to the largest budget; the score's range is capped there)."""
    longest = max((len(_split_cpu(run)[0]) for runs in results.values() for run in runs), default=0)
    if not longest:
        return list(defaults)
    return sorted({b for b in defaults if b < longest} | {longest})


def _load_saved(paths: Sequence[str], techniques: Optional[List[str]]) -> Tuple[Runs, Runs]:
    """Runs saved by ``--json`` (merged), restricted to the chosen problems and techniques: (values
    per run, simulated seconds per evaluation per run where saved).  A file without units (saved
    before replayed times were seconds) has its replay problems' values converted from ms."""
    results: Runs = {}
    costs: Runs = {}
    for path in paths:
        with open(path) as fh:
            saved = json.load(fh)
        in_ms = _UNITS_KEY not in saved
        saved.pop(_UNITS_KEY, None)
        for key, runs in saved.items():
            pname, tech = key.split("|", 1)
            target = results
            if tech.endswith("|" + _COST_KEY):
                tech, target = tech[: -len(_COST_KEY) - 1], costs
            if pname in _PROBLEMS and (techniques is None or tech in techniques):
                if in_ms and target is results and _PROBLEMS[pname].data.get("replay"):
                    runs = [[v / 1000 if v >= 0 else v for v in run] for run in runs]  # the CPU tail is < 0
                target.setdefault((pname, tech), []).extend(runs)
    return results, costs


if __name__ == "__main__":
    exit_from(main)
