""":class:`ReplayInterface`, a MeasurementInterface that "measures" by looking configurations up in
a :class:`~tunerlib.replay.benchmark.ReplayBenchmark`, :func:`replay_result` and :class:`ReplayStats`.

Outcome of :meth:`ReplayInterface.run` for a configuration:

* recorded and OK  -> ``Result(time=<recorded seconds>, energy=<recorded energy or None>,
  extra={"simulated_s": s})`` (every recorded metric, so ``--objectives time,energy`` works);
* recorded, failed -> ``Result(state="INFEASIBLE", extra={"reason": "<why>", "simulated_s": s})``
  (a hidden constraint: compile or launch failure, timeout);
* absent           -> ``Result(state="INFEASIBLE", extra={"not_measured": True, "reason": "not
  measured", "simulated_s": 0.0})``.

"Not measured" is a distinct outcome: techniques see it as infeasible (tunerlib's result states are
fixed), and reports count it apart through ``extra["not_measured"]`` (:class:`ReplayStats` counts it
in-process).  ``time`` is in seconds, as every measured backend's: the readers convert the unit
the file records (milliseconds by convention), so the database, the summary and ``--summary-json``
hold seconds.
``simulated_s`` is the time measuring that configuration took when the table was recorded (see the
readers), so the sum over a run is the simulated tuning time.

Build it with a benchmark already loaded (``ReplayInterface(options, benchmark=...)``), or let
:meth:`ReplayInterface.load_benchmark` find the table from the options: here ``--data FILE``, a
measurement CSV (:func:`~tunerlib.replay.csvtable.read_csv_table`) replayed in the space its values
span (:func:`~tunerlib.replay.benchmark.benchmark_from_table`).  Subclasses that know a catalogue
of recorded benchmarks override :meth:`~ReplayInterface.load_benchmark` (``tunerlib.replay.recorded``
does, with ``--benchmark NAME``).

No ``from __future__ import annotations`` here: argparse-dataclass reads the real type hints.
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

from ..errors import UsageError
from ..script.interface import MeasurementInterface
from ..objectives import MinimizeTime, Objective
from ..options import TuningOptions
from ..parameters import ConfigurationManipulator
from ..result import DesiredResult, Input, Result
from .benchmark import ReplayBenchmark, benchmark_from_table
from .csvtable import read_csv_table

__all__ = ["NOT_MEASURED_REASON", "TABLE_SPACE_HELP", "ReplayInterface", "ReplayOptions", "ReplayStats",
           "replay_result"]
NOT_MEASURED_REASON = "not measured"
#: help of ``--table-space`` (the replay interfaces and the examples' replay backends)
TABLE_SPACE_HELP = ("search only the recorded configurations (as Kernel Tuner's simulation mode does); "
                    "default: the whole space, where configurations the table lacks are 'not measured'")


@dataclass
class ReplayOptions(TuningOptions):
    """Options of a replay tuning run (recorded measurements instead of real ones)."""

    data: Optional[str] = field(default=None, metadata={
        "help": "measurement CSV to replay (.csv[.gz]: one row per configuration, a compute_time "
                "column, every column but the known metadata ones a parameter); the space is the "
                "one its recorded values span, without known constraints"})
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
    energy = record.extra.get("energy")
    return Result(time=record.value, energy=float(energy) if isinstance(energy, (int, float)) else None,
                  extra={"simulated_s": record.simulated_s})


class ReplayInterface(MeasurementInterface):
    """Replays a recorded table: search space and results from a :class:`ReplayBenchmark`.

    Build it with ``ReplayInterface(options, benchmark=...)`` with a benchmark already loaded, or
    ``ReplayInterface(options)`` (what ``main()`` does): :meth:`load_benchmark` then finds the
    table from the options.  ``stats`` accumulates :class:`ReplayStats`.
    """

    Options = ReplayOptions

    def __init__(self, options: Optional[TuningOptions] = None,
                 benchmark: Optional[ReplayBenchmark] = None) -> None:
        super().__init__(options)
        self.benchmark = benchmark if benchmark is not None else self.load_benchmark(self.options)
        self.stats = ReplayStats()

    @classmethod
    def load_benchmark(cls, options: TuningOptions) -> ReplayBenchmark:
        """Called once by the constructor when no benchmark is given: the table of ``--data`` (a
        measurement CSV) in the space its values span.  Override it to replay known benchmarks.
        Raises :class:`~tunerlib.UsageError` (one line) when there is no usable table."""
        data = getattr(options, "data", None)
        if not data:
            raise UsageError(f"{cls.__name__} needs a table: pass --data FILE (a measurement CSV)")
        if not Path(data).is_file():
            raise UsageError(f"replay table {data} not found; give an existing .csv or .csv.gz file")
        if ".csv" not in Path(data).suffixes:
            raise UsageError(f"--data {data}: {cls.__name__} reads measurement CSVs (.csv or .csv.gz); a table "
                             "of another format needs an interface that knows its reader")
        try:
            return benchmark_from_table(read_csv_table(data))
        except (KeyError, ValueError) as exc:
            raise UsageError(str(exc.args[0]) if exc.args else str(exc)) from None

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
            print(f"{self.stats.render()}; best {best} s, table optimum {self.benchmark.optimum:.6g} s")

