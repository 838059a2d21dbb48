#!/usr/bin/env python3
"""Tune the HPVM2FPGA design-space exploration of an FPGA dataflow program with tunerlib.

The search space is read from a JSON space description (``--space``, default the shipped
40-parameter edge-detection space of BaCO, ``spaces/edge_detection.json``): per node loop unroll
factors, loop fusion (``LF``) and input buffering (``BuffIn``) flags, node fusion flags
(``X_Nd_F_Y``) and task-level parallelism (``TLP``).  Each configuration is evaluated by a backend:

* ``--backend model`` (default): an ANALYTICAL MODEL of latency and resources (``fpga_model.py``,
  equations in its docstring) — no HPVM2FPGA toolchain is publicly installable, so the default
  estimates instead of synthesising; its times are model outputs, not FPGA measurements;
* ``--backend command --cmd TEMPLATE``: the user's real flow, run once per configuration
  (``flow_command.py``: placeholders ``{config}`` and ``{workdir}``, protocol line on stdout)::

    python examples/hpvm2fpga/hpvm2fpga_tuner.py --test-limit 200 --seed 1
    python examples/hpvm2fpga/hpvm2fpga_tuner.py --space my_app.json --technique BayesianOptimization
    python examples/hpvm2fpga/hpvm2fpga_tuner.py --backend command \\
        --cmd "python examples/hpvm2fpga/model_flow.py {config}" --test-limit 50

Objective: ExecTime (``Result.time``, seconds).  A design that does not fit the device (or an
illegal node fusion, or a failing flow) is ``INFEASIBLE`` — a hidden constraint, with the reason
and the resource utilisation in ``Result.extra``.  At the end the best design is printed next to
the default (unoptimised) design and, when the space gives one, the expert design, with speed-ups.
"""
# No `from __future__ import annotations`: argparse-dataclass needs the real type hints.
import hashlib
import json
import os
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flow_command  # noqa: E402  (sibling modules, see above)
import fpga_design  # noqa: E402
import fpga_model  # noqa: E402

from tunerlib import MeasurementInterface, Result, TuningOptions, UsageError  # noqa: E402
from tunerlib.parameters import ConfigurationManipulator  # noqa: E402

BACKENDS = ("model", "command")


class OptionError(UsageError):
    """A bad HPVM2FPGA-tuner option (one line)."""


@dataclass
class Hpvm2FpgaOptions(TuningOptions):
    """Tune HPVM2FPGA FPGA designs (default backend: an analytical model, not a measurement)."""

    space: Optional[str] = field(default=None, metadata={
        "metavar": "FILE",
        "help": "JSON space description: nodes, loops, unroll choices, fusion and buffering flags, "
                "device resources (format in examples/hpvm2fpga/README.md); default: the shipped "
                "40-parameter edge-detection space spaces/edge_detection.json"})
    backend: str = field(default="model", metadata={
        "choices": list(BACKENDS),
        "help": "model (default): estimate ExecTime and resources with the analytical FPGA model "
                "of fpga_model.py -- a MODEL, not synthesis or a measurement; command: run your "
                "HPVM2FPGA/HLS flow per configuration (--cmd)"})
    cmd: Optional[str] = field(default=None, metadata={
        "metavar": "TEMPLATE",
        "help": "--backend command: the flow's command line, split with shell quoting rules but "
                "run without a shell; {config} becomes the path of a JSON file with the "
                "configuration (also sent on stdin), {workdir} a fresh directory; the last stdout "
                "line must be {\"exec_time\": SECONDS, \"fits\": true|false}"})
    cmd_timeout: float = field(default=3600.0, metadata={
        "metavar": "SECONDS",
        "help": "--backend command: kill the flow after this many seconds (result TIMEOUT); "
                "default 3600"})
    workdir_root: Optional[str] = field(default=None, metadata={
        "metavar": "DIR",
        "help": "--backend command: create the per-evaluation {workdir} directories here "
                "(default: the system temp directory)"})
    seed_expert: bool = field(default=False, metadata={
        "help": "also measure the space's expert design at the start (default: only the default "
                "design is seeded, so the search does not start from the expert's answer)"})
    keep_workdirs: bool = field(default=False, metadata={
        "help": "--backend command: keep each {workdir} (its path goes to Result.extra) instead "
                "of deleting it"})


class Hpvm2FpgaTuner(MeasurementInterface):
    """Measurement interface: one HPVM2FPGA design space, objective = ExecTime (seconds)."""

    Options = Hpvm2FpgaOptions
    #: units of the metrics ``--objectives`` can name: each resource's share of the device (0-1)
    metric_units = {f"util_{k}": "of device" for k in ("lut", "ff", "dsp", "bram")}

    def __init__(self, options: Hpvm2FpgaOptions) -> None:
        """Load the space description and check the backend options (one-line errors)."""
        super().__init__(options)
        self.space_path = options.space or fpga_design.EDGE_DETECTION
        self.design = fpga_design.load_design(self.space_path)
        self.template: List[str] = []
        self._check_options(options)
        self._results: Dict[str, Result] = {}   # canonical config JSON → result (this process)

    def _check_options(self, options: Hpvm2FpgaOptions) -> None:
        if options.backend == "command":
            self.template = flow_command.parse_template(options.cmd)
            if not options.cmd_timeout > 0:
                raise OptionError(f"--cmd-timeout {options.cmd_timeout} must be > 0 seconds")
            if options.workdir_root and not os.path.isdir(options.workdir_root):
                raise OptionError(f"--workdir-root {options.workdir_root}: not a directory; create it first")
        elif options.cmd is not None:
            raise OptionError("--cmd is only used with --backend command; add --backend command")

    # ---- identity and space ---------------------------------------------------------
    def program_name(self) -> str:
        """Program recorded in the results database: ``hpvm2fpga-<space name>``."""
        return f"hpvm2fpga-{self.design.name}"

    def program_version(self) -> str:
        """Backend plus a hash of the space file, so different spaces or backends never mix."""
        digest = hashlib.sha256(Path(self.space_path).read_bytes()).hexdigest()[:12]
        return f"{self.options.backend}-{digest}"

    def manipulator(self) -> ConfigurationManipulator:
        """The space's parameters (OrdinalParameters) and its declared known constraints."""
        return self.design.manipulator()

    def seed_configurations(self) -> List[Dict[str, Any]]:
        """The default (unoptimised) design, measured first; with --seed-expert also the expert
        design (off by default, so that the search has to find its way there by itself)."""
        seeds = [dict(self.design.default)]
        if self.options.seed_expert and self.design.expert:
            seeds.append(dict(self.design.expert))
        return seeds

    # ---- measurement ------------------------------------------------------------------
    def run(self, desired_result, input, limit) -> Result:
        """Called once per configuration: evaluate it with the chosen backend."""
        cfg = desired_result.configuration.data
        result = self.evaluate(cfg, limit)
        self._results[_key(cfg)] = result
        return result

    def evaluate(self, cfg: Dict[str, Any], limit: Optional[float] = None) -> Result:
        """Result of one configuration (usable without a tuning run)."""
        if self.options.backend == "model":
            return model_result(self.design, cfg)
        timeout = self.options.cmd_timeout if limit is None else min(limit, self.options.cmd_timeout)
        return flow_command.run_flow(self.template, cfg, timeout, self.options.workdir_root,
                                     self.options.keep_workdirs)

    def known_result(self, cfg: Dict[str, Any]) -> Optional[Result]:
        """The result of ``cfg``: recomputed with the model, or measured earlier in this process by
        the command backend (None when it was not: a flow is never re-run just to print)."""
        if self.options.backend == "model":
            return model_result(self.design, cfg)
        return self._results.get(_key(cfg))

    # ---- final report -------------------------------------------------------------------
    def save_final_config(self, config: Dict[str, Any]) -> None:
        """Called once at the end with the best configuration: prints it next to the default
        and expert designs with the speed-ups."""
        rows = [("default", self.design.default)]
        if self.design.expert:
            rows.append(("expert", self.design.expert))
        rows.append(("tunerlib best", config))
        print(format_comparison(self.design.name, self.options.backend,
                                [(name, self.known_result(cfg)) for name, cfg in rows]))
        print(format_changes(self.design, config))
        if self.design.expert and self.design.expert_note:
            print(textwrap.fill(f"expert design: {self.design.expert_note}", width=100,
                                subsequent_indent="  "))
        super().save_final_config(config)


def _key(cfg: Dict[str, Any]) -> str:
    return json.dumps(cfg, sort_keys=True, separators=(",", ":"))


def model_result(design: fpga_design.Design, cfg: Dict[str, Any]) -> Result:
    """The analytical model's Result: OK with the estimated ExecTime, or INFEASIBLE."""
    report = fpga_model.evaluate(design, cfg)
    extra = fpga_model.result_extra(report)
    if not report.fits:
        return Result(state="INFEASIBLE", extra=extra)
    return Result(time=report.seconds, extra=extra)


def _util(result: Result) -> str:
    cells = []
    for k in fpga_model.RESOURCES:
        v = result.extra.get(f"util_{k}")
        cells.append(f"{100 * v:>5.0f}%" if isinstance(v, (int, float)) else f"{'-':>6}")
    return "".join(cells)


def format_comparison(space: str, backend: str, rows: List[Tuple[str, Optional[Result]]]) -> str:
    """The table printed at the end: ExecTime, speed-up of tunerlib's best over each design
    (its time / best time) and utilisation; ``rows`` end with the row ``tunerlib best``."""
    what = "analytical model estimates, not measurements" if backend == "model" else "measured by --cmd"
    best = rows[-1][1]
    best_t = best.time if best is not None and best.state == "OK" else None
    lines = [f"HPVM2FPGA {space}: tunerlib's best vs the reference designs (backend {backend}: {what})",
             f"  {'design':<15}{'ExecTime (ms)':>15}{'speed-up':>10}{'LUT':>7}{'FF':>6}{'DSP':>6}{'BRAM':>6}"]
    for name, result in rows:
        if result is None:
            hint = "; --seed-expert measures it first" if name == "expert" else ""
            lines.append(f"  {name:<15}{'-':>15}  not measured in this process{hint}")
        elif result.state != "OK" or result.time is None:
            lines.append(f"  {name:<15}{result.state:>15}  {result.extra.get('reason', '')}")
        else:
            speed = f"{result.time / best_t:.2f}x" if best_t else "-"
            lines.append(f"  {name:<15}{1e3 * result.time:>15.4f}{speed:>10}{_util(result)}")
    return "\n".join(lines)


def format_changes(design: fpga_design.Design, config: Dict[str, Any]) -> str:
    """The best configuration as its differences from the default design."""
    diff = [f"{n}={config[n]}" for n, _ in design.parameters() if config.get(n) != design.default.get(n)]
    if not diff:
        return "best configuration: the default design"
    return "best configuration, changes from the default design:\n" + textwrap.fill(
        " ".join(diff), width=100, initial_indent="  ", subsequent_indent="  ")


if __name__ == "__main__":
    sys.exit(Hpvm2FpgaTuner.main())
