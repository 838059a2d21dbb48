"""Build, launch, check and time the RISE kernels with pyopencl on any OpenCL device.

``pyopencl`` is imported lazily (:func:`import_pyopencl`), so the tuner imports and ``--help``
works without it.  :class:`OpenCLRunner` owns one device, context and profiling queue, the input
buffers of a problem (copied once) and a cache of built programs keyed by (source, build options)
for the lifetime of the runner (one tuning run).  :meth:`OpenCLRunner.evaluate` measures one
configuration and never raises an OpenCL error:

Failures follow the measurement kit's state rule (:mod:`tunerlib.measure.states`):

* the build fails (``clBuildProgram``)            -> ``INFEASIBLE``, ``extra["phase"] = "build"``;
* the launch fails (``INVALID_WORK_GROUP_SIZE``, ``OUT_OF_RESOURCES``, ...)
                                                   -> ``INFEASIBLE``, ``extra["phase"] = "launch"``;
  ``extra["error"]`` is the first line of OpenCL's message (``extra["log"]``: the compiler's first
  ``error:`` line when there is one);
* the output differs from numpy                   -> ``ERROR`` (``extra["error"]`` says how);
* otherwise ``OK`` with ``time`` = the minimum kernel time (seconds, from OpenCL profiling events)
  of the launches after the check launch, timed by :func:`tunerlib.measure.time_after_check` with a
  :class:`tunerlib.measure.TimingPolicy` (:func:`repeat_policy`: up to ``repeats`` launches,
  stopping once they used ``budget_s``).
  ``extra``: ``compile_s`` (build + what the first launch took beyond its kernel time: PoCL
  compiles lazily at the first launch of a local size), ``build_s``, ``first_launch_s``, ``runs``,
  ``median_s``.  ``TIMEOUT`` when it is slower than the run's time limit in a warm launch (the kit's
  :func:`~tunerlib.measure.time_after_check`).
"""
from __future__ import annotations

import time
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

import rise_kernels as kernels
from rise_problems import Problem
from tunerlib import Result, UsageError, captured_stderr
from tunerlib.measure import (OVER_LIMIT, TimingPolicy, failed, fixed_rounds, over_limit, rejected,
                              sample_interleaved, time_after_check, wrong_output)

INSTALL_HINT = "pip install -e '.[opencl]' (pyopencl + pocl-binary-distribution)"


class OpenCLUnavailable(UsageError):
    """pyopencl or an OpenCL device is missing (one-line message naming the fix)."""


def import_pyopencl() -> Any:
    """The ``pyopencl`` module, or :class:`OpenCLUnavailable` naming the extra to install."""
    try:
        import pyopencl
    except ImportError:
        raise OpenCLUnavailable(f"the opencl backend needs pyopencl and an OpenCL driver: {INSTALL_HINT}; "
                                "or use --backend replay") from None
    return pyopencl


def first_line(exc: BaseException, limit: int = 300) -> str:
    """The first non-empty line of an exception's message, with pyopencl's repeats of
    ``clBuildProgram failed: ... - clBuildProgram failed: ...`` collapsed."""
    for line in str(exc).splitlines():
        if line.strip():
            parts: List[str] = []
            for part in line.strip().split(" - "):
                if part.strip() and part.strip() not in parts:
                    parts.append(part.strip())
            return " - ".join(parts)[:limit]
    return type(exc).__name__


def compiler_error(exc: BaseException) -> Optional[str]:
    """The first ``error:`` line of a build log carried by ``exc`` (None when there is none)."""
    for line in str(exc).splitlines():
        if "error:" in line:
            return line.strip()[:300]
    return None


# ------------------------------------------------------------------------------ devices
def all_devices(cl: Any) -> List[Tuple[int, int, Any]]:
    """(platform index, device index, device) of every OpenCL device."""
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return []
    return [(p, d, dev) for p, plat in enumerate(platforms) for d, dev in enumerate(plat.get_devices())]


def describe_devices() -> List[str]:
    """One line per OpenCL device: ``P:D  type  device name  (platform)``."""
    cl = import_pyopencl()
    return [f"{p}:{d}  {cl.device_type.to_string(dev.type):<4} {dev.name.strip()}  ({dev.platform.name.strip()})"
            for p, d, dev in all_devices(cl)]


def select_device(cl: Any, spec: str) -> Any:
    """The device named by ``--device``: ``auto`` (the first GPU, else the first device: PoCL's
    CPU device), ``gpu``, ``cpu``, ``P:D`` (platform and device index) or a case-insensitive
    substring of the device or platform name."""
    devices = all_devices(cl)
    if not devices:
        raise OpenCLUnavailable(f"no OpenCL device found; {INSTALL_HINT} gives PoCL's CPU device")
    want = spec.strip().lower()
    kind = {"gpu": cl.device_type.GPU, "cpu": cl.device_type.CPU}

    def match(p: int, d: int, dev: Any) -> bool:
        if want in kind:
            return bool(dev.type & kind[want])
        if want == f"{p}:{d}":
            return True
        return want in f"{dev.name} {dev.platform.name}".lower()
    if want == "auto":
        gpus = [dev for _, _, dev in devices if dev.type & cl.device_type.GPU]
        return gpus[0] if gpus else devices[0][2]
    for p, d, dev in devices:
        if match(p, d, dev):
            return dev
    raise OpenCLUnavailable(f"--device {spec!r} matches no OpenCL device; see --list-devices")


# ------------------------------------------------------------------------------ the runner
def repeat_policy(repeats: int = 5, budget_s: float = 0.5) -> TimingPolicy:
    """The timing of ``--repeats`` / ``--timing-budget``: up to ``repeats`` launches after the check
    launch, stopping once the timed launches used ``budget_s`` seconds of kernel time."""
    return TimingPolicy(warmup=0, min_runs=repeats, max_runs=repeats, budget_s=budget_s)


#: the default timing (5 launches, 0.5 s)
DEFAULT_POLICY = repeat_policy()


class BuildFailed(Exception):
    """A program did not build (message: OpenCL's first line; ``log``: compiler error line)."""

    def __init__(self, message: str, log: Optional[str]) -> None:
        super().__init__(message)
        self.log = log


class OpenCLRunner:
    """One OpenCL device with a profiling queue; measures configurations of one problem."""

    def __init__(self, device: str = "auto") -> None:
        """Open the device (``--device``); raises :class:`OpenCLUnavailable`."""
        self.cl = import_pyopencl()
        self.device = select_device(self.cl, device)
        self.context = self.cl.Context([self.device])
        props = self.cl.command_queue_properties.PROFILING_ENABLE
        self.queue = self.cl.CommandQueue(self.context, self.device, properties=props)
        self._programs: Dict[Tuple[str, Tuple[str, ...]], Any] = {}
        self._inputs: Optional[Tuple[Problem, List[Any]]] = None
        self._outputs: Dict[Tuple[Tuple[int, ...], str], Tuple[Any, np.ndarray]] = {}

    @property
    def device_name(self) -> str:
        """``device name (platform name)``."""
        return f"{self.device.name.strip()} ({self.device.platform.name.strip()})"

    # ---- building -------------------------------------------------------------------
    def build(self, source: str, options: Sequence[str], name: str) -> Tuple[Any, float]:
        """(kernel ``name`` of the built program, seconds the build took: 0 when cached); raises
        :class:`BuildFailed`.  Programs are cached by (source, build options)."""
        key = (source, tuple(options))
        if key in self._programs:
            return self._programs[key], 0.0
        start = time.perf_counter()
        output: List[str] = []
        try:
            with captured_stderr(output), warnings.catch_warnings():
                warnings.simplefilter("ignore", self.cl.CompilerWarning)
                program = self.cl.Program(self.context, source).build(options=list(options))
                kernel = self.cl.Kernel(program, name)
        except self.cl.Error as exc:
            raise BuildFailed(first_line(exc), compiler_error(exc)) from None
        seconds = time.perf_counter() - start
        self._programs[key] = kernel
        return kernel, seconds

    # ---- buffers --------------------------------------------------------------------
    def _input_buffers(self, problem: Problem) -> List[Any]:
        """Device copies of the problem's inputs (made once; the runner keeps the problem it
        copied, so a new problem object always gets its own buffers)."""
        if self._inputs is None or self._inputs[0] is not problem:
            flags = self.cl.mem_flags.READ_ONLY | self.cl.mem_flags.COPY_HOST_PTR
            self._inputs = (problem, [self.cl.Buffer(self.context, flags, hostbuf=np.ascontiguousarray(a))
                                      for a in problem.inputs])
        return self._inputs[1]

    def _output(self, shape: Tuple[int, ...], dtype: Any) -> Tuple[Any, np.ndarray]:
        """(device buffer, host array) for an output; the buffer is reset to a sentinel (NaN or -1)
        before every first launch so unwritten elements are caught by the check."""
        key = (shape, np.dtype(dtype).str)
        if key not in self._outputs:
            host = np.empty(shape, dtype=dtype)
            buf = self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, size=max(4, host.nbytes))
            self._outputs[key] = (buf, host)
        return self._outputs[key]

    def _reset(self, buf: Any, host: np.ndarray) -> None:
        host.fill(np.nan if host.dtype.kind == "f" else -1)
        self.cl.enqueue_copy(self.queue, buf, host).wait()

    # ---- launching ------------------------------------------------------------------
    def prepare(self, problem: Problem, cfg: Mapping[str, Any]) -> Tuple[Any, Any, np.ndarray, float]:
        """Build ``cfg``'s program and bind the kernel's arguments: (kernel, output buffer, host
        output array, build seconds).  Raises :class:`BuildFailed`."""
        kernel, build_s = self.build(kernels.source(problem.kernel),
                                     kernels.build_options(problem.kernel, cfg, problem.sizes), problem.kernel)
        buf, host = self._output(problem.output_shape(cfg), problem.out_dtype)
        kernel.set_args(*self._input_buffers(problem), buf, *problem.scalars)
        return kernel, buf, host, build_s

    def launch(self, kernel: Any, cfg: Mapping[str, Any], kernel_name: str) -> float:
        """Launch once and wait; returns the kernel's time in seconds (profiling events)."""
        gs, ls = kernels.launch_geometry(kernel_name, cfg)
        event = self.cl.enqueue_nd_range_kernel(self.queue, kernel, gs, ls)
        event.wait()
        return (event.profile.end - event.profile.start) * 1e-9

    def first_run(self, problem: Problem, cfg: Mapping[str, Any]) -> Tuple[Any, Dict[str, Any], Optional[Result]]:
        """Build, launch once and check: ``(kernel, extra, None)`` or ``(None, extra, failure)``."""
        try:
            kernel, buf, host, build_s = self.prepare(problem, cfg)
        except BuildFailed as exc:
            failure = rejected(str(exc), "build", **({"log": exc.log} if exc.log else {}))
            return None, failure.extra, failure
        except self.cl.Error as exc:          # binding the arguments failed
            failure = rejected(first_line(exc), "launch")
            return None, failure.extra, failure
        try:
            self._reset(buf, host)
            start = time.perf_counter()
            first = self.launch(kernel, cfg, problem.kernel)
        except self.cl.Error as exc:
            failure = rejected(first_line(exc), "launch", build_s=build_s)
            return None, failure.extra, failure
        wall = time.perf_counter() - start
        extra = {"compile_s": build_s + max(0.0, wall - first), "build_s": build_s,
                 "first_launch_s": wall, "first_kernel_s": first}
        self.cl.enqueue_copy(self.queue, host, buf).wait()
        why = problem.check(host, cfg)
        if why is not None:
            failure = failed(why, **extra) if why.startswith("wrong output") else wrong_output(why, **extra)
            return None, failure.extra, failure
        return kernel, extra, None

    def evaluate(self, problem: Problem, cfg: Mapping[str, Any], policy: TimingPolicy = DEFAULT_POLICY,
                 limit: Optional[float] = None) -> Result:
        """Measure one configuration (see the module docstring); never raises an OpenCL error."""
        kernel, extra, failure = self.first_run(problem, cfg)
        if failure is not None:
            return failure
        first = extra["first_kernel_s"]
        try:
            timing = time_after_check(lambda: self.launch(kernel, cfg, problem.kernel), first, policy, limit)
        except self.cl.Error as exc:
            return rejected(f"timed launch failed: {first_line(exc)}", "launch", **extra)
        if timing.stopped_because == OVER_LIMIT:
            return over_limit(timing.best, limit, runs=timing.runs, **extra)
        extra.update(runs=timing.runs, median_s=timing.median)
        return Result(time=timing.best, extra=extra)

    def compare(self, problem: Problem, configs: Mapping[str, Mapping[str, Any]],
                rounds: int = 7) -> Dict[str, Tuple[Optional[float], Optional[str]]]:
        """Re-time several configurations in interleaved rounds (each round launches every one
        once, so load changes hit all alike): ``{name: (min seconds or None, why not)}``."""
        ready: Dict[str, Any] = {}
        out: Dict[str, Tuple[Optional[float], Optional[str]]] = {}
        for name, cfg in configs.items():
            kernel, extra, failure = self.first_run(problem, cfg)
            if failure is not None:
                out[name] = (None, f"{failure.state}: {extra.get('error', '')}")
            else:
                ready[name] = kernel
                out[name] = (extra["first_kernel_s"], None)
        samplers = {name: (lambda k=kernel, c=configs[name]: self.launch(k, c, problem.kernel))
                    for name, kernel in ready.items()}
        # each kernel's arguments stay bound; shared output buffers are rewritten alike
        timed = {}
        if rounds:
            timed = sample_interleaved(samplers, fixed_rounds(rounds, warmup=0), errors=(self.cl.Error,))
        for name, timing in timed.items():
            if timing.error is not None:
                out[name] = (None, f"INFEASIBLE: {timing.error}")
            elif timing.samples:
                out[name] = (min(timing.best, out[name][0]), None)
        return out
