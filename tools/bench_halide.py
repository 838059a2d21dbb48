"""Benchmark tunerlib on the Halide example pipelines against Halide's own schedulers.

For every pipeline and seed, runs ``examples/halide/halide_tuner.py`` in this process (default
technique unless ``--technique``) for a budget of evaluations (``--test-limit``) and/or minutes
(``--minutes``), then re-times the best schedule found right next to the baselines (Halide's
default schedule and Adams2019, plus any ``--baselines``), so drift in machine load hits both
sides alike.  Prints, per pipeline, the median over seeds of tunerlib's best time relative to
each baseline and to the fastest autoscheduler of that run ("best-auto"; below 1.0: tunerlib is
faster), and of the best time recorded during the run.  Each seed runs once per ``--seed-modes``
entry: the search alone from Halide's default schedule (the tuner's ``--seeds default``) and from
the schedule templates too (``--seeds templates``); with both, a last table puts the two side by
side (best / fastest autoscheduler, median and per seed)::

    python tools/bench_halide.py --test-limit 200 --seeds 5
    python tools/bench_halide.py --seed-modes default --test-limit 200 --seeds 2
    python tools/bench_halide.py --pipelines blur matmul --test-limit 200 --seeds 2 --size blur=512

The Halide example is loaded by path from ``--examples DIR`` (default: the ``examples/`` folder of
the checkout this tool runs from); this tool never puts that folder on ``sys.path`` itself.

Timings are min-of-k (``examples/halide/timing.py``); on a shared machine they stay noisy, which
is why the ratios are taken per seed, with the best schedule and the baselines timed in
interleaved rounds (each round runs every contender once), so load changes hit all alike.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

if __package__ in (None, ""):  # run as ``python tools/NAME.py``: make the checkout holding tools/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import exit_from
from tools.example_problems import Folder, examples_dir, load_example

#: row name of the best schedule among the timed contenders
BEST = "tunerlib best"
#: baselines timed unless --baselines says otherwise (default and Adams2019 are always timed)
CORE_BASELINES = ("default", "Adams2019")
DEFAULT_EXTRA_BASELINES = ["Mullapudi2016", "Li2018"]
#: column of the fastest autoscheduler of each run
BEST_AUTO = "best-auto"
#: values of the tuner's --seeds compared by --seed-modes
SEED_MODES = ("default", "templates")


def _import_example(examples: Folder = None):
    """The Halide example's tuner module, loaded from ``examples``/halide (see
    :func:`tools.example_problems.examples_dir`); exits when it or halide is unavailable."""
    path = examples_dir(examples, "bench_halide") / "halide" / "halide_tuner.py"
    if not path.is_file():
        sys.exit(f"bench_halide: {path} not found; pass --examples DIR (the examples/ folder of a tunerlib "
                 "checkout)")
    try:
        import halide  # noqa: F401
    except ImportError:
        sys.exit("bench_halide: the halide package is not installed; pip install 'tunerlib[halide]'")
    return load_example(path, "tunerlib_example_halide_tuner", "bench_halide")


def parse_sizes(items: Sequence[str]) -> Dict[str, int]:
    """``["blur=512", "matmul=128"]`` → ``{"blur": 512, "matmul": 128}``."""
    sizes = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not value.isdigit():
            raise SystemExit(f"bench_halide: --size {item!r}: write PIPELINE=N, e.g. blur=512")
        sizes[name] = int(value)
    return sizes


class PipelineBench:
    """Baselines compiled once for one pipeline, re-timed after every tuning run."""

    def __init__(self, halide_tuner, name: str, size: Optional[int], baseline_names: Sequence[str],
                 common: List[str]) -> None:
        self.halide_tuner = halide_tuner
        self.name, self.common = name, common
        args = ["--pipeline", name, "--baselines", "none", *common]
        if size is not None:
            args += ["--size", str(size)]
        self.args = args
        self.tuner = self.halide_tuner.HalideTuner(self.halide_tuner.HalideOptions.parse(args))
        self.size = self.tuner.instance.size
        self.compiled: Dict[str, Any] = {}
        for b in baseline_names:
            compiled, why = self.tuner.compile_baseline(b)
            if compiled is None:
                print(f"  {name}: baseline {b} unavailable: {why}", file=sys.stderr)
            else:
                self.compiled[b] = compiled

    def retime(self, best_config: Optional[Dict[str, Any]]) -> Tuple[Optional[float], Dict[str, float]]:
        """The best configuration and every baseline timed now, in interleaved rounds."""
        contenders = dict(self.compiled)
        if best_config is not None:
            best, _, _ = self.tuner.compile_checked(best_config)
            if best is not None:
                contenders[BEST] = best
        times = self.tuner.compare(contenders)
        best_time = times.pop(BEST, None)
        return best_time, times

    def run_seed(self, seed: int, test_limit: Optional[int], minutes: Optional[float],
                 technique: Sequence[str], workdir: str, seed_mode: str = "templates") -> Dict[str, Any]:
        """One tuning run starting from ``seed_mode`` (the tuner's ``--seeds``: ``default`` or
        ``templates``); returns its best (recorded and re-timed) and the baselines timed now."""
        summary = os.path.join(workdir, f"{self.name}-{seed_mode}-{seed}.json")
        args = self.args + ["--seed", str(seed), "--seeds", seed_mode,
                            "--database", os.path.join(workdir, f"{self.name}-{seed_mode}.db"),
                            "--quiet", "--display-frequency", "0", "--summary-json", summary]
        if test_limit is not None:
            args += ["--test-limit", str(test_limit)]
        if minutes is not None:
            args += ["--stop-after", str(60.0 * minutes)]
        if technique:
            args += ["--technique", *technique]
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):        # the tuner's own report
            code = self.halide_tuner.HalideTuner.main(args)
        wall = time.perf_counter() - start
        if code != 0:
            raise SystemExit(f"bench_halide: {self.name} seed {seed}: tuner exited with {code}")
        with open(summary) as fh:
            data = json.load(fh)
        chosen = data["best_configuration"]          # the tuner's re-timed best (= --final-config)
        retimed, base = self.retime(chosen)
        recorded = data["retimed"]["search_best_value"] if data.get("retimed") else data["best_value"]
        return {"seed": seed, "seed_mode": seed_mode, "tests": data["tests"], "states": data["states"], "wall_s": wall,
                "recorded_best": recorded, "best": retimed, "baselines": base}


def summarise(name: str, size: int, runs: List[Dict[str, Any]], baseline_names: Sequence[str]) -> Dict[str, Any]:
    """Medians over seeds: best time, each baseline's time, and best / baseline ratios."""
    ok = [r for r in runs if r["best"] is not None]
    out: Dict[str, Any] = {"pipeline": name, "size": size, "seeds": len(runs),
                           "tests_median": statistics.median(r["tests"] for r in runs),
                           "wall_s_median": statistics.median(r["wall_s"] for r in runs)}
    if not ok:
        return out
    out["best_s"] = statistics.median(r["best"] for r in ok)
    out["recorded_best_s"] = statistics.median(r["recorded_best"] for r in ok)
    for b in baseline_names:
        timed = [r for r in ok if b in r["baselines"]]
        if timed:
            out[f"{b}_s"] = statistics.median(r["baselines"][b] for r in timed)
            out[f"ratio_vs_{b}"] = statistics.median(r["best"] / r["baselines"][b] for r in timed)
    autos = [r for r in ok if any(b != "default" for b in r["baselines"])]
    if autos:
        best_auto = [min(t for b, t in r["baselines"].items() if b != "default") for r in autos]
        out[f"{BEST_AUTO}_s"] = statistics.median(best_auto)
        per_seed = [r["best"] / t for r, t in zip(autos, best_auto)]
        out[f"ratio_vs_{BEST_AUTO}"] = statistics.median(per_seed)
        out["per_seed_vs_best_auto"] = per_seed
        fastest = [min((t, b) for b, t in r["baselines"].items() if b != "default")[1] for r in autos]
        out["best_auto_name"] = max(sorted(set(fastest)), key=fastest.count)
    if runs and "seed_mode" in runs[0]:
        out["seed_mode"] = runs[0]["seed_mode"]
    return out


def render_side_by_side(rows: List[Dict[str, Any]]) -> str:
    """One line per pipeline: the search from Halide's default schedule alone (``--seeds default``)
    next to the search that also starts from the templates (``--seeds templates``), each as the
    median over seeds of best / fastest autoscheduler, with the per-seed ratios."""
    by = {(r["pipeline"], r.get("seed_mode")): r for r in rows}
    head = (f"{'pipeline':<9}{'size':>6}{'seeds':>6}  {'best autoscheduler (s)':<26}"
            f"{'search only (s)':>16}{'ratio':>7}  {'per seed':<24}{'with templates (s)':>19}{'ratio':>7}  per seed")
    lines = [head]
    for pipeline in dict.fromkeys(r["pipeline"] for r in rows):
        mine = [by.get((pipeline, m)) for m in ("default", "templates")]
        first = next(r for r in mine if r is not None)
        auto = f"{first.get('best_auto_name', '-')} {first.get(f'{BEST_AUTO}_s', float('nan')):.6f}"
        line = f"{pipeline:<9}{first['size']:>6}{first['seeds']:>6}  {auto:<26}"
        for i, r in enumerate(mine):
            per = " ".join(f"{v:.2f}" for v in (r or {}).get("per_seed_vs_best_auto", [])) or "-"
            best = (r or {}).get("best_s", float("nan"))
            ratio = (r or {}).get(f"ratio_vs_{BEST_AUTO}", float("nan"))
            line += f"{best:>{16 if i == 0 else 19}.6f}{ratio:>7.2f}  " + (f"{per:<24}" if i == 0 else per)
        lines.append(line)
    lines.append("ratio = tunerlib's best / the fastest autoscheduler of the same run, re-timed in interleaved "
                 "rounds (median over seeds; < 1.00: tunerlib faster); 'search only' starts from Halide's "
                 "default schedule (--seeds default), 'with templates' also from schedule.template_configs; 'best autoscheduler' is the "
                 "one fastest in most runs, its median time over the first mode's runs.")
    return "\n".join(lines)


def render(rows: List[Dict[str, Any]], baseline_names: Sequence[str]) -> str:
    """The table: one line per pipeline, times in seconds (microsecond digits), ratios = tunerlib best /
    baseline (median)."""
    baseline_names = list(baseline_names) + [BEST_AUTO]
    head = f"{'pipeline':<9}{'size':>6}{'seeds':>6}{'tests':>7}{'best (s)':>10}{'(in run)':>10}"
    for b in baseline_names:
        head += f"{b + ' (s)':>{_w(b)}}{'best/' + b:>{_w(b)}}"
    lines = [head]
    for r in rows:
        line = (f"{r['pipeline']:<9}{r['size']:>6}{r['seeds']:>6}{r['tests_median']:>7.0f}"
                f"{r.get('best_s', float('nan')):>10.6f}{r.get('recorded_best_s', float('nan')):>10.6f}")
        for b in baseline_names:
            line += (f"{r.get(f'{b}_s', float('nan')):>{_w(b)}.6f}"
                     f"{r.get(f'ratio_vs_{b}', float('nan')):>{_w(b)}.2f}")
        lines.append(line)
    lines.append("best/X < 1.00: tunerlib's best schedule is faster than X (median over seeds of per-seed "
                 "ratios, both re-timed back to back); '(in run)' is the best time recorded while tuning.")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point; returns the exit code."""
    p = argparse.ArgumentParser(prog="bench_halide", description=__doc__.split("\n\n")[0])
    p.add_argument("--pipelines", nargs="+", default=["blur", "harris", "matmul"])
    p.add_argument("--test-limit", type=int, default=200, help="evaluations per run (default 200)")
    p.add_argument("--minutes", type=float, default=None, help="wall-time budget per run (minutes)")
    p.add_argument("--seeds", type=int, default=5, help="seeds per pipeline (default 5)")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--seed-modes", nargs="+", choices=SEED_MODES, default=list(SEED_MODES),
                   help="the tuner's starting points, each run over every seed: 'default' (Halide's default "
                        "schedule only: the search alone) and/or 'templates' (also the schedule templates); "
                        "with both, a side-by-side table follows (default: both)")
    p.add_argument("--size", nargs="+", default=[], metavar="PIPELINE=N",
                   help="problem size per pipeline (default: the tuner's default size)")
    p.add_argument("--baselines", nargs="+", default=DEFAULT_EXTRA_BASELINES,
                   help="baselines to time besides default and Adams2019 (default: Mullapudi2016 "
                        "Li2018; 'none' for only the two); the fastest autoscheduler of each run is "
                        "the 'best-auto' column")
    p.add_argument("--technique", nargs="+", default=[], help="tunerlib technique(s) (default: built-in)")
    p.add_argument("--tuner-args", nargs=argparse.REMAINDER, default=[],
                   help="further halide_tuner options for every run (e.g. --max-runs 10), last")
    p.add_argument("--workdir", default=None,
                   help="keep the results databases and summaries here (default: a temp dir, removed)")
    p.add_argument("--json", default=None, help="also write every run and the summary to this JSON file")
    p.add_argument("--examples", default=None, metavar="DIR",
                   help="the examples/ folder of a tunerlib checkout (default: the one beside this tool)")
    p.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                   help="measure nothing: print the tables of the runs in these --json files together "
                        "(e.g. more seeds measured by later commands)")
    ns = p.parse_args(argv)
    if ns.merge:
        print_tables(*merge_runs(ns.merge))
        return 0
    halide_tuner = _import_example(ns.examples)
    sizes = parse_sizes(ns.size)
    names = list(CORE_BASELINES) + [b for b in ns.baselines if b not in CORE_BASELINES and b != "none"]
    rows, everything = [], {}
    with contextlib.ExitStack() as stack:
        workdir = ns.workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_halide_"))
        os.makedirs(workdir, exist_ok=True)
        for pipeline in ns.pipelines:
            bench = PipelineBench(halide_tuner, pipeline, sizes.get(pipeline), names, ns.tuner_args)
            for mode in ns.seed_modes:
                runs = [run_logged(bench, seed, ns, workdir, mode)
                        for seed in range(ns.first_seed, ns.first_seed + ns.seeds)]
                rows.append(summarise(pipeline, bench.size, runs, names))
                everything[f"{pipeline}/{mode}"] = runs
    print_tables(rows, names)
    if ns.json:     # the runs are done: make the file's folder rather than lose them to a missing one
        os.makedirs(os.path.dirname(os.path.abspath(ns.json)), exist_ok=True)
        with open(ns.json, "w") as fh:
            json.dump({"summary": rows, "runs": everything}, fh, indent=2)
    return 0


def print_tables(rows: List[Dict[str, Any]], names: Sequence[str]) -> None:
    """One table per seed mode, then (with both) the side-by-side table."""
    modes = list(dict.fromkeys(r.get("seed_mode", "templates") for r in rows))
    for mode in modes:
        print(f"--seeds {mode}:")
        print(render([r for r in rows if r.get("seed_mode", "templates") == mode], names))
    if len(modes) > 1:
        print(render_side_by_side(rows))


def merge_runs(paths: Sequence[str]) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The runs of several ``--json`` files grouped by pipeline and seed mode (a seed measured twice:
    the later file wins), summarised; returns the rows and the baseline names seen."""
    groups: Dict[Tuple[str, str], Dict[int, Dict[str, Any]]] = {}
    sizes: Dict[str, int] = {}
    for path in paths:
        with open(path) as fh:
            data = json.load(fh)
        sizes.update({row["pipeline"]: row["size"] for row in data["summary"]})
        for key, runs in data["runs"].items():
            pipeline = key.split("/")[0]
            for run in runs:
                mode = run.get("seed_mode", "templates")
                groups.setdefault((pipeline, mode), {})[run["seed"]] = run
    names = list(CORE_BASELINES)
    for runs in groups.values():
        for run in runs.values():
            names += [b for b in run["baselines"] if b not in names]
    order = {m: i for i, m in enumerate(SEED_MODES)}
    rows = [summarise(pipeline, sizes[pipeline], [runs[k] for k in sorted(runs)], names)
            for (pipeline, mode), runs in sorted(groups.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 9)))]
    return rows, names


def run_logged(bench: PipelineBench, seed: int, ns: argparse.Namespace, workdir: str,
               mode: str) -> Dict[str, Any]:
    """One run of :meth:`PipelineBench.run_seed`, with a progress line."""
    r = bench.run_seed(seed, ns.test_limit, ns.minutes, ns.technique, workdir, mode)
    print(f"  {bench.name} --seeds {mode} seed {seed}: {r['tests']} tests in {r['wall_s']:.0f} s, best "
          f"{_s(r['best'])} (in run {_s(r['recorded_best'])}); "
          + ", ".join(f"{b} {_s(t)}" for b, t in r["baselines"].items()), flush=True)
    return r


def _w(name: str) -> int:
    return len(name) + 7


def _s(seconds: Optional[float]) -> str:
    return "-" if seconds is None else f"{seconds:.6f} s"


if __name__ == "__main__":
    exit_from(main)
