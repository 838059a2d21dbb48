"""The replay oracle: :class:`ReplayBenchmark` (a benchmark's search space joined with its recorded
table; :func:`load_benchmark`, :func:`benchmark_from_file`) and :class:`ReplayInterface`, a
MeasurementInterface that "measures" by looking configurations up (the ``--backend replay`` of the
RISE/TACO/Kernel Tuner examples).

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

No ``from __future__ import annotations`` here: argparse-dataclass reads the real type hints.
"""
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from ..errors import UsageError
from ..interface import MeasurementInterface
from ..objectives import MinimizeTime, Objective
from ..options import TuningOptions
from ..parameters import ConfigurationManipulator, TableConstraint, parse_expression
from ..result import DesiredResult, Input, Result
from .kerneltuner import substitute_constants
from .spaces import (BENCHMARKS, SHARED_ENV, BenchmarkSpec, ParamDef, count_feasible, default_shared_dir,
                     load_table, rows_in_space)
from .table import Record, RecordedTable, canonical_value, open_text

NOT_MEASURED_REASON = "not measured"
#: help of ``--table-space`` (the replay interface and the examples' replay backends)
TABLE_SPACE_HELP = ("search only the recorded configurations (as Kernel Tuner's simulation mode does); "
                    "default: the whole space, where configurations the table lacks are 'not measured'")


# --------------------------------------------------------------------------- the replay oracle
def load_benchmark(name: str, shared_dir: Union[str, Path, None] = None) -> "ReplayBenchmark":
    """The :class:`ReplayBenchmark` called ``name`` (table read once per process).

    Raises KeyError for an unknown name and FileNotFoundError when its table is missing.
    """
    if name not in BENCHMARKS:
        raise KeyError(f"unknown replay benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    spec = BENCHMARKS[name]
    root = Path(shared_dir) if shared_dir is not None else default_shared_dir()
    path = root / spec.path
    if not path.is_file():
        raise FileNotFoundError(f"replay table {path} not found; pass the shared data folder "
                                f"(shared_dir= or ${SHARED_ENV})")
    return ReplayBenchmark(spec, load_table(spec, path))


def benchmark_from_file(path: Union[str, Path]) -> "ReplayBenchmark":
    """A :class:`ReplayBenchmark` for a table file: the known spec whose path ends like ``path``,
    else a generic one (parameters from the recorded values, no known constraints)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"replay table {path} not found; give an existing .json[.gz] or .csv[.gz]")
    tail = path.resolve().parts[-2:]
    for spec in BENCHMARKS.values():
        if tuple(Path(spec.path).parts[-2:]) == tail:
            return ReplayBenchmark(spec, load_table(spec, path))
    family = "kerneltuner" if ".json" in path.suffixes else (
        "taco" if "permutation" in _header(path) else "rise")
    spec = BenchmarkSpec(path.name.split(".")[0], family, str(path),
                         description=f"recorded table {path.name} (no known constraints)")
    table = load_table(spec, path)
    if family != "kerneltuner":  # parameters from the recorded values; single-valued ones are constants
        spec = BenchmarkSpec(spec.name, family, spec.path, params=_params_from_values(table),
                             description=spec.description)
        constants = {n: v[0] for n, v in table.value_sets().items() if len(v) == 1}
        table = RecordedTable(table.name, table.params, table.records, constants, table.source, table.metadata)
    return ReplayBenchmark(spec, table)


def _header(path: Path) -> List[str]:
    with open_text(path) as fh:
        return fh.readline().strip().split(",")


def _params_from_values(table: RecordedTable) -> Tuple[ParamDef, ...]:
    out = []
    for name, values in table.value_sets().items():
        if values and isinstance(values[0], tuple):
            out.append(ParamDef(name, tuple(range(len(values[0]))), "permutation"))
        elif len(values) > 1:
            out.append(ParamDef(name, tuple(values), "ordinal" if not isinstance(values[0], str) else "enum"))
    return tuple(out)


# --------------------------------------------------------------------------- the joined benchmark
class ReplayBenchmark:
    """A benchmark spec joined with its recorded table: what replay tuners and benchmarks use.

    :meth:`manipulator` builds a fresh search space; :meth:`lookup` / :meth:`status` /
    :meth:`evaluate` answer one configuration each (dict lookups).
    """

    def __init__(self, spec: BenchmarkSpec, table: RecordedTable) -> None:
        self.spec, self.table = spec, table
        self.name = spec.name
        self._params = spec.params if spec.params is not None else self._kt_params()
        self._constraints = self._resolve_constraints()
        self._best: Optional[Tuple[float, Dict[str, Any]]] = None

    def _kt_params(self) -> Tuple[ParamDef, ...]:
        tune = self.table.metadata.get("tune_params", {})
        return tuple(ParamDef(n, tuple(canonical_value(v) for v in tune[n]),
                              "enum" if n in self.spec.categorical else "ordinal")
                     for n in self.table.params if n not in self.table.constants)

    def _resolve_constraints(self) -> List[str]:
        out = []
        for text in self.spec.constraints:
            expr_text = substitute_constants(text, self.table.constants)
            expr = parse_expression(expr_text)
            if not expr.names:
                if not expr.evaluate({}):
                    raise ValueError(f"benchmark {self.name!r}: constraint {text!r} is false for the "
                                     f"constants {self.table.constants}")
                continue
            out.append(expr_text)
        return out

    # ---- space ----------------------------------------------------------------
    @property
    def constraints(self) -> List[str]:
        """Known constraints over the search parameters (constants substituted)."""
        return list(self._constraints)

    @property
    def param_defs(self) -> Tuple[ParamDef, ...]:
        """The search parameters' definitions."""
        return self._params

    def manipulator(self, table_space: bool = False) -> ConfigurationManipulator:
        """A new search space (parameters + known constraints); called once per tuning run.

        ``table_space=True`` restricts it to the recorded configurations (OK and failed, those
        with legal values) by a :class:`~tunerlib.parameters.TableConstraint`, as Kernel Tuner's
        simulation mode does: on a sparsely measured table every proposal then has an outcome.
        Raises :class:`~tunerlib.UsageError` (a ValueError) when no recorded row fits the space.
        """
        m = ConfigurationManipulator([p.build() for p in self._params], self._constraints)
        if table_space:
            names = m.names
            rows = [[cfg[n] for n in names] for cfg in self.recorded_configs()
                    if all(n in cfg and m.parameter(n).is_valid(cfg[n]) for n in names)]
            if not rows:
                raise UsageError(f"benchmark {self.name!r}: no recorded configuration has legal values "
                                 "for the search space, so a table space would be empty")
            m.add_constraint(TableConstraint(names, rows, name=f"recorded in {self.name}"))
        return m

    # ---- lookups ----------------------------------------------------------------
    def lookup(self, config: Mapping[str, Any]) -> Optional[Record]:
        """The record of ``config`` or None when it was not measured."""
        return self.table.lookup(config)

    def status(self, config: Mapping[str, Any]) -> str:
        """``"ok"``, ``"failed"`` or ``"not_measured"``."""
        rec = self.table.lookup(config)
        return "not_measured" if rec is None else ("ok" if rec.ok else "failed")

    def evaluate(self, config: Mapping[str, Any]) -> Optional[float]:
        """Recorded objective (ms) of ``config``; None when failed or not measured."""
        rec = self.table.lookup(config)
        return None if rec is None else rec.value

    def _in_space_best(self) -> Tuple[float, Dict[str, Any]]:
        if self._best is None:
            m = self.manipulator()
            ranked = sorted(((rec.value, i, key) for i, (key, rec) in enumerate(self.table.items())
                             if rec.value is not None), key=lambda t: (t[0], t[1]))
            for value, _, key in ranked:
                cfg = self.table.config_of(key)
                if m.is_valid(cfg) and m.is_feasible(cfg):
                    self._best = (float(value), cfg)
                    break
            else:
                raise ValueError(f"benchmark {self.name!r}: no successful recorded configuration lies in "
                                 "the search space; check the space definition")
        return self._best

    @property
    def optimum(self) -> float:
        """Minimum recorded objective among OK records that lie in the search space (legal values,
        known constraints satisfied).  Equals :attr:`table_optimum` except for rise_scal, whose
        table holds constraint-violating rows with bogus near-zero times."""
        return self._in_space_best()[0]

    @property
    def table_optimum(self) -> float:
        """Minimum recorded objective among all OK records, in the space or not."""
        return self.table.optimum

    @property
    def best_config(self) -> Dict[str, Any]:
        """A configuration achieving :attr:`optimum` (search parameters only; first in file order)."""
        return dict(self._in_space_best()[1])

    @property
    def expert(self) -> Optional[Dict[str, Any]]:
        """The expert configuration of ``benchmark-spaces.md`` (None when none is given)."""
        return dict(self.spec.expert) if self.spec.expert else None

    @property
    def default(self) -> Optional[Dict[str, Any]]:
        """The default configuration of ``benchmark-spaces.md`` (None when none is given)."""
        return dict(self.spec.default) if self.spec.default else None

    def recorded_configs(self, ok_only: bool = False) -> Iterable[Dict[str, Any]]:
        """Configurations (search parameters only) of the table's records, in file order."""
        for key, rec in self.table.items():
            if rec.ok or not ok_only:
                yield self.table.config_of(key)

    def rows_in_space(self, ok_only: bool = False) -> Tuple[int, int]:
        """(records whose values are legal, of those the ones satisfying the known constraints)."""
        return rows_in_space(self.manipulator(), self.recorded_configs(ok_only))

    def feasible_count(self, max_nodes: int = 3_000_000) -> Optional[int]:
        """Number of configurations of the space satisfying the known constraints (exact, by
        enumeration per constraint group); None when enumeration would exceed ``max_nodes``."""
        return count_feasible(self.manipulator(), max_nodes)

    def __repr__(self) -> str:
        return f"ReplayBenchmark({self.name!r}, {self.table!r})"


# --------------------------------------------------------------------------- the interface


@dataclass
class ReplayOptions(TuningOptions):
    """Options of a replay tuning run (recorded measurements instead of real ones)."""

    benchmark: Optional[str] = field(default=None, metadata={
        "help": f"recorded benchmark to replay: {', '.join(BENCHMARKS)}"})
    data: Optional[str] = field(default=None, metadata={
        "help": "recorded table file to replay instead of --benchmark (Kernel Tuner cache .json[.gz], "
                "RISE or TACO .csv[.gz]); known files get their constraints"})
    shared_dir: Optional[str] = field(default=None, metadata={
        "help": "shared data folder holding data/gpu_cache and data/taco_cache "
                "(default: $TUNERLIB_SHARED_DIR or the 'shared' folder beside the repository)"})
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
                return benchmark_from_file(data)
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
