#!/usr/bin/env python3
"""Tune RISE/ELEVATE GPU kernels with tunerlib: real OpenCL runs, or recorded GPU measurements.

Pick a kernel of the BaCO paper's RISE table (``--kernel mm|asum|scal|kmeans|harris|stencil``);
its search space and known constraints are those of ``docs/benchmark-spaces.md`` (``rise_spaces.py``)::

    python examples/rise/rise_tuner.py --kernel mm --test-limit 120
    python examples/rise/rise_tuner.py --kernel stencil --device gpu --size 4096
    python examples/rise/rise_tuner.py --kernel asum --backend replay --test-limit 60 --seed 1
    python examples/rise/rise_tuner.py --backend replay --benchmark gemm_rtxtitan --test-limit 100

``--backend opencl`` (default, extra ``[opencl]``): OpenCL kernels written for tunerlib in the
style of RISE's generated code (``rise_kernels.py``), parameterised by the configuration, built and run
with pyopencl on an OpenCL device (``--device``: the first GPU when there is one, else PoCL's CPU
device), checked against numpy (``rise_problems.py``) and timed with profiling events
(``rise_opencl.py``).  Outcomes: OK (min-of-k kernel seconds), INFEASIBLE with
``extra["phase"]`` ``build``/``launch`` and OpenCL's message in ``extra["error"]`` (the hidden
constraints: build failures, ``INVALID_WORK_GROUP_SIZE``, out of resources), ERROR when the output
is wrong.  Problem sizes are scaled by ``--size`` and so are the ranges of size-bound parameters
(see ``rise_spaces.py``).

``--backend replay``: recorded GPU measurements through :mod:`tunerlib.replay`
(``rise_replay.py``); INFEASIBLE for recorded failures and for configurations the table lacks
("not measured", counted apart), and the report gives the simulated tuning time.

At the end the best configuration is printed next to the paper's expert and default ones with
tunerlib's speed-up over each (opencl: all three re-timed in interleaved rounds together with the
other ``--confirm`` - 1 fastest configurations recorded during the run, and the fastest of those
is reported as the best -- a recorded min-of-k under load is often a lucky sample; replay:
recorded times).
"""
# No `from __future__ import annotations`: argparse-dataclass needs the real type hints.
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rise_opencl as opencl_backend  # noqa: E402  (sibling modules; pyopencl is imported lazily)
import rise_replay as replay_backend  # noqa: E402
import rise_spaces as spaces  # noqa: E402
import rise_worker  # noqa: E402

from tunerlib import MeasurementInterface, Result, RetimedBest, TuningOptions, UsageError  # noqa: E402
from tunerlib.measure import BEST, format_table  # noqa: E402
from tunerlib.parameters import ConfigurationManipulator  # noqa: E402
from tunerlib.replay.interface import TABLE_SPACE_HELP  # noqa: E402

BACKENDS = ("opencl", "replay")
#: the kernel tuned when --kernel is not given
DEFAULT_KERNEL = "mm"
#: row name of tunerlib's best configuration in the comparison table
NO_BEST = "no successful measurement"
Row = Tuple[str, Optional[float], Optional[str], Optional[Dict[str, Any]]]


@dataclass
class RiseOptions(TuningOptions):
    """Tune a RISE/ELEVATE GPU kernel (OpenCL on any device, or recorded RTX Titan measurements)."""

    kernel: Optional[str] = field(default=None, metadata={
        "choices": spaces.kernel_names(),
        "help": "kernel to tune: mm (matrix multiply), asum (sum of |x|), scal (y = a x), kmeans "
                "(nearest centroid), harris (corner response), stencil (5-point Jacobi); default mm. "
                "With --data FILE it names the table's kernel (its space, constraints, expert and "
                "default); without it the kernel is found from the table's columns"})
    backend: str = field(default="opencl", metadata={
        "choices": list(BACKENDS),
        "help": "opencl: build and time real OpenCL kernels (needs pip install -e '.[opencl]'); "
                "replay: look configurations up in recorded GPU measurements; default opencl"})
    size: Optional[int] = field(default=None, metadata={
        "metavar": "N",
        "help": "opencl: problem size, a power of two (mm/harris/stencil: matrix or image side, "
                "paper 1024; asum/scal: vector length, paper 2^24/2^25; kmeans: points, paper 2^19); "
                "default per kernel, small enough for a CPU: mm 256, asum 2^22, scal 2^22, kmeans "
                "2^16, harris 512, stencil 1024"})
    device: str = field(default="auto", metadata={
        "help": "opencl: device to run on: auto (the first GPU, else the first device, e.g. PoCL's "
                "CPU device), gpu, cpu, P:D (platform and device index of --list-devices) or part of "
                "the device/platform name; default auto"})
    list_devices: bool = field(default=False, metadata={
        "help": "list the OpenCL devices (P:D, type, name, platform) and exit"})
    repeats: int = field(default=5, metadata={
        "help": "opencl: timed launches per configuration after a warm-up launch; the time is "
                "their minimum (default 5)"})
    timing_budget: float = field(default=0.5, metadata={
        "metavar": "SECONDS",
        "help": "opencl: stop timing a configuration once its launches used this many seconds; a "
                "warm-up launch this slow is not repeated (default 0.5)"})
    eval_timeout: float = field(default=120.0, metadata={
        "metavar": "SECONDS",
        "help": "opencl: a configuration whose build and timing take longer is a TIMEOUT (the OpenCL "
                "process is killed and restarted; default 120)"})
    confirm: int = field(default=5, metadata={
        "metavar": "K",
        "help": "opencl: at the end, re-time the K fastest configurations measured during tuning "
                "with the expert and default and report the fastest (recorded min-of-k times are "
                "optimistic on a busy machine); 1 keeps the recorded best (default 5)"})
    compare_rounds: int = field(default=7, metadata={
        "help": "opencl: interleaved rounds used at the end to re-time the best, expert and default "
                "configurations (0: print the configurations without re-timing; default 7)"})
    data: Optional[str] = field(default=None, metadata={
        "metavar": "FILE",
        "help": "replay: recorded table to replay (RISE/BaCO .csv[.gz] or Kernel Tuner cache "
                ".json[.gz], from any GPU and under any name; columns in any order), replayed in the "
                "space of --kernel or --benchmark when given; default: "
                "<shared>/data/gpu_cache/rise_baco/<kernel>_rtxtitan.csv.gz"})
    benchmark: Optional[str] = field(default=None, metadata={
        "metavar": "NAME",
        "help": "replay: a recorded benchmark by name instead of the kernel's RISE table, e.g. "
                "gemm_rtxtitan, conv_a100, dedisp_a100, pnpoly_rtxtitan (exhaustive Kernel Tuner "
                "caches) or rise_mm ... rise_stencil"})
    table_space: bool = field(default=False, metadata={"help": "replay: " + TABLE_SPACE_HELP})
    shared_dir: Optional[str] = field(default=None, metadata={
        "metavar": "DIR",
        "help": "replay: shared data folder holding data/gpu_cache (default: $TUNERLIB_SHARED_DIR or "
                "the 'shared' folder beside the repository)"})


class RiseTuner(MeasurementInterface):
    """Measurement interface for one RISE kernel on one backend (see the module docstring)."""

    Options = RiseOptions
    #: the instance created by the latest :meth:`main` (tests and benchmarks inspect it)
    last: Optional["RiseTuner"] = None

    def __init__(self, options: RiseOptions) -> None:
        """Check the options and open the backend (OpenCL device and inputs, or the table)."""
        super().__init__(options)
        self._check(options)
        self.measured = 0
        self.confirmed: Optional[Dict[str, Any]] = None   # set when re-timing found a faster one
        self.retimed: Optional[RetimedBest] = None         # the table's best with its re-timed seconds
        self._ok: Dict[str, Tuple[float, Dict[str, Any]]] = {}   # configuration hash -> (seconds, config)
        self.kernel = options.kernel or DEFAULT_KERNEL
        self.spec = spaces.KERNELS[self.kernel]
        self.replay: Optional[replay_backend.ReplayBackend] = None
        self.runner = None
        if options.backend == "replay":
            self.replay = replay_backend.ReplayBackend(replay_backend.load(
                options.kernel, options.data, options.benchmark, options.shared_dir), options.table_space)
            return
        try:
            self.size = spaces.resolve_size(self.kernel, options.size)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.policy = opencl_backend.repeat_policy(options.repeats, options.timing_budget)
        self.runner = rise_worker.IsolatedRunner(options.device, self.kernel, self.size,
                                                 options.eval_timeout)

    @staticmethod
    def _check(options: RiseOptions) -> None:
        if options.parallelism != 1:
            raise UsageError(f"--parallelism {options.parallelism}: kernel timings need the device to "
                             "themselves and replay lookups take microseconds; use --parallelism 1")
        if (options.repeats < 1 or options.timing_budget <= 0 or options.compare_rounds < 0
                or options.eval_timeout <= 0 or options.confirm < 1):
            raise UsageError("--repeats and --confirm must be >= 1, --timing-budget and --eval-timeout > 0 "
                             "and --compare-rounds >= 0")
        if options.backend == "opencl" and (options.data or options.benchmark or options.table_space):
            raise UsageError("--data/--benchmark/--table-space replay recorded tables; add --backend replay")
        if options.backend == "replay" and options.size is not None:
            raise UsageError("--size applies to --backend opencl; a replayed table has its recorded size")

    @classmethod
    def main(cls, args: Optional[Sequence[str]] = None) -> int:
        """Handle ``--list-devices``, else tune (see :meth:`MeasurementInterface.main`)."""
        argv = list(sys.argv[1:] if args is None else args)
        if "--list-devices" in argv:
            try:
                print("\n".join(opencl_backend.describe_devices()) or "no OpenCL device found")
            except UsageError as exc:
                print(f"{cls.__name__}: error: {exc}", file=sys.stderr)
                return 2
            return 0
        return super().main(argv)

    # ---- identity and space -------------------------------------------------------------
    def program_name(self) -> str:
        """``rise-<kernel>`` (opencl) or ``replay-<benchmark>``."""
        return f"replay-{self.replay.name}" if self.replay else f"rise-{self.kernel}"

    def program_version(self) -> str:
        """Problem size and device (opencl), so runs that cannot be compared never mix."""
        if self.replay:
            return "recorded"
        return f"size{self.size}@{self.runner.device_short}"

    def manipulator(self) -> ConfigurationManipulator:
        """The kernel's space at the run's size (opencl) or the recorded benchmark's space."""
        if self.replay:
            return self.replay.manipulator()
        return spaces.build_space(self.kernel, self.size)

    # ---- measurement ---------------------------------------------------------------------
    def run(self, desired_result, input, limit) -> Result:
        """Called once per configuration: replay it or build, launch, check and time it."""
        cfg = desired_result.configuration.data
        self.measured += 1
        if self.replay:
            return self.replay.evaluate(cfg)
        result = self.runner.evaluate(cfg, self.policy, limit)
        if result.state == "OK" and result.time:
            self._ok[desired_result.configuration.hash] = (result.time, dict(cfg))
        return result

    def evaluate(self, cfg: Mapping[str, Any]) -> Result:
        """Measure one configuration outside a tuning run (tests, benchmarks)."""
        if self.replay:
            return self.replay.evaluate(cfg)
        return self.runner.evaluate(cfg, self.policy)

    def paper_configs(self) -> Dict[str, Optional[Dict[str, Any]]]:
        """The paper's default and expert configurations in this run's space (None: outside it)."""
        if self.replay:
            return {"default": self.replay.benchmark.default, "expert": self.replay.benchmark.expert}
        return {which: spaces.paper_config(self.kernel, which, self.size) for which in ("default", "expert")}

    # ---- the final comparison ---------------------------------------------------------------
    def comparison(self, best: Optional[Mapping[str, Any]]) -> List[Row]:
        """Rows (name, milliseconds or None, why not, configuration): default, expert, best."""
        if self.replay:
            return self.replay.comparison(best)
        configs = dict(self.paper_configs(), **{BEST: None if best is None else dict(best)})
        present = {name: cfg for name, cfg in configs.items() if cfg is not None}
        candidates = self.candidates(best)
        present.update(candidates)
        timed = self.runner.compare(present, self.options.compare_rounds) if self.options.compare_rounds else {}
        fastest = min((n for n in [BEST, *candidates] if timed.get(n, (None,))[0] is not None),
                      key=lambda n: timed[n][0], default=BEST)
        if fastest != BEST:
            configs[BEST] = candidates[fastest]
            timed[BEST] = timed[fastest]
            self.confirmed = candidates[fastest]
        if timed.get(BEST, (None,))[0] is not None:
            self.retimed = RetimedBest(configs[BEST], timed[BEST][0],
                                       f"min of {self.options.compare_rounds} interleaved rounds with the "
                                       f"expert, the default and {len(candidates)} other finalists")
        rows = []
        for name, cfg in configs.items():
            if cfg is None:
                why = NO_BEST if name == BEST else spaces.why_no_config(self.kernel, name, self.size)
                rows.append((name, None, why, None))
                continue
            seconds, why = timed.get(name, (None, "not re-timed (--compare-rounds 0)"))
            rows.append((name, None if seconds is None else 1e3 * seconds, why, cfg))
        return rows

    def candidates(self, best: Optional[Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
        """The other ``--confirm``-1 fastest configurations recorded in this run, re-timed with the
        best at the end (a recorded min-of-k under load is often a lucky sample)."""
        if best is None or self.options.confirm <= 1 or not self.options.compare_rounds:
            return {}
        others = sorted((t, key) for key, (t, cfg) in self._ok.items() if cfg != dict(best))
        return {f"candidate {i + 1}": self._ok[key][1]
                for i, (_, key) in enumerate(others[:self.options.confirm - 1])}

    def header(self) -> str:
        """First line of the comparison table."""
        if self.replay:
            return (f"tunerlib's best vs the paper's configurations on {self.replay.name} "
                    "(recorded times, ms):")
        return (f"tunerlib's best vs the paper's configurations on {self.kernel} (size {self.size}, "
                f"{self.runner.device_name}; min of {self.options.compare_rounds} interleaved rounds):")

    def report(self, best: Optional[Mapping[str, Any]]) -> None:
        """Print the comparison table (and, for replay, the evaluation counts and the simulated
        tuning time); ``best`` is None when no configuration succeeded."""
        names = self.manipulator().names
        rows = [(name, ms, why, None if cfg is None else {k: cfg[k] for k in names if k in cfg})
                for name, ms, why, cfg in self.comparison(best)]
        print(format_comparison(self.header(), rows))
        if self.replay:
            print("\n".join(self.replay.summary_lines()))
        else:
            self.runner.close()

    def save_final_config(self, config: Dict[str, Any]) -> Optional[RetimedBest]:
        """Called once at the end with the recorded best: :meth:`report` (which re-times it with the
        other ``--confirm`` fastest ones), then ``--final-config PATH`` gets the fastest, which is
        returned with its re-timed seconds so that the summary, ``--summary-json`` and the results
        database name the configuration the table shows (one best; replay: the recorded best)."""
        self.confirmed = None
        self.retimed = None
        self.report(config)
        if self.confirmed is not None:
            print(f"re-timed the {self.options.confirm} fastest configurations measured: another one is "
                  "faster than the recorded best and is reported above")
        super().save_final_config(self.confirmed or config)
        return self.retimed

    def finish_without_best(self) -> None:
        """Called at the end when no configuration succeeded: the table without a best."""
        if self.measured:
            self.report(None)


def format_comparison(header: str, rows: List[Row]) -> str:
    """The table printed at the end (:func:`tunerlib.measure.format_table`); speed-up = that row's
    time / tunerlib's best time; ``rows`` carry milliseconds."""
    return format_table(header, [(name, None if ms is None else ms / 1e3, why, spaces.describe(cfg) if cfg else "")
                                 for name, ms, why, cfg in rows], BEST, name_header="configuration",
                        ms_digits=4, speedup_header="speed-up", description_header="parameters")


if __name__ == "__main__":
    sys.exit(RiseTuner.main())
