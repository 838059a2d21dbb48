"""tunerlib's TACO-style code generator: C + OpenMP for one schedule of one kernel.

The schedules mirror the BaCO TACO client (see ``taco_kernels.py`` for the expressions):

* **spmv**  ``split(i,i0,i1,chunk_size)``, ``split(i1,i10,i11,chunk_size2)``, the row's nonzeros
  split in *position* space ``jpos -> jpos0, jpos1`` by ``chunk_size3``; loops
  ``i0 i10 i11 jpos1 jpos0``.  (The client splits ``j`` in coordinate space; a compressed level
  cannot be split that way without a search, so this generator -- like TACO's ``pos`` -- splits
  positions: ``p = row_start + jpos0*chunk_size3 + jpos1``.)
* **spmm / sddmm**  ``split(i,i0,i1,chunk_size)``, ``pos(j,jpos,B)``,
  ``split(jpos,jpos0,jpos1,unroll_factor)``; loops ``i0 i1 jpos0 k jpos1`` (``k`` dense).
* **ttv**  ``split(i,i0,i1,chunk_size_i)``, ``fuse(i1,j,f)``, ``pos(f,fpos,B)``,
  ``split(fpos,chunk,fpos2,chunk_size_fpos)``, ``pos(k,kpos,B)``,
  ``split(kpos,kpos1,kpos2,chunk_size_k)``; loops ``i0 chunk fpos2 kpos1 kpos2``.
* **mttkrp**  ``split(i,i0,i1,chunk_size)``; loops ``i0 i1 k l j`` (``k``, ``l`` walk B's
  compressed levels, ``j`` the dense rank); ``unroll_factor`` becomes ``#pragma GCC unroll`` on
  the innermost loop (TACO's ``unroll`` directive).

The permutation reorders the five loops; the parallel loop (``i0``, TTV ``chunk``, as in the
client's ``parallelize``) gets ``#pragma omp parallel for schedule(static|dynamic, omp_chunk_size)
num_threads(omp_num_threads)`` wherever the order puts it.  Every generated nest is race-free:
iterations of the parallel loop write disjoint outputs, and loops outside it run sequentially.

**Which loop orders are legal.**  A split's outer loop needs the extent of what it splits: the
position loops ``jpos0`` (spmv/spmm/sddmm) need the row ``i`` (all ``i`` loops outside them);
TTV's ``chunk`` needs its row block ``i0`` and ``kpos1`` needs the fiber (``i0``, ``chunk``,
``fpos2``); MTTKRP's ``k`` needs ``i`` (``i0``, ``i1``) and ``l`` needs ``k``.  Inner split loops
(``jpos1``, ``fpos2``, ``kpos2``, ``i1``, ``i11``) and dense loops may go anywhere.  For spmv,
spmm and sddmm the BaCO table's known constraints already exclude every illegal order; for ttv
and mttkrp the table has no order constraint, so an illegal order raises :class:`IllegalOrder`
and the tuner reports it as ``INFEASIBLE`` without compiling (a hidden constraint, like TACO
aborting on a schedule it cannot lower) -- unless ``--strict-orders`` adds these rules as known
constraints (``taco_spaces.legality_constraints``).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping

from taco_kernels import KERNELS, KernelInfo
from taco_loopnest import Extent, IllegalOrder, Loop, Nest, Value, emit, names

__all__ = ["IllegalOrder", "generate", "nest_for", "loop_order", "HEADER", "GLUE", "omp_pragma"]

#: C prelude of every builtin kernel: includes, TACO_MIN and a taco_tensor_t with TACO's layout
HEADER = """\
#include <stdint.h>
#include <string.h>
#include <omp.h>
#define TACO_MIN(_a, _b) ((_a) < (_b) ? (_a) : (_b))
#ifndef TACO_TENSOR_T_DEFINED
#define TACO_TENSOR_T_DEFINED
typedef enum { taco_mode_dense, taco_mode_sparse } taco_mode_t;
typedef struct {
  int32_t      order;
  int32_t*     dimensions;
  int32_t      csize;
  int32_t*     mode_ordering;
  taco_mode_t* mode_types;
  uint8_t***   indices;
  uint8_t*     vals;
  uint8_t*     fill_value;
  int32_t      vals_size;
} taco_tensor_t;
#endif
static double tunerlib_deadline_ = 1e300;
"""

#: C appended to every kernel (builtin and TACO's): deadline and OpenMP runtime settings
GLUE = """
/* tunerlib harness glue */
#include <omp.h>
void tunerlib_arm(double seconds) { tunerlib_deadline_ = omp_get_wtime() + seconds; }
void tunerlib_omp(int dynamic, int chunk, int threads) {
  omp_set_schedule(dynamic ? omp_sched_dynamic : omp_sched_static, chunk);
  omp_set_num_threads(threads);
}
"""


def omp_pragma(cfg: Mapping[str, Any]) -> str:
    """The ``#pragma omp parallel for`` line of a configuration."""
    kind = "dynamic" if cfg["omp_scheduling_type"] == "dynamic" else "static"
    return (f"#pragma omp parallel for schedule({kind}, {int(cfg['omp_chunk_size'])}) "
            f"num_threads({int(cfg['omp_num_threads'])})")


def loop_order(kernel: str, permutation) -> List[str]:
    """Loop names outermost first: ``permutation[p]`` is the loop index at position ``p``."""
    loops = KERNELS[kernel].loops
    return [loops[int(k)] for k in permutation]


# ------------------------------------------------------------------ shared pieces
def _row_split(total: str, chunk: int) -> List[Loop]:
    """``i = i0*chunk + i1`` with exact bounds whichever of i0/i1 is inner."""
    return [Loop("i0", (Extent(names("i1"), f"({total} - i1 + {chunk} - 1) / {chunk}", names("i")),
                        Extent(names(), f"({total} + {chunk} - 1) / {chunk}"))),
            Loop("i1", (Extent(names("i0"), f"TACO_MIN({chunk}, {total} - i0 * {chunk})", names("i")),
                        Extent(names(), f"{chunk}")))]


def _pos_split(outer: str, inner: str, begin: str, end: str, value: str, factor: int,
               needs: str) -> List[Loop]:
    """Position split of the segment [begin, end) that value ``needs`` declares:
    ``value = begin + outer*factor + inner`` with exact bounds whichever loop is inner."""
    length = f"{end} - {begin}"
    return [Loop(outer, (Extent(names(needs, inner), f"({length} - {inner} + {factor} - 1) / {factor}",
                                names(value)),
                         Extent(names(needs), f"({length} + {factor} - 1) / {factor}"))),
            Loop(inner, (Extent(names(needs, outer), f"TACO_MIN({factor}, {length} - {outer} * {factor})",
                                names(value)),
                         Extent(names(), f"{factor}")))]


def _row_values(total: str, chunk: int, tensor: str) -> List[Value]:
    return [Value("i", f"int32_t i = i0 * {chunk} + i1;", names("i0", "i1"), f"i < {total}"),
            Value("row", f"int32_t p{tensor}2 = {tensor}2_pos[i];\nint32_t p{tensor}2_end = {tensor}2_pos[i + 1];",
                  names("i"))]


# ------------------------------------------------------------------ kernels
def _spmv(cfg: Mapping[str, Any]) -> Nest:
    c1, c2, c3 = int(cfg["chunk_size"]), int(cfg["chunk_size2"]), int(cfg["chunk_size3"])
    loops = [
        Loop("i0", (Extent(names("i1"), f"(N - i1 + {c1} - 1) / {c1}", names("i")),
                    Extent(names(), f"(N + {c1} - 1) / {c1}"))),
        Loop("i10", (Extent(names("i11"), f"({c1} - i11 + {c2} - 1) / {c2}", names("i1")),
                     Extent(names(), f"({c1} + {c2} - 1) / {c2}"))),
        Loop("i11", (Extent(names("i0", "i10"), f"TACO_MIN(TACO_MIN({c2}, {c1} - i10 * {c2}), "
                                                f"N - (i0 * {c1} + i10 * {c2}))", names("i1", "i")),
                     Extent(names("i10"), f"TACO_MIN({c2}, {c1} - i10 * {c2})", names("i1")),
                     Extent(names(), f"{c2}"))),
    ] + _pos_split("jpos0", "jpos1", "pA2", "pA2_end", "p", c3, "row")
    values = [Value("i1", f"int32_t i1 = i10 * {c2} + i11;", names("i10", "i11"), f"i1 < {c1}"),
              Value("i", f"int32_t i = i0 * {c1} + i1;", names("i0", "i1"), "i < N"),
              Value("row", "int32_t pA2 = A2_pos[i];\nint32_t pA2_end = A2_pos[i + 1];", names("i")),
              Value("p", f"int32_t p = pA2 + jpos0 * {c3} + jpos1;", names("row", "jpos0", "jpos1"),
                    "p < pA2_end")]
    return Nest(tuple(_ordered(loops, "spmv")), tuple(values), "y_vals[i] += A_vals[p] * x_vals[A2_crd[p]];",
                names("i", "p"), "i0")


def _spmm_like(cfg: Mapping[str, Any], kernel: str, body: str) -> Nest:
    cs, u = int(cfg["chunk_size"]), int(cfg["unroll_factor"])
    loops = _row_split("N", cs) + [Loop("k", (Extent(names(), "K"),))] \
        + _pos_split("jpos0", "jpos1", "pB2", "pB2_end", "p", u, "row")
    values = _row_values("N", cs, "B") + [
        Value("p", f"int32_t p = pB2 + jpos0 * {u} + jpos1;", names("row", "jpos0", "jpos1"), "p < pB2_end"),
        Value("j", "int32_t j = B2_crd[p];", names("p"))]
    return Nest(tuple(_ordered(loops, kernel)), tuple(values), body, names("i", "p", "j", "k"), "i0")


def _spmm(cfg: Mapping[str, Any]) -> Nest:
    return _spmm_like(cfg, "spmm", "A_vals[i * K + k] += B_vals[p] * C_vals[j * K + k];")


def _sddmm(cfg: Mapping[str, Any]) -> Nest:
    return _spmm_like(cfg, "sddmm", "A_vals[p] += B_vals[p] * C_vals[i * K + k] * D_vals[k * M + j];")


def _ttv(cfg: Mapping[str, Any]) -> Nest:
    ci, cf, ck = int(cfg["chunk_size_i"]), int(cfg["chunk_size_fpos"]), int(cfg["chunk_size_k"])
    loops = [Loop("i0", (Extent(names(), f"(I + {ci} - 1) / {ci}"),))] \
        + _pos_split("chunk", "fpos2", "f_begin", "f_end", "f", cf, "blk") \
        + _pos_split("kpos1", "kpos2", "pB3", "pB3_end", "q", ck, "fib")
    values = [
        Value("blk", f"int32_t f_begin = B2_pos[i0 * {ci}];\n"
                     f"int32_t f_end = B2_pos[TACO_MIN(i0 * {ci} + {ci}, I)];", names("i0")),
        Value("f", f"int32_t f = f_begin + chunk * {cf} + fpos2;", names("blk", "chunk", "fpos2"), "f < f_end"),
        Value("fib", "int32_t pB3 = B3_pos[f];\nint32_t pB3_end = B3_pos[f + 1];", names("f")),
        Value("q", f"int32_t q = pB3 + kpos1 * {ck} + kpos2;", names("fib", "kpos1", "kpos2"), "q < pB3_end")]
    return Nest(tuple(_ordered(loops, "ttv")), tuple(values), "A_vals[f] += B_vals[q] * c_vals[B3_crd[q]];",
                names("f", "q"), "chunk")


def _mttkrp(cfg: Mapping[str, Any]) -> Nest:
    cs, u = int(cfg["chunk_size"]), int(cfg["unroll_factor"])
    loops = _row_split("I", cs) + [Loop("k", (Extent(names("row"), "pB2_end - pB2"),)),
                                   Loop("l", (Extent(names("fib"), "pB3_end - pB3"),)),
                                   Loop("j", (Extent(names(), "R"),))]
    values = _row_values("I", cs, "B") + [
        Value("fib", "int32_t kp = pB2 + k;\nint32_t kc = B2_crd[kp];\n"
                     "int32_t pB3 = B3_pos[kp];\nint32_t pB3_end = B3_pos[kp + 1];", names("row", "k")),
        Value("lv", "int32_t lp = pB3 + l;\nint32_t lc = B3_crd[lp];", names("fib", "l"))]
    body = "A_vals[i * R + j] += B_vals[lp] * C_vals[kc * R + j] * D_vals[lc * R + j];"
    return Nest(tuple(_ordered(loops, "mttkrp")), tuple(values), body, names("i", "lv", "j"), "i0", u)


def _ordered(loops: List[Loop], kernel: str) -> List[Loop]:
    by_name = {lp.name: lp for lp in loops}
    return [by_name[n] for n in KERNELS[kernel].loops]


_NESTS: Dict[str, Callable[[Mapping[str, Any]], Nest]] = {
    "spmv": _spmv, "spmm": _spmm, "sddmm": _sddmm, "ttv": _ttv, "mttkrp": _mttkrp}

#: kernel-specific scalar aliases read from the tensors (after the generic unpacking)
_ALIASES = {
    "spmv": ["int32_t N = A->dimensions[0];"],
    "spmm": ["int32_t N = B->dimensions[0];", "int32_t K = C->dimensions[1];"],
    "sddmm": ["int32_t N = B->dimensions[0];", "int32_t M = B->dimensions[1];", "int32_t K = C->dimensions[1];"],
    "ttv": ["int32_t I = B->dimensions[0];"],
    "mttkrp": ["int32_t I = B->dimensions[0];", "int32_t R = C->dimensions[1];"],
}


def nest_for(kernel: str, cfg: Mapping[str, Any]) -> Nest:
    """The loop nest of ``kernel`` with the split factors of ``cfg`` (order-independent)."""
    return _NESTS[kernel](cfg)


def _unpack(info: KernelInfo) -> List[str]:
    lines: List[str] = []
    for t, fmt in zip(info.tensors, info.formats("builtin")):
        for level, kind in enumerate(fmt, start=1):
            if kind == "s":
                for idx, what in ((0, "pos"), (1, "crd")):
                    lines.append(f"int32_t* restrict {t.name}{level}_{what} = "
                                 f"(int32_t*)({t.name}->indices[{level - 1}][{idx}]);")
        lines.append(f"double* restrict {t.name}_vals = (double*)({t.name}->vals);")
    out = info.output.name
    lines.append(f"memset({out}_vals, 0, sizeof(double) * (size_t){out}->vals_size);")
    return lines


def generate(kernel: str, cfg: Mapping[str, Any]) -> str:
    """Complete C source (``int compute(taco_tensor_t* ...)`` + glue) for ``cfg``.

    Raises :class:`IllegalOrder` when the permutation cannot be generated (see module docstring).
    """
    info = KERNELS[kernel]
    nest = nest_for(kernel, cfg)
    body = emit(nest, loop_order(kernel, cfg["permutation"]), omp_pragma(cfg))
    params = ", ".join(f"taco_tensor_t *{t.name}" for t in info.tensors)
    lines = [HEADER, f"/* {kernel}: {info.expression} */", f"int compute({params}) {{"]
    lines += ["  " + s for s in _ALIASES[kernel] + _unpack(info)]
    lines += body + ["  return 0;", "}", GLUE]
    return "\n".join(lines)
