"""Replay benchmark problems for tools/compare.py: recorded tables as cheap tuning oracles.

    from tools.replay_problems import replay_problems
    problems = replay_problems("../shared")            # {name: Problem}, tables read once
    # (None: $TUNERLIB_SHARED_DIR; there is no other default)
    p = problems["rise_kmeans"]
    run = tune_function(p.manipulator(), p.evaluate, test_limit=max(p.budgets), technique=[...], seed=s)
    ratio = run.best_at(20) / p.optimum                # best/optimum (>= 1, lower is better)
    # values and optimum are seconds (the recorded milliseconds, converted when the table is read)

Names: ``gemm_rtxtitan``, ``gemm_rtx3090``, ``conv_a100``, ``conv_a4000``, ``conv_mi250x``,
``dedisp_a100``, ``dedisp_a4000``, ``dedisp_mi250x``, ``pnpoly_rtxtitan`` (exhaustive Kernel Tuner
caches), ``rise_kmeans``, ``rise_stencil`` (near-exhaustive), and the sparse samples ``rise_asum``,
``rise_mm``, ``rise_scal``, ``rise_harris``, ``taco_spmm``, ``taco_spmv``, ``taco_sddmm``,
``taco_ttv``, ``taco_mttkrp`` (``Problem.sparse`` is True: most configurations are not measured).
Any name with the suffix ``@table`` (e.g. ``taco_spmm@table``) is the same table searched only over
its recorded configurations (a ``TableConstraint``, Kernel Tuner's simulation mode); it is returned
only when named.  Only problems whose table exists under ``shared_dir`` are returned.  A name may
also be a table file (recorded on any machine, any file name: it is replayed in its kernel's space,
:func:`tunerlib.replay.recorded.benchmark_from_file`) or ``BENCHMARK=FILE`` (that file in BENCHMARK's
space)::

    python -m tools.replay_problems --shared ../shared
    python -m tools.replay_problems rise_kmeans=/tmp/kmeans_othergpu.csv.gz other_spmm.csv.gz

The shared data folder is ``--shared DIR`` or ``$TUNERLIB_SHARED_DIR``; without either, a run that
needs it stops with one line saying so.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from tunerlib.parameters import ConfigurationManipulator
from tunerlib.replay import ReplayBenchmark
from tunerlib.replay.recorded import available_benchmarks, benchmark_from_file, load_benchmark, shared_folder


#: problem-name suffix of a replay problem searched only over its recorded configurations
TABLE_SUFFIX = "@table"


def shared_data_dir(given: Union[str, Path, None] = None) -> Path:
    """The shared data folder of the benchmark tools: ``given``, else ``$TUNERLIB_SHARED_DIR``; without
    either raises FileNotFoundError saying to pass ``--shared DIR`` or set the variable."""
    return shared_folder(given, "--shared DIR")


@dataclass
class Problem:
    """One replay problem.

    ``manipulator()`` builds a fresh search space (known constraints included); ``evaluate(config)``
    returns the recorded time in seconds (the tables record ms; the readers convert), or None when
    the configuration failed or was not measured (``status(config)`` tells which: ``"ok"``,
    ``"failed"``, ``"not_measured"``); ``optimum`` is the best recorded time in the space (seconds);
    ``budgets`` the evaluation counts to report at; ``expert`` and
    ``default`` the documented configurations (RISE kernels) or None.
    """

    name: str
    description: str
    manipulator: Callable[[], ConfigurationManipulator]
    evaluate: Callable[[Mapping[str, Any]], Optional[float]]
    status: Callable[[Mapping[str, Any]], str]
    simulated_s: Callable[[Mapping[str, Any]], float]
    optimum: float
    budgets: List[int]
    sparse: bool
    expert: Optional[Dict[str, Any]]
    default: Optional[Dict[str, Any]]
    benchmark: ReplayBenchmark

    @property
    def expert_value(self) -> Optional[float]:
        """Recorded time of the expert configuration (None when absent, failed or not measured)."""
        return None if self.expert is None else self.evaluate(self.expert)


def _simulated(bench: ReplayBenchmark) -> Callable[[Mapping[str, Any]], float]:
    def simulated_s(config: Mapping[str, Any]) -> float:
        rec = bench.lookup(config)
        return 0.0 if rec is None else rec.simulated_s
    return simulated_s


def make_problem(bench: ReplayBenchmark, table_space: bool = False) -> Problem:
    """Wrap a loaded :class:`ReplayBenchmark` as a :class:`Problem` (named ``<name>@table`` and
    searching only the recorded configurations when ``table_space``)."""
    spec = bench.spec
    if table_space:
        return Problem(name=bench.name + TABLE_SUFFIX,
                       description=spec.description + "; search restricted to the recorded configurations",
                       manipulator=lambda: bench.manipulator(table_space=True), evaluate=bench.evaluate,
                       status=bench.status, simulated_s=_simulated(bench), optimum=bench.optimum,
                       budgets=list(spec.budgets), sparse=False, expert=bench.expert,
                       default=bench.default, benchmark=bench)
    return Problem(name=bench.name, description=spec.description, manipulator=bench.manipulator,
                   evaluate=bench.evaluate, status=bench.status, simulated_s=_simulated(bench),
                   optimum=bench.optimum, budgets=list(spec.budgets), sparse=spec.sparse,
                   expert=bench.expert, default=bench.default, benchmark=bench)


def replay_problems(shared_dir: Union[str, Path, None] = None, names: Optional[Sequence[str]] = None,
                    include_sparse: bool = True) -> Dict[str, Problem]:
    """The replay problems whose tables exist under ``shared_dir`` (default: :func:`shared_data_dir`),
    keyed by name; ``names`` restricts the set (unknown names raise
    KeyError, missing tables or shared folder FileNotFoundError, files that fit no benchmark
    ValueError).  A name may be a table file or ``BENCHMARK=FILE`` (see the module docstring), which
    needs no shared folder.  Each table is read once per process."""
    chosen = list(names) if names is not None else available_benchmarks(shared_data_dir(shared_dir), include_sparse)
    out: Dict[str, Problem] = {}
    for n in chosen:
        base, table = (n[: -len(TABLE_SUFFIX)], True) if n.endswith(TABLE_SUFFIX) else (n, False)
        out[n] = make_problem(_benchmark(base, shared_dir), table)
    return out


def is_table_file_name(name: str) -> bool:
    """True when the problem name ``name`` is a table file or ``BENCHMARK=FILE`` (``@table`` allowed)
    rather than the name of a shared table: ``BENCHMARK=...`` always, a bare path when the file exists."""
    base = name[: -len(TABLE_SUFFIX)] if name.endswith(TABLE_SUFFIX) else name
    like, _, path = base.rpartition("=")
    return bool(like) or Path(path).is_file()


def _benchmark(name: str, shared_dir: Union[str, Path, None]) -> ReplayBenchmark:
    """A known benchmark by name (from the shared folder), a table file, or ``BENCHMARK=FILE``."""
    like, _, path = name.rpartition("=")
    if is_table_file_name(name):
        return benchmark_from_file(path, like or None)
    return load_benchmark(name, shared_data_dir(shared_dir))


def problem_stats(problem: Problem, max_nodes: int = 3_000_000) -> Dict[str, Any]:
    """Table statistics of a problem: rows, unique configurations, failed, rows in the space,
    feasible space size (None when too large to enumerate), optimum, the recorded configurations in
    the space within 5 % and 10 % of the optimum, the evaluations random search needs on average
    to draw one within 10 % (``(N + 1) / (k + 1)`` draws without replacement, None when N is unknown)
    and :func:`neighbourhood_best`."""
    bench = problem.benchmark
    legal, feasible = bench.rows_in_space()
    table = problem.name.endswith(TABLE_SUFFIX)     # the space is the feasible recorded rows
    space = feasible if table else bench.feasible_count(max_nodes)
    near = bench.rows_within(1.10)
    return {"name": problem.name, "rows": bench.table.metadata.get("rows_read", len(bench.table)),
            "configs": len(bench.table), "failed": bench.table.failed_count, "legal": legal,
            "feasible_rows": feasible, "feasible_space": space,
            "optimum": problem.optimum, "table_optimum": bench.table_optimum, "sparse": problem.sparse,
            "expert_value": problem.expert_value, "table": table, "within_5pc": bench.rows_within(1.05),
            "within_10pc": near, "random_draws_10pc": None if space is None else (space + 1) / (near + 1),
            "neighbourhood_best": neighbourhood_best(bench)}


def neighbourhood_best(bench: ReplayBenchmark, max_changed: int = 3) -> Optional[float]:
    """The best ratio to the optimum among OK records in the space (known constraints satisfied) that differ
    from the optimum's configuration in 1 to ``max_changed`` search parameters (None when no record does): near 1 when the optimum sits in a
    recorded basin a model can climb, large when it is an isolated row."""
    best = bench.best_config
    ratios = [rec.value / bench.optimum for cfg, rec in _ok_records_in_space(bench)
              if 1 <= sum(cfg.get(n) != v for n, v in best.items()) <= max_changed]
    return min(ratios) if ratios else None


def _ok_records_in_space(bench: ReplayBenchmark) -> Iterator[Tuple[Dict[str, Any], Any]]:
    """(configuration, record) of every OK record whose configuration lies in the space (legal values,
    known constraints satisfied)."""
    space = bench.manipulator()
    for key, rec in bench.table.items():
        if rec.ok:
            cfg = bench.table.config_of(key)
            if space.is_valid(cfg) and space.is_feasible(cfg):
                yield cfg, rec


def main_effects(bench: ReplayBenchmark) -> List[Tuple[str, int, float, float, Any]]:
    """Per search parameter, over the OK records in the space: (name, distinct values, lowest and
    highest per-value median of value / optimum, the value with the lowest median).  A parameter
    whose medians lie close together has no main effect a model could follow; when every parameter
    is like that, the fast records are a thin tail rather than a region."""
    groups: Dict[str, Dict[Any, List[float]]] = {n: {} for n in bench.manipulator().names}
    for cfg, rec in _ok_records_in_space(bench):
        for n, by_value in groups.items():
            value = cfg[n]
            by_value.setdefault(tuple(value) if isinstance(value, list) else value, []).append(
                rec.value / bench.optimum)
    out = []
    for name, by_value in groups.items():
        medians = {v: statistics.median(r) for v, r in by_value.items()}
        if medians:
            lowest = min(medians, key=medians.__getitem__)
            out.append((name, len(medians), medians[lowest], max(medians.values()), lowest))
    return out


def _effect_lines(name: str, bench: ReplayBenchmark) -> List[str]:
    lines = [f"{name}: per-value median best/opt of each parameter (lowest .. highest; lowest at)"]
    for param, count, lo, hi, at in sorted(main_effects(bench), key=lambda e: -e[3] / e[2]):
        lines.append(f"  {param:<24} {count:>4} values  {lo:8.3f}x .. {hi:8.3f}x  at {at}")
    return lines


def _row(stats: Mapping[str, Any]) -> Tuple[str, ...]:
    fs = stats["feasible_space"]
    ev = stats["expert_value"]
    return (stats["name"], str(stats["rows"]), str(stats["configs"]), str(stats["failed"]),
            str(stats["feasible_rows"]), "?" if fs is None else str(fs), f"{stats['optimum']:.6g}",
            "-" if ev is None else f"{ev:.6g}",
            "table" if stats.get("table") else "sparse" if stats["sparse"] else "exhaustive",
            str(stats["within_5pc"]), str(stats["within_10pc"]),
            "?" if stats["random_draws_10pc"] is None else f"{stats['random_draws_10pc']:.0f}",
            "-" if stats["neighbourhood_best"] is None else f"{stats['neighbourhood_best']:.3f}x")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print the statistics table of every available replay problem."""
    ap = argparse.ArgumentParser(description="statistics of the recorded replay tables")
    ap.add_argument("--shared", default=None, metavar="DIR",
                    help="shared data folder holding data/gpu_cache and data/taco_cache (default: "
                         "$TUNERLIB_SHARED_DIR)")
    ap.add_argument("names", nargs="*", help="problem names, table files or BENCHMARK=FILE (default: all "
                                             "available)")
    ap.add_argument("--effects", action="store_true",
                    help="also print each parameter's main effect: the spread of its per-value medians")
    args = ap.parse_args(argv)
    rows: List[Tuple[str, ...]] = [("problem", "rows", "configs", "failed", "rows in space", "feasible space", "optimum (s)",
             "expert (s)", "kind", "<=1.05x", "<=1.10x", "random to 1.10x",
             "best <=3 params from opt")]
    try:
        problems = replay_problems(args.shared, args.names or None)
        rows += [_row(problem_stats(p)) for p in problems.values()]
    except (KeyError, FileNotFoundError, ValueError) as exc:
        print(f"replay_problems: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    for name, problem in (problems.items() if args.effects else ()):
        print("\n".join(_effect_lines(name, problem.benchmark)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
