#!/usr/bin/env python3
"""Tune real Halide schedules with tunerlib: JIT-compiled and timed in a worker process.

Pick a pipeline (``--pipeline blur|harris|matmul``, see ``pipelines.py``) and a problem size
(``--size N``: N x N images / matrices); every configuration of the schedule space
(``schedule.py``: compute and store placement, tile factors, loop order, vector width, unroll,
parallel per Func) is applied to freshly defined Funcs, JIT-compiled, run once and checked against
a reference output (computed once with Halide's default schedule, itself checked against numpy),
then timed as the minimum of k runs with k adaptive to noise (``tunerlib.measure``), all in a worker
process with a compile limit (``halide_measure.py``, ``--compile-timeout``)::

    python examples/halide/halide_tuner.py --pipeline blur --test-limit 200
    python examples/halide/halide_tuner.py --pipeline harris --size 512 --stop-after 600

Outcomes: ``OK`` with ``time`` = min-of-k seconds (``extra``: ``compile_s``, ``runs``,
``median_s``); ``INFEASIBLE`` when Halide rejects the schedule while scheduling, compiling or
running (``extra["error"]``: Halide's first line, ``extra["phase"]``); ``ERROR`` when the output
differs from the reference (``np.allclose(rtol=1e-4, atol=1e-4*max|ref|)``); ``TIMEOUT`` when the
schedule, compile and check run pass ``--compile-timeout`` (the worker is restarted).  At the end the best
schedule is re-timed next to Halide's default schedule and its autoschedulers (Mullapudi2016,
Adams2019, Li2018; ``--baselines``), with tunerlib's speed-up over each.
"""
# No `from __future__ import annotations`: argparse-dataclass needs the real type hints.
import math
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import baselines  # noqa: E402  (sibling modules, see above)
import halide_measure  # noqa: E402
import moves  # noqa: E402
import pipelines  # noqa: E402
import schedule  # noqa: E402

from tunerlib import MeasurementInterface, Result, RetimedBest, TuningOptions, UsageError, captured_stderr  # noqa: E402
from halide_measure import first_line  # noqa: E402
from tunerlib.measure import BEST, TimingError, TimingPolicy, format_table, time_interleaved  # noqa: E402
from tunerlib.parameters import ConfigurationManipulator  # noqa: E402
from tunerlib.techniques import register, registry  # noqa: E402

#: the Halide schedule moves (moves.py), registered once per process under this name
MOVES_TECHNIQUE = "HalideScheduleMoves"
if MOVES_TECHNIQUE not in registry():
    register(MOVES_TECHNIQUE, moves.ScheduleMoves, moves.ScheduleMoves.description)
#: technique used without --technique: an AUC bandit over the members of AUCBanditMetaTechniqueA
#: (OpenTuner's default) and the schedule moves; the Halide figures were measured with it
DEFAULT_TECHNIQUES = ["DifferentialEvolutionAlt", "UniformGreedyMutation", "NormalGreedyMutation30",
                      "RandomNelderMead", MOVES_TECHNIQUE]

#: smallest and largest --size accepted
MIN_SIZE, MAX_SIZE = 16, 4096


class OptionError(UsageError):
    """A bad Halide-tuner option value (one-line message)."""


@dataclass
class HalideOptions(TuningOptions):
    """Tune the schedule of a Halide pipeline (JIT-compiled and timed in a worker process)."""

    pipeline: str = field(default="blur", metadata={
        "choices": pipelines.pipeline_names(),
        "help": "pipeline to tune: blur (separable 3x3 blur, memory bound), harris (7-stage Harris "
                "corner response, compute heavy), matmul (matrix multiply, reduction over an RDom); "
                "default blur"})
    size: Optional[int] = field(default=None, metadata={
        "metavar": "N",
        "help": f"problem size: N x N image or matrices ({MIN_SIZE}..{MAX_SIZE}); default per "
                "pipeline, chosen so one evaluation takes well under a second on 2 cores "
                "(blur 2048, harris 1024, matmul 256)"})
    baselines: List[str] = field(default_factory=lambda: list(baselines.BASELINES), metadata={
        "nargs": "+", "choices": baselines.baseline_choices(),
        "help": "schedules timed at the end next to tunerlib's best: default and/or the "
                "autoschedulers Mullapudi2016 Adams2019 Li2018, or 'none' (default: all four)"})
    seeds: str = field(default="templates", metadata={
        "choices": ["default", "templates"],
        "help": "starting points measured first: 'default' (Halide's default schedule only) or "
                "'templates' (also generic inline / root / fused-tile schedules, vectorised and "
                "parallel; see schedule.template_configs); default templates"})
    confirm: int = field(default=5, metadata={
        "metavar": "K",
        "help": "at the end, re-time the K fastest schedules measured during tuning in "
                "interleaved rounds and report the fastest (recorded single measurements are "
                "optimistic on a busy machine); 1 keeps the recorded best (default 5)"})
    threads: Optional[int] = field(default=None, metadata={
        "help": "Halide worker threads (sets HL_NUM_THREADS before the first run; default: all "
                "cores); also the parallelism given to the autoschedulers"})
    min_runs: int = field(default=3, metadata={
        "help": "timing: at least this many timed runs after the check run (default 3)"})
    max_runs: int = field(default=30, metadata={
        "help": "timing: at most this many timed runs (the cap on k; default 30)"})
    rel_tol: float = field(default=0.02, metadata={
        "help": "timing: stop once 3 runs in a row did not lower the minimum by more than this "
                "fraction (default 0.02)"})
    timing_budget: float = field(default=1.0, metadata={
        "metavar": "SECONDS",
        "help": "timing: stop after the timed runs used this many seconds; a check run this slow "
                "is not repeated (default 1.0)"})
    compile_timeout: float = field(default=60.0, metadata={
        "metavar": "SECONDS",
        "help": "schedules are compiled and timed in a worker process: one whose schedule, JIT "
                "compile and check run take longer than this is TIMEOUT and the worker is restarted "
                "(a Halide compile cannot be interrupted otherwise); 0 measures in the tuner's own "
                "process without a compile limit (default 60)"})


class HalideTuner(MeasurementInterface):
    """Measurement interface: one Halide pipeline, objective = min-of-k run time (seconds)."""

    Options = HalideOptions

    def __init__(self, options: HalideOptions) -> None:
        """Check the options, define the pipeline and compute the reference output."""
        super().__init__(options)
        try:
            import halide  # noqa: F401
        except ImportError:
            raise OptionError("the halide package is not installed; pip install 'tunerlib[halide]' "
                              "(or pip install halide==21.0.0)") from None
        self._check_options(options)
        if not options.technique and not options.generate_bandit_technique:
            options.technique = list(DEFAULT_TECHNIQUES)
        if options.threads is not None:
            os.environ["HL_NUM_THREADS"] = str(options.threads)
        self.threads = options.threads or os.cpu_count() or 1
        self.spec = pipelines.PIPELINES[options.pipeline]
        self.instance = self.spec.instance(options.size)
        self.policy = TimingPolicy(warmup=0, min_runs=options.min_runs, max_runs=options.max_runs,
                                   rel_tol=options.rel_tol, budget_s=options.timing_budget)
        try:
            reference = halide_measure.default_output(self.instance, self.threads)
        except ValueError as exc:
            raise OptionError(str(exc)) from None
        self.measurer = halide_measure.Measurer(self.spec, self.instance, reference, self.policy)
        self.isolated: Optional[halide_measure.IsolatedMeasurer] = None
        if options.compile_timeout > 0:
            self.isolated = halide_measure.IsolatedMeasurer(options.pipeline, options.size, self.threads,
                                                            self.policy, options.compile_timeout)
        self._measured: Dict[str, Result] = {}     # effective schedule key → result (see run())
        self._configs: Dict[str, Dict[str, Any]] = {}   # effective schedule key → a config of it

    @staticmethod
    def _check_options(options: HalideOptions) -> None:
        if options.size is not None and not MIN_SIZE <= options.size <= MAX_SIZE:
            raise OptionError(f"--size {options.size} is out of range; use {MIN_SIZE}..{MAX_SIZE}")
        if options.threads is not None and options.threads < 1:
            raise OptionError(f"--threads {options.threads} must be at least 1")
        if options.parallelism != 1:
            raise OptionError(f"--parallelism {options.parallelism}: Halide timings need the machine "
                              "to themselves (and Halide's thread pool does not survive fork); "
                              "use --parallelism 1")
        if options.compile_timeout < 0:
            raise OptionError(f"--compile-timeout {options.compile_timeout:g} must be >= 0 (0: no worker)")
        if "none" in options.baselines and len(options.baselines) > 1:
            raise OptionError("--baselines none cannot be combined with other baselines; give "
                              "either 'none' or a list of baselines")
        try:
            TimingPolicy(min_runs=options.min_runs, max_runs=options.max_runs,
                         rel_tol=options.rel_tol, budget_s=options.timing_budget).check()
        except TimingError as exc:
            raise OptionError(f"{exc} (--min-runs/--max-runs/--rel-tol/--timing-budget)") from None

    # ---- identity and space ---------------------------------------------------------
    def program_name(self) -> str:
        """Program recorded in the results database: ``halide-<pipeline>``."""
        return f"halide-{self.spec.name}"

    def program_version(self) -> str:
        """The problem size, so runs at different sizes never mix (and --resume finds its run)."""
        return f"size{self.instance.size}"

    def manipulator(self) -> ConfigurationManipulator:
        """Search space: see schedule.py."""
        return schedule.build_space(self.spec, self.instance.width, self.instance.height)

    def seed_configurations(self) -> List[Dict[str, Any]]:
        """The search starts from Halide's default schedule written in the space and, with
        ``--seeds templates`` (the default), the generic schedule templates of
        :func:`schedule.template_configs` that satisfy the known constraints."""
        seeds = [schedule.default_config(self.spec)]
        if self.options.seeds == "templates":
            m = self.manipulator()
            w, h = self.instance.width, self.instance.height
            seeds += [c for c in schedule.template_configs(self.spec, w, h) if m.is_feasible(c)]
        return seeds

    # ---- measurement ------------------------------------------------------------------
    def run(self, desired_result, input, limit) -> Result:
        """Called once per configuration: schedule, compile, check and time it.

        A configuration whose schedule is identical to one measured before in this process (it
        differs only in knobs that change nothing, see ``schedule.effective_key``) gets the earlier
        result, marked ``extra["same_schedule"] = True``, without compiling again.
        """
        cfg = desired_result.configuration.data
        key = schedule.effective_key(self.spec, cfg, self.instance.width, self.instance.height)
        earlier = self._measured.get(key)
        if earlier is not None:
            return Result(state=earlier.state, time=earlier.time, extra=dict(earlier.extra, same_schedule=True))
        result = self.isolated.evaluate(cfg, limit) if self.isolated else self.evaluate(cfg, limit)
        if result.state in ("OK", "INFEASIBLE", "ERROR"):
            self._measured[key] = result
            self._configs[key] = dict(cfg)
        return result

    def confirm_best(self, config: Dict[str, Any]) -> Dict[str, Any]:
        """The fastest of the ``--confirm`` K fastest schedules measured in this process (and
        ``config``), re-timed in interleaved rounds: a single min-of-k under machine load is often
        a lucky sample, so the recorded best is optimistic and not always the fastest schedule."""
        return self._confirm(config)[0]

    def _confirm(self, config: Dict[str, Any]) -> Tuple[Dict[str, Any], Optional[float], int]:
        """(:meth:`confirm_best`'s schedule, its re-timed seconds or None when nothing was re-timed,
        how many schedules were re-timed together)."""
        k = self.options.confirm
        ranked = sorted((r.time, key) for key, r in self._measured.items() if r.state == "OK" and r.time)
        keys = [key for _, key in ranked[:k]]
        own = schedule.effective_key(self.spec, config, self.instance.width, self.instance.height)
        candidates = {key: self._configs[key] for key in keys}
        candidates[own] = config
        if k <= 1 or len(candidates) < 2:
            return config, None, 0
        compiled = {key: c for key, c in ((key, self.compile_checked(cfg)[0]) for key, cfg in candidates.items())
                    if c is not None}
        times = self.compare(compiled) if compiled else {}
        times = {key: t for key, t in times.items() if t is not None and math.isfinite(t)}
        if not times:
            return config, None, 0
        fastest = min(times, key=times.get)
        return candidates[fastest], times[fastest], len(times)

    def evaluate(self, cfg: Dict[str, Any], limit: Optional[float] = None) -> Result:
        """Measure one configuration in this process (usable without a tuning run; ``run`` uses the
        worker unless ``--compile-timeout 0``); never raises HalideError."""
        return self.measurer.evaluate(cfg, limit)

    def compile_checked(self, cfg: Dict[str, Any]) -> halide_measure.Checked:
        """Schedule, JIT-compile, run once and check ``cfg`` in this process (see
        :meth:`halide_measure.Measurer.compile_checked`); used to re-time at the end."""
        return self.measurer.compile_checked(cfg)

    @property
    def reference(self) -> Any:
        """The reference output (Halide's default schedule, checked against numpy)."""
        return self.measurer.reference

    @reference.setter
    def reference(self, value: Any) -> None:
        self.measurer.reference = value

    def _check(self, compiled: pipelines.Compiled, extra: Dict[str, Any]) -> Optional[Result]:
        return self.measurer.check(compiled, extra)

    def close(self) -> None:
        """Stop the measuring worker (called at the end of a run; safe to call twice)."""
        if self.isolated is not None:
            self.isolated.close()

    # ---- baselines --------------------------------------------------------------------
    def compile_baseline(self, name: str) -> Tuple[Optional[pipelines.Compiled], Optional[str]]:
        """Build, compile and check baseline ``name``: ``(compiled, None)`` or ``(None, why not)``."""
        warnings: List[str] = []
        try:
            with captured_stderr(warnings):
                compiled, _ = baselines.build_baseline(self.instance, name, self.threads)
                compiled.run()
        except baselines.BaselineError as exc:
            return None, str(exc)
        except Exception as exc:   # a HalideError while running the autoscheduled pipeline
            return None, f"{name} failed: {first_line(exc)}"
        failure = self._check(compiled, {})
        return (None, failure.extra["error"]) if failure else (compiled, None)

    def compare(self, compiled: Dict[str, pipelines.Compiled]) -> Dict[str, float]:
        """Min-of-k seconds of several compiled pipelines timed in interleaved rounds (fair on a
        loaded machine: load changes hit all of them alike)."""
        policy = replace(self.policy, warmup=1, min_runs=max(5, self.policy.min_runs),
                         max_runs=max(60, self.policy.max_runs), budget_s=2 * self.policy.budget_s)
        return {name: t.best for name, t in time_interleaved(
            {name: c.run for name, c in compiled.items()}, policy).items()}

    def baseline_names(self) -> List[str]:
        """The baselines to time at the end (``--baselines``; empty for ``none``)."""
        return [] if "none" in self.options.baselines else list(self.options.baselines)

    def save_final_config(self, config: Dict[str, Any]) -> Optional[RetimedBest]:
        """Called once at the end with the recorded best: confirms it among the fastest measured
        schedules (:meth:`confirm_best`), prints the confirmed one and the baseline table, writes it
        to ``--final-config`` and returns it with its re-timed seconds, so that the summary,
        ``--summary-json`` and the results database name the schedule the table shows (one best)."""
        self.close()                    # the end-of-run re-timing compiles in this process
        confirmed, seconds, together = self._confirm(config)
        how = (f"fastest of {together} schedules re-timed in interleaved rounds (min-of-k)"
               if seconds is not None else None)
        if confirmed is not config:
            print(f"re-timed the {self.options.confirm} fastest schedules measured: another one is "
                  "faster than the recorded best and is reported below")
        config = confirmed
        print(f"best schedule for {self.spec.name} (size {self.instance.size}):")
        for line in schedule.describe(self.spec, config):
            print(f"  {line}")
        names = self.baseline_names()
        if names:
            best, _, failure = self.compile_checked(config)
            built = {name: self.compile_baseline(name) for name in names}
            ready = {name: c for name, (c, _) in built.items() if c is not None}
            if best is not None:
                ready[BEST] = best
            times = self.compare(ready) if ready else {}
            rows = [(name, times.get(name), why) for name, (_, why) in built.items()]
            rows.append((BEST, times.get(BEST), None if failure is None else failure.extra["error"]))
            print(format_baselines(self.spec.name, self.instance.size, self.threads, rows))
            if times.get(BEST) is not None and math.isfinite(times[BEST]):
                seconds = times[BEST]       # the table's figure: the same rounds as the baselines
                others = ", ".join(name for name in ready if name != BEST) or "no baseline"
                how = (f"min-of-k in interleaved rounds with {others}"
                       + (f", after being the fastest of {together} schedules re-timed" if together else ""))
        super().save_final_config(config)          # --final-config PATH still writes the JSON
        return None if seconds is None else RetimedBest(config, seconds, how)

    def finish_without_best(self) -> None:
        """Called at the end when no schedule succeeded: stop the worker."""
        self.close()
        super().finish_without_best()


def format_baselines(pipeline: str, size: int, threads: int,
                     rows: List[Tuple[str, Optional[float], Optional[str]]]) -> str:
    """The table printed at the end (:func:`tunerlib.measure.format_table`); ``rows`` are (name,
    seconds or None, why not) with the row of tunerlib's best named :data:`BEST`.  Speed-up =
    baseline time / tunerlib's best time."""
    return format_table(f"tunerlib's best vs baselines on {pipeline} (size {size}, {threads} threads; "
                        "min-of-k, timed in interleaved rounds):", rows, BEST,
                        speedup_header="tunerlib speed-up")


if __name__ == "__main__":
    sys.exit(HalideTuner.main())
