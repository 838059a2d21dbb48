"""Search spaces of the TACO kernels, exactly as in the BaCO paper's table (benchmark-taco_spaces.md).

Every space has power-of-two parameters (:class:`PowerOfTwoParameter`, searched on the exponent),
``omp_scheduling_type`` in {static, dynamic} (an enum) and ``permutation``, a
:class:`PermutationParameter` over the loop indices 0..4: ``permutation[p]`` is the loop placed at
position ``p`` (outermost first; the loops are named in ``taco_kernels.py``), so the paper's ``p_ik``,
the position of loop ``k``, is ``index(permutation, k)`` in a constraint expression.

==========  ===============================================================  ===========================
kernel      parameters                                                        known constraints
==========  ===============================================================  ===========================
spmm        chunk_size, unroll_factor 2..512; omp_chunk_size 1..256;          unroll_factor < chunk_size;
            omp_num_threads 1..32                                             p0<p3, p1<p3, p0<p2, p1<p2,
                                                                              (p3<p2) or (p3<p4)
sddmm       as spmm                                                           unroll_factor < chunk_size;
                                                                              ((p2<p4) and (p0<p2) and
                                                                              (p1<p2)) or ((p4<p2) and
                                                                              (p0<p4) and (p1<p4))
spmv        chunk_size, chunk_size2, chunk_size3 2..1024; omp_chunk_size      p4 == 4
            1..256; omp_num_threads 1..64
ttv         chunk_size_i, chunk_size_fpos 2..1024; chunk_size_k 1..1024;      none
            omp_chunk_size 1..256; omp_num_threads 1..64
mttkrp      chunk_size, unroll_factor 2..1024; omp_chunk_size 1..256;         unroll_factor < chunk_size
            omp_num_threads 1..64
==========  ===============================================================  ===========================

Defaults are the table's; the expert ("reference") schedule is the paper client's: chunk 16,
unroll 8, identity order, static, omp chunk 1, 32 threads.  For spmv its two other chunk sizes
are the client's defaults (``chunk_size2 = chunk_size3 = 8``); for ttv the fiber chunk is the
chunk and the k split the unroll (``chunk_size_i = chunk_size_fpos = 16``, ``chunk_size_k = 8``).
:func:`legality_constraints` gives the code generator's loop-order rules as optional extra known
constraints (``--strict-orders``); they are not part of the paper's spaces.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from taco_codegen import nest_for
from taco_kernels import KERNELS
from taco_loopnest import precedence_pairs
from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, PermutationParameter,
                                 PowerOfTwoParameter)

SCHEDULES = ["static", "dynamic"]
IDENTITY = [0, 1, 2, 3, 4]

#: per kernel: (name, min, max) of the power-of-two parameters, in the table's order
RANGES: Dict[str, List[Tuple[str, int, int]]] = {
    "spmm": [("chunk_size", 2, 512), ("unroll_factor", 2, 512), ("omp_chunk_size", 1, 256),
             ("omp_num_threads", 1, 32)],
    "sddmm": [("chunk_size", 2, 512), ("unroll_factor", 2, 512), ("omp_chunk_size", 1, 256),
              ("omp_num_threads", 1, 32)],
    "spmv": [("chunk_size", 2, 1024), ("chunk_size2", 2, 1024), ("chunk_size3", 2, 1024),
             ("omp_chunk_size", 1, 256), ("omp_num_threads", 1, 64)],
    "ttv": [("chunk_size_fpos", 2, 1024), ("chunk_size_i", 2, 1024), ("chunk_size_k", 1, 1024),
            ("omp_chunk_size", 1, 256), ("omp_num_threads", 1, 64)],
    "mttkrp": [("chunk_size", 2, 1024), ("unroll_factor", 2, 1024), ("omp_chunk_size", 1, 256),
               ("omp_num_threads", 1, 64)],
}


def _p(k: int) -> str:
    return f"index(permutation, {k})"


#: per kernel: (name, expression) of the BaCO table's known constraints
CONSTRAINTS: Dict[str, List[Tuple[str, str]]] = {
    "spmm": [("unroll < chunk", "unroll_factor < chunk_size"),
             ("p_i0 < p_i3", f"{_p(0)} < {_p(3)}"), ("p_i1 < p_i3", f"{_p(1)} < {_p(3)}"),
             ("p_i0 < p_i2", f"{_p(0)} < {_p(2)}"), ("p_i1 < p_i2", f"{_p(1)} < {_p(2)}"),
             ("p_i3 < p_i2 or p_i3 < p_i4", f"({_p(3)} < {_p(2)}) or ({_p(3)} < {_p(4)})")],
    "sddmm": [("unroll < chunk", "unroll_factor < chunk_size"),
              ("first of i2/i4 after i0 and i1",
               f"(({_p(2)} < {_p(4)}) and ({_p(0)} < {_p(2)}) and ({_p(1)} < {_p(2)})) or "
               f"(({_p(4)} < {_p(2)}) and ({_p(0)} < {_p(4)}) and ({_p(1)} < {_p(4)}))")],
    "spmv": [("last loop fixed", f"{_p(4)} == 4")],
    "ttv": [],
    "mttkrp": [("unroll < chunk", "unroll_factor < chunk_size")],
}

_COMMON = {"omp_chunk_size": 1, "omp_num_threads": 32, "omp_scheduling_type": "static"}
DEFAULTS: Dict[str, Dict[str, Any]] = {
    "spmm": dict(chunk_size=512, unroll_factor=256, omp_chunk_size=256, omp_num_threads=32,
                 omp_scheduling_type="static"),
    "sddmm": dict(chunk_size=512, unroll_factor=256, omp_chunk_size=256, omp_num_threads=32,
                  omp_scheduling_type="static"),
    "spmv": dict(_COMMON, chunk_size=16, chunk_size2=16, chunk_size3=16),
    "ttv": dict(_COMMON, chunk_size_fpos=2, chunk_size_i=4, chunk_size_k=8),
    "mttkrp": dict(_COMMON, chunk_size=16, unroll_factor=8),
}
EXPERTS: Dict[str, Dict[str, Any]] = {
    "spmm": dict(_COMMON, chunk_size=16, unroll_factor=8),
    "sddmm": dict(_COMMON, chunk_size=16, unroll_factor=8),
    "spmv": dict(_COMMON, chunk_size=16, chunk_size2=8, chunk_size3=8),
    "ttv": dict(_COMMON, chunk_size_i=16, chunk_size_fpos=16, chunk_size_k=8),
    "mttkrp": dict(_COMMON, chunk_size=16, unroll_factor=8),
}


def build_space(kernel: str, strict_orders: bool = False) -> ConfigurationManipulator:
    """A fresh search space for ``kernel``; ``strict_orders`` adds :func:`legality_constraints`."""
    m = ConfigurationManipulator()
    for name, lo, hi in RANGES[kernel]:
        m.add_parameter(PowerOfTwoParameter(name, lo, hi))
    m.add_parameter(EnumParameter("omp_scheduling_type", SCHEDULES))
    m.add_parameter(PermutationParameter("permutation", list(IDENTITY)))
    for name, expr in CONSTRAINTS[kernel]:
        m.add_constraint(expr, name=name)
    if strict_orders:
        for name, expr in legality_constraints(kernel):
            if expr not in [e for _, e in CONSTRAINTS[kernel]]:
                m.add_constraint(expr, name=name)
    return m


def legality_constraints(kernel: str) -> List[Tuple[str, str]]:
    """The generator's loop-order rules as (name, expression): loop ``outer`` before ``inner``."""
    loops = list(KERNELS[kernel].loops)
    out = []
    for outer, inner in precedence_pairs(nest_for(kernel, expert_config(kernel))):
        a, b = loops.index(outer), loops.index(inner)
        out.append((f"legal: {outer} outside {inner}", f"{_p(a)} < {_p(b)}"))
    return out


def default_config(kernel: str) -> Dict[str, Any]:
    """The BaCO table's default configuration (identity loop order)."""
    return dict(DEFAULTS[kernel], permutation=list(IDENTITY))


def expert_config(kernel: str) -> Dict[str, Any]:
    """The expert (paper client's reference) configuration (identity loop order)."""
    return dict(EXPERTS[kernel], permutation=list(IDENTITY))


def machine_threads() -> int:
    """Threads this machine gives the tuner: the CPUs in its affinity mask (os.cpu_count() where
    there is no affinity call)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def baselines(kernel: str, threads: Optional[int] = None) -> List[Tuple[str, Dict[str, Any]]]:
    """The table's default and the expert schedule, each as given and -- when it asks for another
    number of threads than this machine has (both ask for 32) -- mapped to this machine:
    ``[("default", cfg), ("default, 2 threads", cfg), ("expert", cfg), ("expert, 2 threads", cfg)]``.
    The mapped forms are baselines, not points of the search space (2 is; 6 would not be)."""
    threads = threads or machine_threads()
    out = []
    for name, cfg in (("default", default_config(kernel)), ("expert", expert_config(kernel))):
        out.append((name, cfg))
        if cfg["omp_num_threads"] != threads:
            out.append((f"{name}, {threads} thread{'s' if threads > 1 else ''}", dict(cfg, omp_num_threads=threads)))
    return out


def describe(kernel: str, cfg: Dict[str, Any]) -> str:
    """One line: split factors, OpenMP settings and the loop order by name."""
    knobs = ", ".join(f"{n}={cfg[n]}" for n, _, _ in RANGES[kernel] if not n.startswith("omp_"))
    order = " ".join(KERNELS[kernel].loops[int(k)] for k in cfg["permutation"])
    return (f"{knobs}; omp {cfg['omp_scheduling_type']},{cfg['omp_chunk_size']} x "
            f"{cfg['omp_num_threads']} threads; loops {order}")
