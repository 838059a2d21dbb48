"""The HPVM2FPGA model problem for benchmark tools (tools/compare.py): :func:`make_problem`; as a
script, the README's benchmark table.

    problem = make_problem()                     # the shipped edge-detection space
    run = tune_function(problem["manipulator"](), problem["evaluate"],
                        test_limit=problem["budget"], technique=["BayesianOptimization"], seed=1)

    python examples/hpvm2fpga/fpga_bench.py --techniques AUCBanditMetaTechniqueA PureRandom \
        --seeds 0 1 2 --budgets 100 400 --jobs 2

The script runs ``hpvm2fpga_tuner.py --technique T --seed S --test-limit <largest budget>`` once per
technique and seed (each in its own process, ``--jobs`` at a time, fresh results databases in a
temporary folder), reads each run's results log and prints the Markdown table of the README: the
best modelled ExecTime within each budget per seed, the median, expert / best, the seeds at or below
the expert and the infeasible designs of the largest budget.  The model is deterministic, so the
same command prints the same table (``tools/doc_figures.py --check --slow`` compares them).

``evaluate`` uses the analytical model of ``fpga_model.py`` — a model, not FPGA measurements.

Budget: 400 evaluations.  The BaCO paper gave HPVM2FPGA 401 initial + 820 iterations; 400 is
about its "tiny" budget (a third of the full one), the regime the paper's headline results are
about.  The model costs microseconds per design, but one BayesianOptimization run of 400
evaluations already takes about 10 minutes on a 2-core machine, and the full 1221 much longer.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fpga_design  # noqa: E402
import fpga_model  # noqa: E402

#: evaluations per run (see the module docstring)
BUDGET = 400


def make_problem(space_path: Optional[str] = None) -> Dict[str, Any]:
    """The problem as a dict.

    Keys: ``manipulator`` (callable → a fresh ConfigurationManipulator), ``evaluate`` (config →
    modelled ExecTime in seconds, or None when the design does not fit or its fusion is illegal),
    ``default`` (the unoptimised design), ``expert`` (the space's expert design or None),
    ``budget`` (:data:`BUDGET`), ``name`` (``hpvm2fpga-<space>``), ``design`` (the parsed
    description).
    """
    design = fpga_design.load_design(space_path or fpga_design.EDGE_DETECTION)

    def evaluate(cfg: Dict[str, Any]) -> Optional[float]:
        report = fpga_model.evaluate(design, cfg)
        return report.seconds if report.fits else None

    manipulator: Callable = design.manipulator
    return {"name": f"hpvm2fpga-{design.name}", "manipulator": manipulator, "evaluate": evaluate,
            "default": dict(design.default),
            "expert": dict(design.expert) if design.expert else None,
            "budget": BUDGET, "design": design}


TUNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hpvm2fpga_tuner.py")


def tune(technique: str, seed: int, budget: int, workdir: str) -> Dict[str, Any]:
    """One tuner run in its own process: {"best": [best value after each test], "states": {...}}."""
    stem = os.path.join(workdir, f"{technique}-{seed}")
    cmd = [sys.executable, TUNER, "--technique", technique, "--seed", str(seed), "--test-limit", str(budget),
           "--database", stem + ".db", "--results-log", stem + ".csv", "--summary-json", stem + ".json",
           "--quiet"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(stem + ".csv") as fh:
        best = [float(row["best"]) if row["best"] not in ("", "inf") else None for row in csv.DictReader(fh)]
    with open(stem + ".json") as fh:
        states = json.load(fh)["states"]
    return {"best": best, "states": states}


def best_within(run: Dict[str, Any], budget: int) -> Optional[float]:
    """The best value (seconds) recorded within the first ``budget`` tests of ``run``."""
    values = [v for v in run["best"][:budget] if v is not None]
    return values[-1] if values else None


def table(runs: Dict[tuple, Dict[str, Any]], techniques: Sequence[str], seeds: Sequence[int],
          budgets: Sequence[int], expert_s: float) -> List[str]:
    """The README's Markdown table (ms; expert / best > 1: better than the expert)."""
    top = max(budgets)
    lines = [f"| technique | budget | best ExecTime (ms), seeds {' / '.join(map(str, seeds))} | median | "
             "expert / best (median; > 1: better than the expert) | seeds at or below the expert | "
             f"infeasible (of {top}, per seed) |", "|---|---|---|---|---|---|---|"]
    for technique in techniques:
        for budget in budgets:
            bests = [best_within(runs[technique, s], budget) for s in seeds]
            ok = [b for b in bests if b is not None]
            med = statistics.median(ok) if ok else None
            cells = " / ".join("-" if b is None else f"{1e3 * b:.4f}" for b in bests)
            reach = sum(1 for b in ok if b <= expert_s)
            infeasible = (" / ".join(str(runs[technique, s]["states"].get("INFEASIBLE", 0)) for s in seeds)
                          if budget == top else "")
            lines.append(f"| {technique} | {budget} | {cells} | {'-' if med is None else f'{1e3 * med:.4f}'} | "
                         f"{'-' if med is None else f'{expert_s / med:.2f}'} | {reach}/{len(seeds)} | {infeasible} |")
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print the benchmark table (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="fpga_bench.py", description="the HPVM2FPGA model benchmark table")
    parser.add_argument("--techniques", nargs="+", default=["AUCBanditMetaTechniqueA", "BayesianOptimization",
                                                            "PureRandom"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--budgets", nargs="+", type=int, default=[100, BUDGET])
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    ns = parser.parse_args(argv)
    problem = make_problem()
    expert_s = problem["evaluate"](problem["expert"])
    jobs = [(t, s) for t in ns.techniques for s in ns.seeds]
    with tempfile.TemporaryDirectory(prefix="fpga-bench-") as workdir, ThreadPoolExecutor(ns.jobs) as pool:
        done = pool.map(lambda job: tune(job[0], job[1], max(ns.budgets), workdir), jobs)
        runs = dict(zip(jobs, done))
    default_ms = 1e3 * problem["evaluate"](problem["default"])
    print(f"default design {default_ms:.1f} ms, expert {1e3 * expert_s:.3f} ms (model)")
    print("\n".join(table(runs, ns.techniques, ns.seeds, sorted(ns.budgets), expert_s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
