"""The runs of tools/compare.py: every (problem, technique, seed) through tunerlib's ``tune_function``
in worker processes, and OpenTuner's default technique on the TSP problems in a Python of its own.

:func:`run_all` is called by ``compare.main`` once the problems are in :data:`_PROBLEMS` and the store
options in :data:`_STORE`; it returns the value sequences per (problem, technique) and the simulated
seconds per evaluation where the problem records them.  Each run's values end with its CPU seconds,
negated (:func:`split_cpu` takes them apart).  :func:`_run_one` makes one run (scripts call it to
drive a single run through the same path).  The module state is set before the workers fork, which
inherit it.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import tempfile
import textwrap
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from tunerlib import Result, tune_function
from tunerlib.techniques import DEFAULT_TECHNIQUE
from tools.problems import Problem

_PROBLEMS: Dict[str, Problem] = {}
DEFAULT_TECHNIQUES = [DEFAULT_TECHNIQUE, "AUCBanditMetaTechniqueG", "PureRandom"]
#: cross-session store options of every run (--store, --leave-one-out, --affinity-metric)
_STORE: Dict[str, Any] = {}


RunOut = Tuple[str, str, int, List[float], List[float]]
Runs = Dict[Tuple[str, str], List[List[float]]]


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


def split_cpu(values: List[float]) -> Tuple[List[float], Optional[float]]:
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


def run_all(ns: argparse.Namespace, tops: Mapping[str, int]) -> Tuple[Runs, Runs]:
    """Every (problem, technique, seed) run up to its problem's ``tops[problem]`` evaluations (its test
    limit) in ``ns.jobs`` worker processes:
    (values per run, simulated seconds per evaluation per run where recorded)."""
    techniques = ns.techniques or DEFAULT_TECHNIQUES
    _record_runs(ns.database_dir, list(_PROBLEMS))
    seeds = range(ns.first_seed, ns.first_seed + ns.seeds)
    jobs = [(p, t, s, tops[p]) for p in _PROBLEMS for t in techniques for s in seeds]
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
                    ot_jobs += [(pname, ns.opentuner_python, s, tops[pname], path) for s in range(ns.opentuner_seeds)]
        ot_async = pool.map_async(_run_opentuner, ot_jobs) if ot_jobs else None
        for pname, tech, _seed, values, cost in pool.imap_unordered(_run_one, jobs):
            results.setdefault((pname, tech), []).append(values)
            if cost:
                costs.setdefault((pname, tech), []).append(cost)
        for pname, tech, _seed, values, _cost in (ot_async.get() if ot_async else []):
            if values:
                results.setdefault((pname, tech), []).append(values)
    return results, costs
