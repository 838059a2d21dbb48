"""The ``--backend taco`` code generator: the real TACO command-line tool writes the kernel.

For one configuration :func:`taco_command` builds::

    taco "<expr>" -f=<tensor>:<format> ... -s="split(...),pos(...),reorder(...),parallelize(...)"
         -schedule=static|dynamic,<omp_chunk_size> -nthreads=<omp_num_threads> -write-source=kernel.c

(the same schedules as the built-in generator, see ``taco_codegen.py``; MTTKRP's unroll becomes TACO's
``unroll(<innermost loop>, <factor>)``).  :meth:`TacoCli.generate` runs it in a fresh temporary
folder, with ``TMPDIR`` pointing into it so that the folders TACO leaves behind when it aborts go
too, kills it after ``timeout_s`` and always removes the folder.  TACO's generated code reads the
OpenMP schedule at run time (``schedule(runtime)``); the harness sets it through
``tunerlib_omp`` (``taco_codegen.GLUE``, appended to TACO's source with :data:`TACO_PRELUDE`).
TACO's own ``-time`` is not used (broken upstream): the caller compiles, verifies and times the
source like a built-in kernel.  A schedule TACO rejects raises :class:`TacoFailure` with TACO's
first error line.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from typing import Any, List, Mapping

from taco_codegen import GLUE, loop_order
from taco_kernels import KERNELS

#: prepended to GLUE when appended to TACO's source (TACO's file defines no deadline variable)
TACO_PRELUDE = "\n#include <omp.h>\nstatic double tunerlib_deadline_ = 1e300;\n"
SOURCE_NAME = "kernel.c"


class TacoFailure(RuntimeError):
    """TACO rejected a schedule, crashed, timed out or wrote no source (one-line message)."""


def schedule_string(kernel: str, cfg: Mapping[str, Any]) -> str:
    """The ``-s=`` directives of ``cfg`` for TACO's CLI."""
    order = ",".join(loop_order(kernel, cfg["permutation"]))
    reorder = f"reorder({order})"
    par = f"parallelize({KERNELS[kernel].parallel},CPUThread,NoRaces)"
    if kernel == "spmv":
        steps = [f"split(i,i0,i1,{cfg['chunk_size']})", f"split(i1,i10,i11,{cfg['chunk_size2']})",
                 "pos(j,jpos,A)", f"split(jpos,jpos0,jpos1,{cfg['chunk_size3']})"]
    elif kernel in ("spmm", "sddmm"):
        steps = [f"split(i,i0,i1,{cfg['chunk_size']})", "pos(j,jpos,B)",
                 f"split(jpos,jpos0,jpos1,{cfg['unroll_factor']})"]
    elif kernel == "ttv":
        steps = [f"split(i,i0,i1,{cfg['chunk_size_i']})", "fuse(i1,j,f)", "pos(f,fpos,B)",
                 f"split(fpos,chunk,fpos2,{cfg['chunk_size_fpos']})", "pos(k,kpos,B)",
                 f"split(kpos,kpos1,kpos2,{cfg['chunk_size_k']})"]
    else:
        innermost = loop_order(kernel, cfg["permutation"])[-1]
        steps = [f"split(i,i0,i1,{cfg['chunk_size']})"]
        return ",".join(steps + [reorder, f"unroll({innermost},{cfg['unroll_factor']})", par])
    return ",".join(steps + [reorder, par])


def taco_command(taco: str, kernel: str, cfg: Mapping[str, Any], out_file: str) -> List[str]:
    """The argument vector of one TACO call (no shell involved)."""
    info = KERNELS[kernel]
    formats = [f"-f={t.name}:{fmt}" for t, fmt in zip(info.tensors, info.formats("taco"))]
    return [taco, info.expression, *formats, f"-s={schedule_string(kernel, cfg)}",
            f"-schedule={cfg['omp_scheduling_type']},{int(cfg['omp_chunk_size'])}",
            f"-nthreads={int(cfg['omp_num_threads'])}", f"-write-source={out_file}"]


class TacoCli:
    """Runs the TACO executable ``path`` once per configuration (see the module docstring)."""

    def __init__(self, path: str, timeout_s: float = 60.0) -> None:
        self.path, self.timeout_s = path, timeout_s
        self.calls = 0

    def check(self) -> None:
        """Raise :class:`TacoFailure` unless ``path`` is an executable file."""
        resolved = shutil.which(self.path) if os.sep not in self.path else self.path
        if not resolved or not os.path.isfile(resolved) or not os.access(resolved, os.X_OK):
            raise TacoFailure(f"TACO executable {self.path!r} not found or not executable; build TACO "
                              "(tensor-compiler/taco) and pass --taco PATH/TO/bin/taco")
        self.path = resolved

    def generate(self, kernel: str, cfg: Mapping[str, Any]) -> str:
        """TACO's C source for ``cfg`` plus the harness glue; raises :class:`TacoFailure`."""
        self.calls += 1
        folder = tempfile.mkdtemp(prefix="tunerlib_taco_cli_")
        try:
            out_file = os.path.join(folder, SOURCE_NAME)
            self._run(taco_command(self.path, kernel, cfg, out_file), folder)
            if not os.path.isfile(out_file) or os.path.getsize(out_file) == 0:
                raise TacoFailure("taco wrote no source file (-write-source)")
            with open(out_file, encoding="utf-8", errors="replace") as fh:
                return fh.read() + TACO_PRELUDE + GLUE
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _run(self, argv: List[str], folder: str) -> None:
        env = dict(os.environ, TMPDIR=folder)
        try:
            proc = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                                  errors="replace", timeout=self.timeout_s, start_new_session=True)
        except subprocess.TimeoutExpired:
            raise TacoFailure(f"taco timed out after {self.timeout_s:g} s") from None
        except OSError as exc:
            raise TacoFailure(f"cannot run taco {self.path!r}: {exc.strerror}") from None
        if proc.returncode != 0:
            raise TacoFailure(_failure_line(proc.returncode, proc.stderr + "\n" + proc.stdout))


def _failure_line(code: int, output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    pick = next((ln for ln in lines if "error" in ln.lower() or "assert" in ln.lower()),
                lines[0] if lines else "")
    if code < 0:
        try:
            how = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
    else:
        how = f"exit status {code}"
    return f"taco failed ({how}){': ' + pick[:300] if pick else ''}"
