"""Throughput of distributed measurement: evaluations/s with 1, 2, 4, 8 ``tunerlib worker`` processes on
an objective that sleeps (0.2 s and 50 ms), on a SQLite file and on PostgreSQL, as a fraction of linear
(n workers / sleep seconds).

    python tools/bench_workers.py [--workers 1 2 4 8] [--sleeps 0.2 0.05] [--postgres URL] [--dask]

Each cell is one ``--distributed`` run (technique PureRandom, so the search costs next to nothing) with
``evaluations-per-worker x n`` evaluations, measured by one ``tunerlib worker --parallelism n``
started before the run. Throughput counts the results after the first n (the workers' start-up) over
the time from the n-th result to the last. PostgreSQL rows need ``--postgres URL`` (an empty database
or schema); without it they are left out. ``--dask`` adds rows for the Dask executor: each cell starts
a ``distributed.LocalCluster`` of n worker processes with one thread each and runs ``--executor dask``
against it (the run stores the results in a SQLite file; needs the [dask] extra). The machine the
figures come from matters: on a 2-core box shared with other jobs, 8 worker processes and the run
compete for the cores.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from dataclasses import dataclass, field
from typing import List, Optional

from tunerlib import MeasurementInterface, Result, TuningOptions
from tunerlib.db import open_store
from tunerlib.parameters import ConfigurationManipulator, FloatParameter, IntegerParameter


@dataclass
class SleepOptions(TuningOptions):
    sleep: float = field(default=0.2, metadata={"help": "seconds each measurement sleeps"})


class SleepObjective(MeasurementInterface):
    """A measurement that sleeps ``--sleep`` seconds (the benchmark's stand-in for a real program)."""

    Options = SleepOptions

    def program_name(self):
        return "bench-workers-sleep"

    def manipulator(self):
        return ConfigurationManipulator([IntegerParameter("x", 0, 10**6), FloatParameter("y", 0.0, 1.0)])

    def run(self, desired_result, input, limit):
        time.sleep(self.options.sleep)
        cfg = desired_result.configuration.data
        return Result(time=self.options.sleep + cfg["y"] * 1e-6)


def _throughput(url: str, workers: int) -> float:
    """Results after the first ``workers`` over the seconds from the workers-th result to the last."""
    store = open_store(url)
    try:
        runs = store.list_runs()
        dates = sorted(r.collection_date for r in store.run_results(runs[-1]["id"]) if r.collection_date is not None)
    finally:
        store.close()
    start = dates[min(workers, len(dates)) - 1]
    return (len(dates) - workers) / (dates[-1] - start)


def measure(url: str, workers: int, sleep: float, per_worker: int) -> float:
    """One distributed run: evaluations/s."""
    spec = "tools.bench_workers:SleepObjective"
    pool = subprocess.Popen([sys.executable, "-m", "tunerlib.cli", "worker", "--database", url, "--interface",
                             spec, "--parallelism", str(workers), "--lease", "10", "--quiet"])
    time.sleep(2.0)  # the workers import tunerlib and start waiting for the run
    _tune(url, per_worker * workers, sleep, "--distributed")
    pool.wait(120)
    return _throughput(url, workers)


def measure_dask(url: str, workers: int, sleep: float, per_worker: int) -> float:
    """One run with ``--executor dask`` on a new local cluster of ``workers`` processes: evaluations/s."""
    import logging
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster:  # not the teardown noise
        with Client(cluster, set_as_default=False) as client:  # every worker imports tunerlib first
            client.run(lambda: __import__("tools.bench_workers"))
        _tune(url, per_worker * workers, sleep, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    return _throughput(url, workers)


def _tune(url: str, evaluations: int, sleep: float, *extra: str) -> None:
    command = [sys.executable, "-m", "tools.bench_workers", "tune", "--database", url, *extra,
               "--technique", "PureRandom", "--test-limit", str(evaluations), "--sleep", str(sleep),
               "--quiet", "--seed", "1"]
    tune = subprocess.run(command, capture_output=True, text=True, timeout=600,  # a hang fails, never counts
                          cwd=Path(__file__).resolve().parents[1])          # the checkout holding tools/
    if tune.returncode != 0:
        raise SystemExit(f"bench_workers: the run failed: {tune.stderr.strip()}")


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["tune"]:
        return SleepObjective.main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--sleeps", type=float, nargs="+", default=[0.2, 0.05])
    parser.add_argument("--evaluations-per-worker", type=int, default=25)
    parser.add_argument("--postgres", metavar="URL", help="an empty PostgreSQL database for the PostgreSQL rows")
    parser.add_argument("--no-sqlite", action="store_true", help="no rows of tunerlib workers on SQLite")
    parser.add_argument("--dask", action="store_true", help="add rows of the Dask executor (local clusters)")
    args = parser.parse_args(argv)
    backends = ([] if args.no_sqlite else [("SQLite", None, measure)]) + \
        ([("PostgreSQL", args.postgres, measure)] if args.postgres else []) + \
        ([("Dask executor (SQLite)", None, measure_dask)] if args.dask else [])
    print("| backend | sleep | " + " | ".join(f"{n} workers" for n in args.workers) + " |")
    print("|---|---|" + "---|" * len(args.workers))
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        for name, pg_url, run in backends:
            for sleep in args.sleeps:
                cells = []
                for n in args.workers:
                    url = pg_url or os.path.join(tmp, f"{run.__name__}-w{n}-{sleep}.db")
                    rate = run(url, n, sleep, args.evaluations_per_worker)
                    cells.append(f"{rate:.1f}/s ({rate / (n / sleep):.2f}x)")
                print(f"| {name} | {sleep:g} s | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
