"""Compile, load, run, verify and time a generated kernel in this process.

* :class:`Compiler` writes a C source into its private temp folder, builds it with
  ``<cc> -O3 -fopenmp -shared -fPIC`` (plus ``--cflags``), loads it with :mod:`ctypes` and caches
  the result by the SHA-256 of compiler command and source, so a schedule met twice in a run is
  compiled once.  A failed build raises :class:`CompileError` carrying the compiler's first error
  line.  :meth:`Compiler.close` (also run at interpreter exit) deletes the folder.
* :class:`TacoTensorT` is TACO's ``taco_tensor_t`` as a ctypes structure; :class:`BoundTensor`
  fills one from an :class:`~taco_problem.Operand` (dense levels: a pointer to the size; compressed
  levels: ``pos`` and ``crd``), keeping every array alive.
* :func:`measure` runs a loaded kernel once on fresh operands (the check run, which doubles as the
  warm-up), compares the output with the reference, then times it as the minimum of k runs, k
  adaptive (:class:`tunerlib.measure.TimingPolicy`, :data:`DEFAULT_POLICY`); failures follow the
  kit's state rule (:mod:`tunerlib.measure.states`).

Kernels expose ``int compute(taco_tensor_t*...)`` (TACO's signature; 0 = done, 1 = stopped at the
deadline) and the glue of ``taco_codegen.GLUE``: ``tunerlib_arm(seconds)`` arms the deadline checked
between parallel regions, ``tunerlib_omp(dynamic, chunk, threads)`` sets the OpenMP runtime
schedule used by TACO's ``schedule(runtime)`` loops.
"""
from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from taco_problem import Operand, Problem
from tunerlib import Result
from tunerlib.measure import (OVER_LIMIT, TimingPolicy, check_run_limit, failed, fixed_rounds, over_limit,
                              time_after_check, time_interleaved, timed_out, wrong_output)

DEFAULT_FLAGS: Tuple[str, ...] = ("-O3", "-fopenmp", "-shared", "-fPIC")
_OMP_PROBE = ("#include <omp.h>\nint tunerlib_probe(void) { int n = 0;\n"
              "#pragma omp parallel reduction(+:n)\n  n += 1;\n  return n + omp_get_max_threads(); }\n")


class HarnessError(RuntimeError):
    """The toolchain cannot be used at all (no compiler, no OpenMP); one-line message."""


class CompileError(RuntimeError):
    """A kernel failed to compile; ``first_line`` is the compiler's first error line."""

    def __init__(self, first_line: str, seconds: float) -> None:
        super().__init__(first_line)
        self.first_line, self.seconds = first_line, seconds


# ------------------------------------------------------------------ taco_tensor_t
class TacoTensorT(ctypes.Structure):
    """TACO's ``taco_tensor_t`` (``include/taco/taco_tensor_t.h`` layout)."""

    _fields_ = [("order", ctypes.c_int32), ("dimensions", ctypes.POINTER(ctypes.c_int32)),
                ("csize", ctypes.c_int32), ("mode_ordering", ctypes.POINTER(ctypes.c_int32)),
                ("mode_types", ctypes.POINTER(ctypes.c_int)),
                ("indices", ctypes.POINTER(ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)))),
                ("vals", ctypes.POINTER(ctypes.c_uint8)), ("fill_value", ctypes.POINTER(ctypes.c_uint8)),
                ("vals_size", ctypes.c_int32)]


def _u8(arr: np.ndarray) -> "ctypes._Pointer":
    return ctypes.cast(arr.ctypes.data, ctypes.POINTER(ctypes.c_uint8))


class BoundTensor:
    """A :class:`TacoTensorT` filled from an operand; ``pointer`` is what ``compute`` takes."""

    def __init__(self, op: Operand) -> None:
        self.operand = op
        self._keep: List[object] = [op.vals]
        order = len(op.dims)
        self.dims = np.asarray(op.dims, dtype=np.int32)
        self.ordering = np.arange(order, dtype=np.int32)
        self.types = np.asarray([0 if lv is None else 1 for lv in op.levels], dtype=np.intc)
        self.fill = np.zeros(1, dtype=np.float64)
        level_ptrs = (ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)) * order)()
        for idx, level in enumerate(op.levels):
            arrays = [self.dims[idx:idx + 1]] if level is None else [_int32(level[0]), _int32(level[1])]
            slots = (ctypes.POINTER(ctypes.c_uint8) * len(arrays))(*[_u8(a) for a in arrays])
            self._keep += arrays + [slots]
            level_ptrs[idx] = ctypes.cast(slots, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)))
        self._keep.append(level_ptrs)
        self.struct = TacoTensorT(order, _ptr(self.dims, ctypes.c_int32), 8, _ptr(self.ordering, ctypes.c_int32),
                                  _ptr(self.types, ctypes.c_int), level_ptrs, _u8(op.vals), _u8(self.fill),
                                  int(op.vals.size))
        self.pointer = ctypes.pointer(self.struct)


def _int32(arr: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(arr, dtype=np.int32)


def _ptr(arr: np.ndarray, ctype) -> "ctypes._Pointer":
    return ctypes.cast(arr.ctypes.data, ctypes.POINTER(ctype))


# ------------------------------------------------------------------ compiling
@dataclass
class CompiledKernel:
    """A loaded kernel library: ``compute`` plus the glue functions."""

    key: str
    path: str
    compile_s: float
    lib: ctypes.CDLL = field(repr=False)

    def __post_init__(self) -> None:
        self.lib.tunerlib_arm.argtypes = [ctypes.c_double]
        self.lib.tunerlib_omp.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.lib.compute.restype = ctypes.c_int

    def call(self, tensors: Sequence[BoundTensor], timeout_s: float) -> int:
        """Run ``compute`` once with a deadline ``timeout_s`` from now; returns its status."""
        self.lib.tunerlib_arm(float(timeout_s))
        return int(self.lib.compute(*[t.pointer for t in tensors]))

    def set_omp(self, dynamic: bool, chunk: int, threads: int) -> None:
        """OpenMP runtime schedule and thread count (read by ``schedule(runtime)`` loops)."""
        self.lib.tunerlib_omp(int(dynamic), int(chunk), int(threads))


class Compiler:
    """Builds C sources into shared libraries in a private temp folder (see module docstring)."""

    def __init__(self, cc: str = "gcc", extra_flags: Sequence[str] = (), timeout_s: float = 120.0) -> None:
        self.cc, self.flags, self.timeout_s = cc, list(DEFAULT_FLAGS) + list(extra_flags), timeout_s
        self._dir: Optional[str] = None
        self._cache: Dict[str, CompiledKernel] = {}
        self.compiles = 0
        atexit.register(self.close)

    @property
    def workdir(self) -> str:
        """The temp folder (created on first use)."""
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="tunerlib_taco_")
        return self._dir

    def check(self) -> None:
        """Raise :class:`HarnessError` unless the compiler exists and builds OpenMP code."""
        if shutil.which(self.cc) is None:
            raise HarnessError(f"no C compiler {self.cc!r} on PATH; install gcc or pass --cc PATH")
        try:
            self.build(_OMP_PROBE, symbol="tunerlib_probe")
        except CompileError as exc:
            raise HarnessError(f"'{self.cc} {' '.join(self.flags)}' cannot build OpenMP code: "
                               f"{exc.first_line}; install OpenMP (libgomp) or fix --cc/--cflags") from None

    def key(self, source: str) -> str:
        """Cache key of ``source`` under this compiler command."""
        text = "\0".join([self.cc] + self.flags + [source])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def build(self, source: str, symbol: str = "compute") -> Optional[CompiledKernel]:
        """Compile and load ``source`` (cached); raises :class:`CompileError`.  Returns the kernel,
        or None for a probe library whose ``symbol`` is not ``compute``."""
        key = self.key(source)
        if key in self._cache:
            return self._cache[key]
        src, lib = (os.path.join(self.workdir, f"k{key[:24]}{ext}") for ext in (".c", ".so"))
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(source)
        start = time.perf_counter()
        try:
            proc = subprocess.run([self.cc, *self.flags, "-o", lib, src], capture_output=True, text=True,
                                  timeout=self.timeout_s, errors="replace")
        except subprocess.TimeoutExpired:
            raise CompileError(f"compiler timed out after {self.timeout_s:g} s", self.timeout_s) from None
        except OSError as exc:
            raise CompileError(f"cannot run {self.cc!r}: {exc.strerror}", 0.0) from None
        seconds = time.perf_counter() - start
        self.compiles += symbol == "compute"
        if proc.returncode != 0:
            raise CompileError(first_error_line(proc.stderr, self.workdir), seconds)
        loaded = ctypes.CDLL(lib)
        if not hasattr(loaded, symbol):
            raise CompileError(f"the source defines no function {symbol!r}", seconds)
        kernel = CompiledKernel(key, lib, seconds, loaded) if symbol == "compute" else None
        if kernel is not None:
            self._cache[key] = kernel
        return kernel

    def close(self) -> None:
        """Delete the temp folder (loaded libraries stay mapped until the process ends)."""
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
            self._cache.clear()


def first_error_line(stderr: str, workdir: str = "") -> str:
    """The compiler's first line containing ``error`` (else its first line), folder stripped."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    pick = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "compiler failed")
    if workdir:
        pick = pick.replace(workdir.rstrip("/") + "/", "")
    return pick[:300]


# ------------------------------------------------------------------ timing
#: the TACO example's timing: at most 20 timed runs, 0.5 s of them (no warm-up after the check run)
DEFAULT_POLICY = TimingPolicy(warmup=0, max_runs=20, budget_s=0.5)


class KernelStopped(RuntimeError):
    """A timed run returned a non-zero status (it stopped at its deadline)."""


def bind(problem: Problem, backend: str) -> Tuple[Operand, List[BoundTensor]]:
    """A fresh zero output and the bound argument list (output first)."""
    out = problem.new_output(backend)
    return out, [BoundTensor(op) for op in problem.operands(backend, out)]


def _timed_call(kernel: CompiledKernel, args: Sequence[BoundTensor], timeout: float):
    """A sampler for :mod:`tunerlib.measure`: one call's wall seconds; raises :class:`KernelStopped`."""
    def sample() -> float:
        start = time.perf_counter()
        status = kernel.call(args, timeout)
        elapsed = time.perf_counter() - start
        if status != 0:
            raise KernelStopped(f"status {status}")
        return elapsed
    return sample


def measure(kernel: CompiledKernel, problem: Problem, backend: str, policy: TimingPolicy,
            run_timeout_s: float, limit: Optional[float] = None) -> Result:
    """Check-run, verify and time ``kernel`` on ``problem`` (see the module docstring).

    Returns OK (``time`` = min of k seconds), TIMEOUT (the deadline passed, or slower than ``limit``
    in a warm run: :func:`tunerlib.measure.time_after_check`), or ERROR (wrong output or a non-zero
    status).
    """
    timeout = min(run_timeout_s, check_run_limit(limit)) if limit else run_timeout_s
    out, args = bind(problem, backend)
    extra: Dict[str, object] = {"compile_s": round(kernel.compile_s, 4)}
    start = time.perf_counter()
    status = kernel.call(args, timeout)
    first = time.perf_counter() - start
    extra["first_run_s"] = first
    if status == 1:
        return timed_out(f"run stopped after {first:.3g} s", time=first, **extra)
    if status != 0:
        return failed(f"kernel returned status {status}", **extra)
    ok, err = problem.matches(backend, out.vals)
    if not ok:
        return wrong_output(f"max abs error {err:.3g}", **extra)
    try:
        timing = time_after_check(_timed_call(kernel, args, timeout), first, policy, limit)
    except KernelStopped:
        return timed_out("a timed run passed the deadline", time=first, **extra)
    if timing.stopped_because == OVER_LIMIT:
        return over_limit(timing.best, limit, runs=timing.runs, **extra)
    extra.update(runs=timing.runs, median_s=timing.median)
    return Result(time=timing.best, extra=extra)


def retime_kernels(runs: Dict[str, Tuple[CompiledKernel, List[BoundTensor]]], rounds: int = 15,
                   timeout: float = 10.0) -> Dict[str, float]:
    """Min-of-``rounds`` seconds of several bound kernels re-timed in interleaved rounds
    (:func:`tunerlib.measure.time_interleaved`; each round warms each kernel once, then times it)."""
    if not runs or rounds < 1:
        return {}
    fns = {name: (lambda k=kernel, a=args: k.call(a, timeout)) for name, (kernel, args) in runs.items()}
    return {name: t.best for name, t in time_interleaved(fns, fixed_rounds(rounds)).items()}
