#!/usr/bin/env python3
"""TACO benchmark problems for tools/compare.py, and the example's own tuning benchmark.

:func:`make_problem` is the hook for ``tools/compare.py``: a dict with a manipulator factory, an
``evaluate(cfg) -> seconds or None`` that measures with the built-in backend (generate, compile,
verify, time), the expert and default configurations and the paper's budget (60).

Run as a script it tunes each kernel with ``taco_tuner.py`` (built-in backend, default sizes) for
the paper's budget and several seeds, then re-times default, expert (each as given, 32 threads, and
mapped to this machine's threads) and every seed's best in interleaved rounds -- the whole
re-timing ``--passes`` times, to show its noise -- and prints times, speed-ups over the stronger form
of each baseline (median and range over the seeds) and the noise (how far the passes' minimums of one
configuration differ)::

    python examples/taco/taco_bench.py --kernels spmv spmm sddmm ttv mttkrp --seeds 1 2 3 4 5 --budget 60
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taco_spaces  # noqa: E402
import taco_tuner  # noqa: E402
from taco_backends import Evaluator  # noqa: E402
from taco_harness import DEFAULT_POLICY, Compiler, bind, retime_kernels  # noqa: E402
from taco_kernels import KERNEL_NAMES  # noqa: E402
from tunerlib.measure import pass_noise, retime_passes, spread  # noqa: E402
from tunerlib.measure import stronger as stronger_form  # noqa: E402

#: the BaCO paper's budget for every TACO kernel (7 initial + 53 guided evaluations)
BUDGET = 60


def make_evaluator(kernel: str, **sizes: Any) -> Evaluator:
    """A built-in-backend :class:`Evaluator` for ``kernel`` on the random input of ``sizes``
    (``rows``, ``cols``, ``dims``, ``density``, ``dense``, ``input_seed``; defaults as the tuner's)."""
    opts = taco_tuner.TacoOptions(kernel=kernel, **sizes)
    compiler = Compiler(opts.cc)
    compiler.check()
    problem = taco_tuner.make_input(kernel, opts)
    return Evaluator(kernel, problem, "builtin", compiler, DEFAULT_POLICY, opts.run_timeout)


def make_problem(kernel: str, **sizes: Any) -> Dict[str, Any]:
    """``{"manipulator": () -> fresh space, "evaluate": cfg -> seconds or None, "expert": cfg,
    "default": cfg, "budget": 60}`` for ``kernel`` (built-in backend; ``sizes`` as
    :func:`make_evaluator`).  ``evaluate`` returns None for INFEASIBLE/ERROR/TIMEOUT schedules."""
    evaluator = make_evaluator(kernel, **sizes)
    return {"manipulator": lambda: taco_spaces.build_space(kernel), "evaluate": evaluator.seconds,
            "expert": taco_spaces.expert_config(kernel), "default": taco_spaces.default_config(kernel),
            "budget": BUDGET, "name": f"taco_{kernel}", "evaluator": evaluator}


def tune_once(kernel: str, seed: int, budget: int, technique: Sequence[str], folder: str) -> Optional[Dict[str, Any]]:
    """One tuning run of ``taco_tuner.py``; returns its best configuration (None if none)."""
    summary = os.path.join(folder, f"{kernel}-{seed}.json")
    args = ["--kernel", kernel, "--test-limit", str(budget), "--seed", str(seed), "--quiet",
            "--database", os.path.join(folder, f"{kernel}-{seed}.db"), "--compare-rounds", "0",
            "--summary-json", summary]
    if technique:
        args += ["--technique", *technique]
    if taco_tuner.TacoTuner.main(args) != 0:
        return None
    with open(summary) as fh:
        return json.load(fh).get("best_configuration")


def retime(evaluator: Evaluator, configs: Dict[str, Dict[str, Any]], rounds: int, passes: int = 1,
           untimed: Optional[Dict[str, str]] = None) -> Dict[str, List[float]]:
    """Each OK configuration's min-of-``rounds`` seconds, re-timed all together in interleaved
    rounds, ``passes`` times over: ``{name: [min of pass 1, min of pass 2, ...]}``.  A configuration
    that is not OK when checked first is left out (``untimed[name]`` says why)."""
    ready = {}
    for name, cfg in configs.items():
        kernel, failure = evaluator.build(cfg)
        result = failure if failure is not None else evaluator.evaluate(cfg)
        if result.state == "OK":
            ready[name] = (kernel, bind(evaluator.problem, evaluator.backend)[1])
        elif untimed is not None:
            untimed[name] = f"{result.state}: {result.extra.get('error', '')}".rstrip(": ")
    return retime_passes(lambda: retime_kernels(ready, rounds), passes)


def bench_kernel(kernel: str, seeds: Sequence[int], budget: int, technique: Sequence[str],
                 rounds: int, log: Callable[[str], None], passes: int = 1) -> Dict[str, Any]:
    """Tune ``kernel`` once per seed, then re-time default, expert and the bests together
    (``passes`` times; a time is the minimum over all passes, ``noise`` the passes' disagreement)."""
    evaluator = make_evaluator(kernel)
    threads = taco_spaces.machine_threads()
    configs = dict(taco_spaces.baselines(kernel, threads))     # as given and mapped to this machine
    with tempfile.TemporaryDirectory(prefix="taco_bench_") as folder:
        for seed in seeds:
            best = tune_once(kernel, seed, budget, technique, folder)
            log(f"{kernel} seed {seed}: best {json.dumps(best, sort_keys=True)}")
            if best is not None:
                configs[f"seed {seed}"] = best
    untimed: Dict[str, str] = {}
    per_pass = retime(evaluator, configs, rounds, passes, untimed)
    for name, why in untimed.items():
        log(f"{kernel} {name}: not timed ({why})")
    times = {name: min(v) for name, v in per_pass.items()}
    noise = pass_noise(per_pass)
    bests = [times[f"seed {s}"] for s in seeds if f"seed {s}" in times]
    row = {"kernel": kernel, "problem": evaluator.problem.description, "threads": threads,
           "best_s": bests, "passes": passes, "noise": noise,
           "untimed": untimed}
    for base in ("default", "expert"):           # speed-ups over the stronger form of each baseline
        stronger = stronger_form(times, base)
        row[f"{base}_s"] = {name: t for name, t in times.items() if name == base or name.startswith(base + ",")}
        row[f"{base}_stronger"] = None if stronger is None else stronger[0]
        row[f"vs_{base}"] = [] if stronger is None else [stronger[1] / t for t in bests]
    row["reached_expert"] = sum(v >= 1.0 for v in row["vs_expert"])
    return row


def format_rows(rows: List[Dict[str, Any]]) -> str:
    """Markdown table of :func:`bench_kernel` rows, times in seconds (microsecond digits).  Default
    and expert are shown as given (32 threads) and mapped to this machine's threads; speed-ups are
    over the stronger form, as the median and range over the seeds; the noise column is the median
    and largest disagreement between re-timing passes of one configuration (``-`` with one pass).  A
    mapped form that could not be timed shows ``-``, and the speed-up over that baseline says it is over
    the form as given only."""
    threads = rows[0]["threads"] if rows else taco_spaces.machine_threads()
    out = [f"| kernel | input | default (s; as given / {threads} threads) | expert (s; as given / {threads} threads) "
           "| best (s; median; per seed) | best vs stronger default (median; range) "
           "| best vs stronger expert (median; range) | seeds reaching the stronger expert "
           "| re-timing noise (median / max) |", "|---|---|---|---|---|---|---|---|---|"]

    def pair(r: Dict[str, Any], base: str) -> str:
        times = r[f"{base}_s"]
        given = times.get(base)
        mapped = next((t for n, t in times.items() if n != base), None)
        if mapped is None and not lost(r, base):        # nothing to map on this machine: the same schedule
            mapped = given
        return " / ".join("-" if t is None else f"{t:.6f}" for t in (given, mapped))

    def lost(r: Dict[str, Any], base: str) -> bool:      # the mapped form could not be timed
        return any(n.startswith(base + ", ") for n in r.get("untimed", {}))

    def ratio(r: Dict[str, Any], base: str) -> str:
        s = spread(r[f"vs_{base}"])
        return "-" if s is None else s.text() + (" (over the form as given: the mapped one was not timed)"
                                                  if lost(r, base) else "")

    def noise(r: Dict[str, Any]) -> str:
        values = list(r.get("noise", {}).values())
        return "-" if not values else f"{100 * statistics.median(values):.1f} % / {100 * max(values):.1f} %"
    for r in rows:
        per = ", ".join(f"{t:.6f}" for t in r["best_s"])
        med = statistics.median(r["best_s"]) if r["best_s"] else float("nan")
        out.append(f"| {r['kernel']} | {r['problem']} | {pair(r, 'default')} | "
                   f"{pair(r, 'expert')} | {med:.6f} ({per}) | {ratio(r, 'default')} | "
                   f"{ratio(r, 'expert')} | {r['reached_expert']}/{len(r['best_s'])} | {noise(r)} |")
    return "\n".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: see the module docstring; returns the exit code."""
    p = argparse.ArgumentParser(description="Tune the TACO kernels (built-in backend) for the paper's budget "
                                            "over several seeds; print default/expert/best times and speed-ups")
    p.add_argument("--kernels", nargs="+", default=list(KERNEL_NAMES), choices=list(KERNEL_NAMES))
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3], help="tuning seeds (default 1 2 3)")
    p.add_argument("--budget", type=int, default=BUDGET, help=f"evaluations per run (default {BUDGET})")
    p.add_argument("--technique", nargs="+", default=[], help="technique(s) (default: tunerlib's default)")
    p.add_argument("--rounds", type=int, default=20, help="interleaved re-timing rounds (default 20)")
    p.add_argument("--passes", type=int, default=2,
                   help="re-timing passes (default 2): times are the minimum over all, the noise column "
                        "how far the passes' minimums of one configuration differ")
    p.add_argument("--json", help="also write the rows as JSON to this file")
    a = p.parse_args(argv)
    if a.passes < 1 or a.rounds < 1 or a.budget < 1:
        p.error("--passes, --rounds and --budget must be >= 1")
    rows = [bench_kernel(k, a.seeds, a.budget, a.technique, a.rounds, lambda s: print(s, flush=True), a.passes)
            for k in a.kernels]
    print(format_rows(rows))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
