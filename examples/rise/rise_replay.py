"""``--backend replay``: recorded GPU measurements instead of running kernels (no GPU needed).

A thin layer over :mod:`tunerlib.replay` (the oracle) and :mod:`tunerlib.replay.recorded` (the
recorded benchmarks and their readers); nothing is duplicated here:

* ``--kernel K`` alone replays the RISE kernel's RTX Titan table
  (``<shared>/data/gpu_cache/rise_baco/K_rtxtitan.csv.gz``, benchmark ``rise_K``) with the
  space and known constraints of :data:`tunerlib.replay.recorded.BENCHMARKS`; the shared data
  folder is ``--shared-dir`` or ``$TUNERLIB_SHARED_DIR``;
* ``--benchmark NAME`` replays any recorded benchmark, e.g. the exhaustive Kernel Tuner caches
  ``gemm_rtxtitan``, ``conv_a100``, ``dedisp_a100``, ``pnpoly_rtxtitan`` (with their constraints);
* ``--data FILE`` replays a table file recorded on any GPU, under any name, columns in any order:
  with ``--kernel K`` (or ``--benchmark NAME``) in K's space (known constraints, expert and
  default); without, in the space of the kernel whose parameters the file holds
  (:func:`tunerlib.replay.recorded.benchmark_from_file`).

Outcomes (:func:`tunerlib.replay.replay_result`): OK with the recorded time in seconds (the tables
record ms; the readers convert), failed -> INFEASIBLE (``extra["reason"]``), absent -> INFEASIBLE
with ``extra["not_measured"] = True``, counted apart in :class:`tunerlib.replay.ReplayStats` together with the simulated tuning time
(the recorded cost of every replayed measurement, ``extra["simulated_s"]``).  A sparse table (a
sample of its space: RISE mm, asum, scal, harris, and any file given with ``--data``) is searched
in its recorded configurations only unless ``--whole-space``; near-exhaustive ones in the whole space.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from tunerlib import Result, UsageError
from tunerlib.parameters import ConfigurationManipulator
from tunerlib.replay import ReplayBenchmark, ReplayStats, replay_result, searched_space
from tunerlib.replay.recorded import BENCHMARKS, benchmark_from_file, load_benchmark, shared_folder


def load(kernel: Optional[str], data: Optional[str], benchmark: Optional[str],
         shared_dir: Optional[str]) -> ReplayBenchmark:
    """The table to replay: ``--data`` in the space of ``--benchmark`` or ``rise_<kernel>`` (found
    from the file's columns when neither is given), else the table of ``--benchmark`` or
    ``rise_<kernel>`` (``kernel`` None: mm).  Raises :class:`~tunerlib.UsageError` with one line
    when it is unknown, missing or does not fit the kernel."""
    try:
        if data:
            return benchmark_from_file(data, benchmark or (f"rise_{kernel}" if kernel else None))
        name = benchmark or f"rise_{kernel or 'mm'}"
        if name not in BENCHMARKS:
            raise UsageError(f"--benchmark {name!r} is unknown; use one of {', '.join(BENCHMARKS)}")
        root = shared_folder(shared_dir or None, "--shared-dir DIR")
        path = root / BENCHMARKS[name].path
        if not path.is_file():
            raise UsageError(f"replay table {path} not found; pass --shared-dir (the folder holding "
                             "data/gpu_cache) or --data FILE")
        return load_benchmark(name, root)
    except (KeyError, FileNotFoundError, ValueError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(str(exc.args[0]) if exc.args else str(exc)) from None


class ReplayBackend:
    """Answers configurations from a :class:`~tunerlib.replay.ReplayBenchmark` and counts them."""

    def __init__(self, benchmark: ReplayBenchmark, table_space: bool = False, whole_space: bool = False) -> None:
        self.benchmark = benchmark
        self.table_space, self.space_note = searched_space(benchmark, table_space, whole_space)
        self.stats = ReplayStats()

    @property
    def name(self) -> str:
        """The benchmark's name (``rise_mm``, ``gemm_rtxtitan`` ...)."""
        return self.benchmark.name

    def manipulator(self) -> ConfigurationManipulator:
        """The recorded benchmark's space with its known constraints (a new one per call); only
        the recorded configurations with ``--table-space``."""
        return self.benchmark.manipulator(self.table_space)

    def evaluate(self, cfg: Mapping[str, Any]) -> Result:
        """Replay one configuration; called once per measurement (updates :attr:`stats`)."""
        result = replay_result(self.benchmark, cfg)
        self.stats.count(result)
        return result

    def recorded(self, cfg: Optional[Mapping[str, Any]]) -> Tuple[Optional[float], Optional[str]]:
        """(recorded seconds, None) or (None, why not: "not documented" / "failed" / "not measured")."""
        if cfg is None:
            return None, "not documented for this benchmark"
        return self.benchmark.recorded(cfg)

    def comparison(self, best: Optional[Mapping[str, Any]]) -> List[Tuple[str, Optional[float], Optional[str],
                                                                           Optional[Dict[str, Any]]]]:
        """Rows (name, recorded seconds or None, why not, configuration) for default, expert and best
        (``best`` None: no configuration of the run succeeded)."""
        rows = []
        for name, cfg in (("default", self.benchmark.default), ("expert", self.benchmark.expert)):
            value, why = self.recorded(cfg)
            rows.append((name, value, why, cfg))
        if best is None:
            rows.append(("tunerlib best", None, "no successful measurement", None))
        else:
            value, why = self.recorded(best)
            rows.append(("tunerlib best", value, why, dict(best)))
        return rows

    def summary_lines(self) -> List[str]:
        """Evaluations by outcome, simulated tuning time and the table's optimum."""
        return [self.stats.render(), self.space_note,
                f"table optimum in the space: {self.benchmark.optimum:.6g} s ({self.benchmark.spec.description})"]
