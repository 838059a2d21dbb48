""":class:`ReplayInterface`, a MeasurementInterface that "measures" by looking configurations up in
a :class:`~tunerlib.replay.benchmark.ReplayBenchmark` (the ``--backend replay`` of the
RISE/TACO/Kernel Tuner examples), :func:`replay_result` and :class:`ReplayStats`.  The oracle is
in :mod:`.benchmark` (re-exported here with :func:`load_benchmark`), table files are matched to
their kernel's space in :mod:`.files` (:func:`benchmark_from_file`).

Outcome of :meth:`ReplayInterface.run` for a configuration:

* recorded and OK  -> ``Result(time=<recorded ms>, extra={"simulated_s": s})``;
* recorded, failed -> ``Result(state="INFEASIBLE", extra={"reason": "<why>", "simulated_s": s})``
  (a hidden constraint: compile or launch failure, timeout);
* absent           -> ``Result(state="INFEASIBLE", extra={"not_measured": True, "reason": "not
  measured", "simulated_s": 0.0})``.

"Not measured" is a distinct outcome: techniques see it as infeasible (tunerlib's result states are
fixed), and reports count it apart through ``extra["not_measured"]`` (:class:`ReplayStats` counts it
in-process).  ``time`` is in the table's unit, milliseconds for every shipped table.
``simulated_s`` is the time measuring that configuration took when the table was recorded (see the
readers), so the sum over a run is the simulated tuning time.

Command line (this module is runnable)::

    python -m tunerlib.replay.interface --benchmark rise_kmeans --test-limit 60 --seed 1
    python -m tunerlib.replay.interface --data ../shared/data/gpu_cache/rise_baco/kmeans_rtxtitan.csv.gz
    python -m tunerlib.replay.interface --benchmark rise_kmeans --data OTHER_GPU.csv.gz

No ``from __future__ import annotations`` here: argparse-dataclass reads the real type hints.
"""
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional

from ..errors import UsageError
from ..interface import MeasurementInterface
from ..objectives import MinimizeTime, Objective
from ..options import TuningOptions
from ..parameters import ConfigurationManipulator
from ..result import DesiredResult, Input, Result
from .benchmark import ReplayBenchmark, load_benchmark
from .files import benchmark_from_file
from .spaces import BENCHMARKS

__all__ = ["NOT_MEASURED_REASON", "TABLE_SPACE_HELP", "ReplayBenchmark", "ReplayInterface", "ReplayOptions",
           "ReplayStats", "benchmark_from_file", "load_benchmark", "replay_result"]
NOT_MEASURED_REASON = "not measured"
#: help of ``--table-space`` (the replay interface and the examples' replay backends)
TABLE_SPACE_HELP = ("search only the recorded configurations (as Kernel Tuner's simulation mode does); "
                    "default: the whole space, where configurations the table lacks are 'not measured'")


@dataclass
class ReplayOptions(TuningOptions):
    """Options of a replay tuning run (recorded measurements instead of real ones)."""

    benchmark: Optional[str] = field(default=None, metadata={
        "help": f"recorded benchmark to replay: {', '.join(BENCHMARKS)}; with --data, the benchmark "
                "whose space the file's table is replayed in"})
    data: Optional[str] = field(default=None, metadata={
        "help": "recorded table file to replay (Kernel Tuner cache .json[.gz], RISE or TACO .csv[.gz], "
                "from any machine and under any name); its kernel's space and constraints are found "
                "from its columns, or name them with --benchmark"})
    shared_dir: Optional[str] = field(default=None, metadata={
        "help": "shared data folder holding data/gpu_cache and data/taco_cache "
                "(default: $TUNERLIB_SHARED_DIR)"})
    table_space: bool = field(default=False, metadata={"help": TABLE_SPACE_HELP})


@dataclass
class ReplayStats:
    """Counts of one interface's replayed measurements (updated by every :meth:`ReplayInterface.run`
    in this process; with ``--parallelism`` > 1 read ``Result.extra`` from the database instead)."""

    ok: int = 0
    failed: int = 0
    not_measured: int = 0
    simulated_s: float = 0.0

    @property
    def evaluations(self) -> int:
        """Replayed measurements in all."""
        return self.ok + self.failed + self.not_measured

    def count(self, result: Result) -> None:
        """Add one replayed measurement (a result of :func:`replay_result`)."""
        self.simulated_s += float(result.extra.get("simulated_s", 0.0))
        if result.state == "OK":
            self.ok += 1
        elif result.extra.get("not_measured"):
            self.not_measured += 1
        else:
            self.failed += 1

    def render(self) -> str:
        """One line for a report."""
        return (f"replay: {self.evaluations} evaluations ({self.ok} ok, {self.failed} failed, "
                f"{self.not_measured} not measured); simulated tuning time {self.simulated_s:.1f} s")


def replay_result(benchmark: ReplayBenchmark, config: Mapping[str, Any]) -> Result:
    """The :class:`~tunerlib.Result` replaying ``config`` (see the module docstring)."""
    record = benchmark.lookup(config)
    if record is None:
        return Result(state="INFEASIBLE", extra={"not_measured": True, "reason": NOT_MEASURED_REASON,
                                                  "simulated_s": 0.0})
    if record.value is None:
        return Result(state="INFEASIBLE", extra={"reason": record.reason or "failed",
                                                  "simulated_s": record.simulated_s})
    return Result(time=record.value, extra={"simulated_s": record.simulated_s})


class ReplayInterface(MeasurementInterface):
    """Replays a recorded table: search space from :mod:`tunerlib.replay.spaces`, results from lookups.

    Build it with ``ReplayInterface(options)`` (``options.benchmark`` or ``options.data`` names the
    table; this is what ``main()`` does) or ``ReplayInterface(options, benchmark=...)`` with a
    :class:`ReplayBenchmark` already loaded.  ``stats`` accumulates :class:`ReplayStats`.
    """

    Options = ReplayOptions

    def __init__(self, options: Optional[TuningOptions] = None,
                 benchmark: Optional[ReplayBenchmark] = None) -> None:
        super().__init__(options)
        self.benchmark = benchmark if benchmark is not None else self._load(self.options)
        self.stats = ReplayStats()

    @staticmethod
    def _load(options: TuningOptions) -> ReplayBenchmark:
        data = getattr(options, "data", None)
        name = getattr(options, "benchmark", None)
        try:
            if data:
                return benchmark_from_file(data, name)
            if name:
                return load_benchmark(name, getattr(options, "shared_dir", None))
        except (KeyError, FileNotFoundError, ValueError) as exc:
            raise UsageError(str(exc.args[0]) if exc.args else str(exc)) from None
        raise UsageError("ReplayInterface needs a table: pass --benchmark NAME "
                         f"(one of {', '.join(BENCHMARKS)}) or --data FILE")

    def program_name(self) -> str:
        """``replay-<benchmark>``: runs of different tables are kept apart."""
        return f"replay-{self.benchmark.name}"

    def manipulator(self) -> ConfigurationManipulator:
        """The benchmark's search space with its known constraints (a new one per call), restricted
        to the recorded configurations with ``--table-space``."""
        return self.benchmark.manipulator(bool(getattr(self.options, "table_space", False)))

    def objective(self) -> Objective:
        """Minimise the recorded time."""
        return MinimizeTime()

    def run(self, desired_result: DesiredResult, input: Input, limit: Optional[float]) -> Result:
        """Called once per measurement: look the configuration up (``limit`` is ignored)."""
        result = replay_result(self.benchmark, desired_result.configuration.data)
        self.stats.count(result)
        return result

    def save_final_config(self, config: Dict[str, Any]) -> None:
        """Called once at the end: writes ``--final-config`` and prints the replay statistics
        (unless ``--quiet``) with the table's optimum for comparison."""
        super().save_final_config(config)
        if not getattr(self.options, "quiet", False):
            rec = self.benchmark.lookup(config)
            best = "n/a" if rec is None or rec.value is None else f"{rec.value:.6g}"
            print(f"{self.stats.render()}; best {best} ms, table optimum {self.benchmark.optimum:.6g} ms")


if __name__ == "__main__":  # pragma: no cover - exercised through main() in the tests
    sys.exit(ReplayInterface.main())
