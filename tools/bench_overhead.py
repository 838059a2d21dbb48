"""Framework overhead per evaluation: wall time between measurements minus objective time.

Runs N evaluations of a trivial objective (a 4-D quadratic; with ``--space tour`` a 30-city tour
length over one permutation) with the default technique (or each technique named by
``--technique``) and a durable SQLite results database (``--database memory://``: the in-memory
store of ``tune_function``), and prints the median and mean overhead per evaluation, the median over
the first and the last 1,000 evaluations (to show growth with run length), and the process CPU per
evaluation (search, technique and database; the objective is a few microseconds) over evaluations
1,001-2,000 (``cpu2k_ms``) and over the last 1,000 (``cpu_last1000_ms``): a technique whose cost per
suggestion is flat has the two equal.
With ``--opentuner-python PY`` (a Python that has ``opentuner==0.8.8`` installed, e.g. a separate
virtual environment), the same figures for OpenTuner are printed side by side.  OpenTuner 0.8.8 has no seed option
(``--seed=N`` would be taken as an abbreviation of ``--seed-configuration``): its child process seeds
``random`` and ``numpy.random`` with ``--seed`` and runs with ``PYTHONHASHSEED`` set to it.

    python tools/bench_overhead.py --evals 2000
    python tools/bench_overhead.py --evals 10000 --opentuner-python /path/venv/bin/python
    nice -n 10 python tools/bench_overhead.py --evals 100000 --database memory:// \
        --technique AUCBanditMetaTechniqueG AUCBanditMetaTechniqueA TPE ga-base
    nice -n 10 python tools/bench_overhead.py --evals 100000 --space tour --technique StructuralSurrogate
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from typing import Dict, List, Optional, Sequence

from tunerlib import MeasurementInterface, MinimizeAttribute, Result, TuningOptions, TuningRun
from tunerlib.parameters import ConfigurationManipulator, FloatParameter, PermutationParameter

#: cities of ``--space tour``
CITIES = 30


class _Trivial(MeasurementInterface):
    """f(x) = sum (x_i - 0.5)^2 over four floats; records when each run() starts and ends."""

    def __init__(self, options: TuningOptions) -> None:
        super().__init__(options)
        self.stamps: List[tuple] = []
        self.cpu: List[float] = []

    def program_name(self) -> str:
        return "bench-overhead"

    def manipulator(self) -> ConfigurationManipulator:
        return ConfigurationManipulator([FloatParameter(f"x{i}", -5.0, 5.0) for i in range(4)])

    def objective(self):
        return MinimizeAttribute("value")

    def run(self, desired_result, input, limit) -> Result:
        start = time.perf_counter()
        cfg = desired_result.configuration.data
        value = sum((cfg[f"x{i}"] - 0.5) ** 2 for i in range(4))
        self.stamps.append((start, time.perf_counter()))
        self.cpu.append(time.process_time())
        return Result(extra={"value": value})


class _Tour(_Trivial):
    """The length of a closed tour over CITIES points placed on a circle in a shuffled order."""

    def __init__(self, options: TuningOptions) -> None:
        super().__init__(options)
        order = random.Random(0).sample(range(CITIES), CITIES)
        self.points = [(math.cos(2 * math.pi * k / CITIES), math.sin(2 * math.pi * k / CITIES)) for k in order]

    def manipulator(self) -> ConfigurationManipulator:
        return ConfigurationManipulator([PermutationParameter("tour", list(range(CITIES)))])

    def run(self, desired_result, input, limit) -> Result:
        start = time.perf_counter()
        tour, pts = desired_result.configuration.data["tour"], self.points
        value = sum(math.dist(pts[a], pts[b]) for a, b in zip(tour, tour[1:] + tour[:1]))
        self.stamps.append((start, time.perf_counter()))
        self.cpu.append(time.process_time())
        return Result(extra={"value": value})


SPACES = {"floats": _Trivial, "tour": _Tour}


def figures(stamps: List[tuple], wall: float, cpu: Sequence[float] = ()) -> Dict[str, float]:
    """Overhead figures in milliseconds from (start, end) stamps of each objective call and the
    process CPU time at the end of each (``cpu``, when known)."""
    gaps = [stamps[i + 1][0] - stamps[i][1] for i in range(len(stamps) - 1)]
    objective = sum(stamp[1] - stamp[0] for stamp in stamps)
    n = len(stamps)
    out = {"evals": n, "wall_s": wall, "median_ms": 1e3 * statistics.median(gaps),
           "mean_ms": 1e3 * (wall - objective) / n,
           "first1000_median_ms": 1e3 * statistics.median(gaps[:1000])}
    if n >= 2000:
        out["last1000_median_ms"] = 1e3 * statistics.median(gaps[-1000:])
    if len(cpu) >= 2000:
        out["cpu2k_ms"] = (cpu[1999] - cpu[999]) / 1000 * 1e3
        out["cpu_last1000_ms"] = (cpu[-1] - cpu[-1001]) / 1000 * 1e3
    return out


def bench_tunerlib(evals: int, seed: int, technique: Optional[str] = None, database: Optional[str] = None,
                   space: str = "floats") -> Dict[str, float]:
    """Overhead figures of one tunerlib run (``technique``: None for the default; ``database``: None
    for a SQLite file in a temporary folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        opts = TuningOptions(test_limit=evals, seed=seed, quiet=True, technique=[technique] if technique else [],
                             database=database or os.path.join(tmp, "bench.db"))
        tuner = SPACES[space](opts)
        start = time.perf_counter()
        TuningRun(tuner, opts).run()
        return figures(tuner.stamps, time.perf_counter() - start, tuner.cpu)


_OPENTUNER_SCRIPT = textwrap.dedent("""
    import json, os, random, sys, time
    import opentuner
    from opentuner import ConfigurationManipulator, FloatParameter, MeasurementInterface, Result
    stamps = []
    class T(MeasurementInterface):
        def manipulator(self):
            m = ConfigurationManipulator()
            for i in range(4):
                m.add_parameter(FloatParameter("x%d" % i, -5.0, 5.0))
            return m
        def run(self, desired_result, input, limit):
            s = time.perf_counter()
            cfg = desired_result.configuration.data
            v = sum((cfg["x%d" % i] - 0.5) ** 2 for i in range(4))
            stamps.append((s, time.perf_counter()))
            return Result(time=v)
        def save_final_config(self, c):
            pass
    args = opentuner.default_argparser().parse_args(sys.argv[3:])
    random.seed(int(sys.argv[2]))      # OpenTuner 0.8.8 has no seed option: seed what it draws from
    try:
        import numpy
        numpy.random.seed(int(sys.argv[2]))
    except ImportError:
        pass
    t0 = time.perf_counter()
    try:
        T.main(args)
    except SystemExit:
        pass
    json.dump({"stamps": stamps, "wall": time.perf_counter() - t0}, open(sys.argv[1], "w"))
""")


def bench_opentuner(python: str, evals: int, seed: int) -> Dict[str, float]:
    """Overhead figures of one OpenTuner 0.8.8 run in ``python``, seeded with ``seed`` (see the module doc)."""
    with tempfile.TemporaryDirectory() as tmp:
        script, out = os.path.join(tmp, "ot.py"), os.path.join(tmp, "ot.json")
        with open(script, "w") as fh:
            fh.write(_OPENTUNER_SCRIPT)
        cmd = [python, script, out, str(seed), f"--test-limit={evals}", f"--database=sqlite:///{tmp}/ot.db",
               "--no-dups"]
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True,
                              env=dict(os.environ, PYTHONHASHSEED=str(seed)))
        if not os.path.exists(out):
            raise RuntimeError(f"opentuner run failed: {proc.stderr[-2000:]}")
        data = json.load(open(out))
        return figures([tuple(s) for s in data["stamps"]], data["wall"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evals", type=int, default=2000, help="evaluations per run (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--opentuner-python", help="python executable with opentuner==0.8.8 installed")
    ap.add_argument("--technique", nargs="+", metavar="NAME",
                    help="techniques to measure, one row each (default: the default technique)")
    ap.add_argument("--database", metavar="URL",
                    help="results database (default: a SQLite file in a temporary folder; memory:// for the "
                         "in-memory store of tune_function)")
    ap.add_argument("--space", choices=sorted(SPACES), default="floats",
                    help="floats: four floats, a quadratic (default); tour: one 30-city permutation, its tour length")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ns = ap.parse_args(argv)
    rows = {}
    for t in ns.technique or [None]:  # one at a time, each row printed as soon as it is measured
        rows[f"tunerlib {t}" if t else "tunerlib"] = bench_tunerlib(ns.evals, ns.seed, t, ns.database, ns.space)
        if not ns.json:
            print(f"measured {t or 'the default technique'}", file=sys.stderr, flush=True)
    if ns.opentuner_python:
        rows["opentuner 0.8.8"] = bench_opentuner(ns.opentuner_python, ns.evals, ns.seed)
    if ns.json:
        print(json.dumps(rows, indent=2))
        return 0
    keys = ["evals", "wall_s", "median_ms", "mean_ms", "first1000_median_ms", "last1000_median_ms",
            "cpu2k_ms", "cpu_last1000_ms"]
    width = max(18, *(len(name) + 1 for name in rows))
    print(f"{'framework':<{width}}" + "".join(f"{k:>20}" for k in keys))
    for name, row in rows.items():
        cells = "".join(f"{row.get(k, float('nan')):>20.3f}" for k in keys)
        print(f"{name:<{width}}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
