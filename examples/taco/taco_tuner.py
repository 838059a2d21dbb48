#!/usr/bin/env python3
"""Tune TACO sparse-tensor schedules with tunerlib (the BaCO paper's five TACO kernels).

Pick a kernel (``--kernel spmv|spmm|sddmm|ttv|mttkrp``) and a backend:

* ``builtin`` (default): tunerlib's own TACO-style code generator (``taco_codegen.py``) writes C +
  OpenMP for the schedule; it is compiled with the system C compiler, loaded with ctypes, run once
  and checked against scipy/numpy, then timed in this process (min of k runs);
* ``taco --taco PATH``: the real TACO command-line tool generates the kernel from the same
  schedule (``taco_cli.py``); the same compile/verify/time harness runs it;
* ``replay``: recorded measurements of CATBench's variant of these spaces (a 128-thread CPU,
  ``$TUNERLIB_SHARED_DIR/data/taco_cache``, or ``--data PATH``: that folder, the shared folder or a
  table from another machine) through ``tunerlib.replay`` and ``tunerlib.replay.recorded``.  The
  tables are sparse samples, so only their recorded configurations are searched unless
  ``--whole-space`` (there, configurations absent from the table are INFEASIBLE and counted as
  "not measured").

Inputs: ``--matrix FILE.mtx[.gz]`` (spmv, spmm, sddmm), ``--tensor FILE.tns`` (ttv, mttkrp), or
random sparse inputs (``--rows/--cols/--dims/--density/--input-seed``), the default.  Examples::

    python examples/taco/taco_tuner.py --kernel spmv --test-limit 60
    python examples/taco/taco_tuner.py --kernel sddmm --matrix ../shared/data/matrices/add20.mtx
    python examples/taco/taco_tuner.py --kernel ttv --backend replay --test-limit 60 --seed 1

The space, constraints, default and expert configurations are in ``taco_spaces.py``; at the end the
best configuration is re-timed next to the default and expert ones (interleaved rounds) and the
speed-ups are printed.
"""
# No `from __future__ import annotations`: argparse-dataclass needs the real type hints.
import math
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taco_inputs  # noqa: E402  (sibling modules)
import taco_spaces  # noqa: E402
from taco_backends import Evaluator  # noqa: E402
from taco_harness import Compiler, HarnessError, TimingPolicy, bind, retime_kernels  # noqa: E402
from taco_kernels import KERNEL_NAMES, KERNELS  # noqa: E402
from taco_problem import Problem, build_problem  # noqa: E402
from taco_replay import ReplayBackend  # noqa: E402
from taco_cli import TacoCli, TacoFailure  # noqa: E402

from tunerlib import MeasurementInterface, Result, RetimedBest, TuningOptions, UsageError  # noqa: E402
from tunerlib.measure import BEST, Row, format_stronger as stronger_line, format_table  # noqa: E402
from tunerlib.parameters import ConfigurationManipulator  # noqa: E402

#: random-input defaults per kernel (one evaluation of the default schedule well under a second)
DEFAULT_SIZES: Dict[str, Dict[str, Any]] = {
    "spmv": dict(rows=20000, cols=20000, density=0.002),
    "spmm": dict(rows=4000, cols=4000, density=0.002, dense=64),
    "sddmm": dict(rows=4000, cols=4000, density=0.002, dense=64),
    "ttv": dict(dims=[1000, 1000, 1000], density=0.0001),
    "mttkrp": dict(dims=[1000, 1000, 1000], density=0.0001, dense=32),
}


class OptionError(UsageError):
    """A bad TACO-tuner option (one-line message)."""


@dataclass
class TacoOptions(TuningOptions):
    """Tune the schedule of a TACO sparse kernel (split sizes, loop order, OpenMP scheduling)."""

    kernel: str = field(default="spmv", metadata={
        "choices": list(KERNEL_NAMES),
        "help": "kernel: spmv y=A*x, spmm A=B*C, sddmm A=B.*(C*D), ttv A=B*c (3-tensor), mttkrp "
                "A=B_(1)(C kr D) (3-tensor); default spmv"})
    backend: str = field(default="builtin", metadata={
        "choices": ["builtin", "taco", "replay"],
        "help": "builtin: tunerlib's C+OpenMP generator (default); taco: the TACO CLI given by --taco "
                "generates the kernel; replay: recorded CATBench measurements (no compiling)"})
    taco: Optional[str] = field(default=None, metadata={
        "metavar": "PATH", "help": "TACO command-line executable (tensor-compiler/taco build/bin/taco), "
                                   "for --backend taco"})
    data: Optional[str] = field(default=None, metadata={
        "metavar": "PATH", "help": "replay data: a taco_cache folder, the shared folder holding "
                                   "data/taco_cache, or one table file of the kernel recorded on any "
                                   "machine, under any name, columns in any order (default: "
                                   "$TUNERLIB_SHARED_DIR)"})
    table_space: bool = field(default=False, metadata={
        "help": "replay: search only the table's recorded configurations (as Kernel Tuner's simulation mode "
                "does); the default, since the CATBench tables are sparse samples of their spaces"})
    whole_space: bool = field(default=False, metadata={
        "help": "replay: search the kernel's whole space instead; configurations the table lacks (nearly "
                "all of them) are INFEASIBLE 'not measured'"})
    matrix: Optional[str] = field(default=None, metadata={
        "metavar": "FILE", "help": "Matrix Market input .mtx or .mtx.gz (spmv, spmm, sddmm) instead "
                                   "of a random matrix"})
    tensor: Optional[str] = field(default=None, metadata={
        "metavar": "FILE", "help": "FROSTT .tns 3-tensor input (ttv, mttkrp; lines 'i j k value', "
                                   "1-based) instead of a random tensor"})
    rows: Optional[int] = field(default=None, metadata={
        "help": "random matrix rows (default 20000 for spmv, 4000 for spmm/sddmm)"})
    cols: Optional[int] = field(default=None, metadata={"help": "random matrix columns (default = rows)"})
    dims: List[int] = field(default_factory=list, metadata={
        "nargs": 3, "metavar": ("I", "J", "K"), "help": "random 3-tensor dimensions (default 1000 1000 1000)"})
    density: Optional[float] = field(default=None, metadata={
        "help": "fraction of nonzeros of the random input (default 0.002 matrices, 0.0001 tensors)"})
    dense: Optional[int] = field(default=None, metadata={
        "help": "dense size: spmm's columns of C, sddmm's inner dimension, mttkrp's rank "
                "(default 64, 64, 32)"})
    input_seed: int = field(default=0, metadata={
        "help": "seed of the random sparse input and of the dense operands (default 0)"})
    strict_orders: bool = field(default=False, metadata={
        "help": "also add the generator's loop-order rules as known constraints (not in the BaCO "
                "table; without it ttv/mttkrp orders it cannot generate are INFEASIBLE)"})
    cc: str = field(default="gcc", metadata={"help": "C compiler (default gcc)"})
    cflags: str = field(default="", metadata={
        "help": "extra compiler flags, e.g. '-march=native' (added to -O3 -fopenmp -shared -fPIC)"})
    run_timeout: float = field(default=2.0, metadata={
        "metavar": "SECONDS", "help": "stop a kernel run after this long: TIMEOUT (default 2)"})
    compile_timeout: float = field(default=120.0, metadata={
        "metavar": "SECONDS", "help": "C compiler time limit; over it: INFEASIBLE (default 120)"})
    taco_timeout: float = field(default=60.0, metadata={
        "metavar": "SECONDS", "help": "TACO CLI time limit per call; over it: INFEASIBLE (default 60)"})
    min_runs: int = field(default=3, metadata={"help": "timing: at least this many timed runs (default 3)"})
    max_runs: int = field(default=20, metadata={"help": "timing: at most this many timed runs (default 20)"})
    timing_budget: float = field(default=0.5, metadata={
        "metavar": "SECONDS", "help": "timing: stop timing a configuration after this long (default 0.5)"})
    compare_rounds: int = field(default=15, metadata={
        "help": "interleaved rounds timing best/expert/default at the end; 0 skips (default 15)"})


class TacoTuner(MeasurementInterface):
    """Measurement interface for one TACO kernel; the backend decides how a schedule is measured."""

    Options = TacoOptions

    def __init__(self, options: TacoOptions) -> None:
        """Check the options and prepare the backend (input, compiler, TACO or the replay table)."""
        super().__init__(options)
        self.runs = 0
        self.retimed: Optional[RetimedBest] = None     # the best with the table's re-timed seconds
        self.kernel = options.kernel
        self.evaluator: Optional[Evaluator] = None
        self.replay: Optional[ReplayBackend] = None
        _check_options(options)
        if options.backend == "replay":
            self.replay = self._replay(options)
        elif not (options.print_params or options.print_search_space_size):   # those need only the space
            self.evaluator = self._evaluator(options)

    # ---- set-up ----------------------------------------------------------------------
    def _replay(self, options: TacoOptions) -> ReplayBackend:
        try:
            return ReplayBackend(self.kernel, options.data, options)
        except (FileNotFoundError, ValueError) as exc:
            raise OptionError(str(exc)) from None

    def _evaluator(self, options: TacoOptions) -> Evaluator:
        compiler = Compiler(options.cc, shlex.split(options.cflags), options.compile_timeout)
        taco = None
        try:
            compiler.check()
            if options.backend == "taco":
                taco = TacoCli(options.taco or "", options.taco_timeout)
                taco.check()
            problem = make_input(self.kernel, options)
        except (HarnessError, TacoFailure, taco_inputs.InputError) as exc:
            raise OptionError(str(exc)) from None
        policy = TimingPolicy(warmup=0, min_runs=options.min_runs, max_runs=options.max_runs,
                              budget_s=options.timing_budget)
        return Evaluator(self.kernel, problem, options.backend, compiler, policy, options.run_timeout, taco)

    # ---- identity and space ------------------------------------------------------------
    def program_name(self) -> str:
        """``taco-<kernel>``."""
        return f"taco-{self.kernel}"

    def program_version(self) -> str:
        """Backend and input, so runs on different inputs or backends never mix."""
        if self.replay is not None:
            return f"replay:{self.replay.benchmark.name}"
        o = self.options
        strict = ",strict" if o.strict_orders else ""
        source = os.path.basename(o.matrix or o.tensor or "") or f"random seed {o.input_seed}"
        return f"{o.backend}{strict}:{source} {self.evaluator.problem.description}"

    def manipulator(self) -> ConfigurationManipulator:
        """The BaCO space (builtin/taco, ``taco_spaces.py``) or CATBench's recorded space (replay)."""
        if self.replay is not None:
            return self.replay.manipulator()
        return taco_spaces.build_space(self.kernel, self.options.strict_orders)

    def seed_configurations(self) -> List[Dict[str, Any]]:
        """The search starts from the table's default configuration (when it lies in the space)."""
        if self.replay is not None:
            return self.replay.seed_configurations()
        return [taco_spaces.default_config(self.kernel)]

    # ---- measurement ------------------------------------------------------------------
    def run(self, desired_result, input, limit) -> Result:
        """Called once per configuration: measure it with the chosen backend (never raises)."""
        cfg = desired_result.configuration.data
        self.runs += 1
        if self.replay is not None:
            return self.replay.run(cfg)
        return self.evaluator.evaluate(cfg, limit)

    # ---- the end ----------------------------------------------------------------------
    def save_final_config(self, config: Dict[str, Any]) -> Optional[RetimedBest]:
        """Called once at the end: prints the best configuration next to the expert and default and
        returns its re-timed seconds (the table's figure, so the summary and ``--summary-json`` show
        it next to the recorded one; None for replay and ``--compare-rounds 0``)."""
        self.retimed = None
        if self.replay is not None:
            print(self.replay.report(config))
        else:
            print(self.comparison(config))
            self.evaluator.close()
        super().save_final_config(config)
        return self.retimed

    def finish_without_best(self) -> None:
        """Called at the end when no configuration succeeded: the report without a best."""
        if self.runs:
            print(self.replay.report(None) if self.replay is not None else
                  f"{self.kernel}: no configuration ran correctly\n{format_counts(self.evaluator)}")
        if self.evaluator is not None:
            self.evaluator.close()

    def comparison(self, best: Dict[str, Any]) -> str:
        """Re-time best, expert and default in interleaved rounds; the report as text."""
        ev = self.evaluator
        counts = format_counts(ev)             # before the re-measurements below
        if self.options.compare_rounds == 0:
            return f"{self.kernel} best: {taco_spaces.describe(self.kernel, best)}\n{counts}"
        rows: List[Tuple[str, Dict[str, Any], Optional[float], str]] = []
        ready = {}
        threads = taco_spaces.machine_threads()
        for name, cfg in taco_spaces.baselines(self.kernel, threads) + [(BEST, best)]:
            kernel, failure = ev.build(cfg)
            if failure is None:
                result = ev.evaluate(cfg)
                if result.state == "OK":
                    ready[name] = (kernel, bind(ev.problem, ev.backend)[1])
                else:
                    failure = result
            rows.append((name, cfg, None, "" if failure is None else f"{failure.state}: "
                         f"{failure.extra.get('error', '')}"))
        times = retime_kernels(ready, self.options.compare_rounds, self.options.run_timeout)
        rows = [(n, c, times.get(n), why) for n, c, _, why in rows]
        if times.get(BEST) is not None and math.isfinite(times[BEST]):
            self.retimed = RetimedBest(best, times[BEST], f"min of {self.options.compare_rounds} interleaved "
                                                          "rounds with the default and expert schedules, as given "
                                                          f"and at {threads} threads")
        return "\n".join([format_comparison(self.kernel, self.options.backend, ev.problem, rows),
                          format_stronger(times, threads), counts])


def _check_options(o: TacoOptions) -> None:
    info = KERNELS[o.kernel]
    if o.backend == "taco" and not o.taco:
        raise OptionError("--backend taco needs --taco PATH (the TACO command-line executable)")
    if o.matrix and info.is_tensor_kernel:
        raise OptionError(f"--matrix is for spmv/spmm/sddmm; {o.kernel} takes a 3-tensor: use --tensor FILE.tns")
    if o.tensor and not info.is_tensor_kernel:
        raise OptionError(f"--tensor is for ttv/mttkrp; {o.kernel} takes a matrix: use --matrix FILE.mtx")
    if (o.table_space or o.whole_space) and o.backend != "replay":
        flag = "--table-space" if o.table_space else "--whole-space"
        raise OptionError(f"{flag} chooses a replayed table's space; add --backend replay")
    if o.table_space and o.whole_space:
        raise OptionError("--table-space and --whole-space exclude each other; give one")
    if o.parallelism != 1 and o.backend != "replay":
        raise OptionError(f"--parallelism {o.parallelism}: kernels are timed in this process and need the "
                          "machine to themselves; use --parallelism 1")
    for name in ("run_timeout", "compile_timeout", "taco_timeout", "timing_budget"):
        if not getattr(o, name) > 0:
            raise OptionError(f"--{name.replace('_', '-')} must be positive, got {getattr(o, name)}")
    if not 1 <= o.min_runs <= o.max_runs:
        raise OptionError(f"--min-runs {o.min_runs} / --max-runs {o.max_runs}: need 1 <= min-runs <= max-runs")
    if o.compare_rounds < 0:
        raise OptionError(f"--compare-rounds must be >= 0, got {o.compare_rounds}")


def make_input(kernel: str, o: TacoOptions) -> Problem:
    """The kernel's :class:`Problem` from ``--matrix``/``--tensor`` or the random-input options."""
    sizes = DEFAULT_SIZES[kernel]
    dense = o.dense if o.dense is not None else sizes.get("dense", 1)
    density = o.density if o.density is not None else sizes["density"]
    if KERNELS[kernel].is_tensor_kernel:
        tensor = taco_inputs.read_tns(o.tensor) if o.tensor else \
            taco_inputs.random_tensor(o.dims or sizes["dims"], density, o.input_seed)
        return build_problem(kernel, tensor=tensor, dense_size=dense, seed=o.input_seed)
    if o.matrix:
        matrix = taco_inputs.read_matrix(o.matrix)
    else:
        rows = o.rows if o.rows is not None else sizes["rows"]
        matrix = taco_inputs.random_matrix(rows, o.cols if o.cols is not None else rows, density, o.input_seed)
    return build_problem(kernel, matrix=matrix, dense_size=dense, seed=o.input_seed)


def format_counts(ev: Evaluator) -> str:
    """One line: what the evaluator generated, compiled and rejected so far."""
    c = ev.counts
    return (f"  {c.generated} kernels generated ({ev.compiler.compiles} compiled); INFEASIBLE: "
            f"{c.illegal} illegal loop orders, {c.taco_failed} taco failures, {c.compile_failed} "
            f"compile errors; ERROR (wrong output): {c.wrong}; TIMEOUT: {c.timeouts}")


def format_stronger(times: Dict[str, float], threads: int) -> str:
    """One line: tunerlib's speed-up over the stronger form (as given or mapped to this machine's
    ``threads``) of the default and of the expert schedule -- the fair comparison: both ask for 32
    threads, which oversubscribes a small machine (:func:`tunerlib.measure.format_stronger`)."""
    return stronger_line(times, f"{threads} threads on this machine")


def format_comparison(kernel: str, backend: str, problem: Problem,
                      rows: List[Tuple[str, Dict[str, Any], Optional[float], str]]) -> str:
    """The final table (:func:`tunerlib.measure.format_table`): each schedule's time and tunerlib's
    speed-up over it (its time / best's)."""
    title = (f"{kernel} ({backend} backend, {problem.description}): tunerlib's best vs the table's "
             "default and the expert schedule, as given and mapped to this machine's threads (min of "
             "interleaved rounds)")
    return format_table(title, [Row(name, seconds, why or None, taco_spaces.describe(kernel, cfg))
                                for name, cfg, seconds, why in rows], BEST)


if __name__ == "__main__":
    sys.exit(TacoTuner.main())
