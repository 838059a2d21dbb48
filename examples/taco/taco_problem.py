"""One kernel instance: its operands in TACO's layout and the scipy/numpy reference output.

:func:`build_problem` takes the sparse input (a CSR matrix for spmv/spmm/sddmm, a 3-tensor for
ttv/mttkrp) and the dense sizes, draws the dense operands from ``numpy.random.default_rng(seed)``
and computes the expected output with scipy/numpy (never with generated code).
:meth:`Problem.operands` lists the tensors in the argument order of the generated ``compute``
(output first) in the layout of a backend (``builtin`` or ``taco``; they differ only in the
SDDMM/TTV output, see ``taco_kernels.py``); :meth:`Problem.expected` is the matching flat output.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import scipy.sparse as sp

from taco_inputs import CooTensor, Csf, InputError, csf
from taco_kernels import KERNELS

#: verification tolerance: |out - ref| <= ATOL_FRACTION * max|ref| + RTOL * |ref|
RTOL = 1e-9
ATOL_FRACTION = 1e-9

Level = Optional[Tuple[np.ndarray, np.ndarray]]


@dataclass
class Operand:
    """A tensor in TACO's storage: per level ``None`` (dense) or ``(pos, crd)`` int32 arrays."""

    name: str
    dims: Tuple[int, ...]
    levels: List[Level]
    vals: np.ndarray

    @property
    def format(self) -> str:
        """TACO format letters (``d``/``s`` per level)."""
        return "".join("d" if lv is None else "s" for lv in self.levels)


def dense(name: str, array: np.ndarray) -> Operand:
    """A dense operand holding ``array`` (C order)."""
    arr = np.ascontiguousarray(array, dtype=np.float64)
    return Operand(name, tuple(int(d) for d in arr.shape), [None] * arr.ndim, arr.reshape(-1))


@dataclass
class Problem:
    """A kernel instance (see the module docstring)."""

    kernel: str
    inputs: List[Operand]
    reference: np.ndarray                 # dense expected output
    pattern: Optional[Operand] = None     # builtin output layout for sddmm/ttv (values on a pattern)
    pattern_index: Optional[Tuple[np.ndarray, ...]] = None   # dense coordinates of each pattern value
    description: str = ""
    stats: Dict[str, float] = field(default_factory=dict)

    def _uses_pattern(self, backend: str) -> bool:
        return backend == "builtin" and self.pattern is not None

    def new_output(self, backend: str) -> Operand:
        """A zero-filled output operand in ``backend``'s layout."""
        if self._uses_pattern(backend):
            p = self.pattern
            return Operand(p.name, p.dims, p.levels, np.zeros_like(p.vals))
        out = KERNELS[self.kernel].output.name
        return dense(out, np.zeros_like(self.reference))

    def operands(self, backend: str, output: Operand) -> List[Operand]:
        """``[output] + inputs`` in the generated kernel's argument order."""
        return [output] + list(self.inputs)

    def expected(self, backend: str) -> np.ndarray:
        """Flat expected output values in ``backend``'s layout."""
        if self._uses_pattern(backend):
            return self.reference[self.pattern_index]
        return self.reference.reshape(-1)

    def matches(self, backend: str, values: np.ndarray) -> Tuple[bool, float]:
        """(output within tolerance, max abs error) for flat output ``values``."""
        ref = self.expected(backend)
        if values.shape != ref.shape:
            return False, float("inf")
        err = np.abs(values - ref)
        max_err = float(err.max()) if err.size else 0.0
        scale = float(np.abs(ref).max()) if ref.size else 0.0
        ok = bool(np.all(np.isfinite(values)) and np.all(err <= ATOL_FRACTION * scale + RTOL * np.abs(ref)))
        return ok, max_err


# ------------------------------------------------------------------ builders
def _csr_operand(name: str, m: sp.csr_matrix) -> Operand:
    return Operand(name, m.shape, [None, (m.indptr, m.indices)], np.ascontiguousarray(m.data))


def build_problem(kernel: str, matrix: Optional[sp.csr_matrix] = None, tensor: Optional[CooTensor] = None,
                  dense_size: int = 64, seed: int = 0) -> Problem:
    """The :class:`Problem` of ``kernel`` on the given sparse input (``dense_size``: SpMM's
    columns, SDDMM's inner dimension, MTTKRP's rank; ignored by spmv and ttv)."""
    info = KERNELS[kernel]
    if info.is_tensor_kernel and tensor is None:
        raise InputError(f"{kernel} needs a 3-tensor (--tensor FILE.tns or the random one)")
    if not info.is_tensor_kernel and matrix is None:
        raise InputError(f"{kernel} needs a matrix (--matrix FILE.mtx or the random one)")
    if dense_size < 1:
        raise InputError(f"the dense size must be at least 1, got {dense_size}")
    rng = np.random.default_rng(seed + 7919)
    builder = {"spmv": _spmv, "spmm": _spmm, "sddmm": _sddmm, "ttv": _ttv, "mttkrp": _mttkrp}[kernel]
    problem = builder(matrix if matrix is not None else tensor, dense_size, rng)
    problem.kernel = kernel
    return problem


def _uniform(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return 0.5 + rng.random(shape)


def _matrix_stats(m: sp.csr_matrix) -> Dict[str, float]:
    return {"rows": m.shape[0], "cols": m.shape[1], "nnz": m.nnz}


def _spmv(m: sp.csr_matrix, _: int, rng: np.random.Generator) -> Problem:
    x = _uniform(rng, m.shape[1])
    return Problem("spmv", [_csr_operand("A", m), dense("x", x)], m @ x,
                   description=f"{m.shape[0]}x{m.shape[1]} nnz {m.nnz}", stats=_matrix_stats(m))


def _spmm(m: sp.csr_matrix, k: int, rng: np.random.Generator) -> Problem:
    c = _uniform(rng, m.shape[1], k)
    return Problem("spmm", [_csr_operand("B", m), dense("C", c)], np.asarray(m @ c),
                   description=f"{m.shape[0]}x{m.shape[1]} nnz {m.nnz}, C {m.shape[1]}x{k}",
                   stats=dict(_matrix_stats(m), dense=k))


def _sddmm(m: sp.csr_matrix, k: int, rng: np.random.Generator) -> Problem:
    c, d = _uniform(rng, m.shape[0], k), _uniform(rng, k, m.shape[1])
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    sampled = m.data * np.einsum("ij,ji->i", c[rows], d[:, m.indices])
    ref = np.zeros(m.shape)
    ref[rows, m.indices] = sampled
    pattern = Operand("A", m.shape, [None, (m.indptr, m.indices)], np.zeros(m.nnz))
    return Problem("sddmm", [_csr_operand("B", m), dense("C", c), dense("D", d)], ref, pattern,
                   (rows, m.indices.astype(np.int64)),
                   f"{m.shape[0]}x{m.shape[1]} nnz {m.nnz}, inner dimension {k}",
                   dict(_matrix_stats(m), dense=k))


def _tensor_operand(t: CooTensor) -> Tuple[Operand, Csf]:
    c = csf(t)
    return Operand("B", t.dims, [None, (c.pos2, c.crd2), (c.pos3, c.crd3)], c.vals), c


def _tensor_stats(t: CooTensor) -> Dict[str, float]:
    return {"I": t.dims[0], "J": t.dims[1], "K": t.dims[2], "nnz": t.nnz}


def _ttv(t: CooTensor, _: int, rng: np.random.Generator) -> Problem:
    b, c = _tensor_operand(t)
    vec = _uniform(rng, t.dims[2])
    fiber_of = np.repeat(np.arange(c.crd2.size), np.diff(c.pos3))
    fibers = np.bincount(fiber_of, weights=c.vals * vec[c.crd3], minlength=c.crd2.size)
    ref = np.zeros(t.dims[:2])
    ref[c.fiber_rows, c.crd2] = fibers
    pattern = Operand("A", t.dims[:2], [None, (c.pos2, c.crd2)], np.zeros(c.crd2.size))
    return Problem("ttv", [b, dense("c", vec)], ref, pattern, (c.fiber_rows, c.crd2.astype(np.int64)),
                   f"{'x'.join(map(str, t.dims))} nnz {t.nnz}, {c.crd2.size} fibers",
                   dict(_tensor_stats(t), fibers=c.crd2.size))


def _mttkrp(t: CooTensor, rank: int, rng: np.random.Generator) -> Problem:
    b, _ = _tensor_operand(t)
    cm, dm = _uniform(rng, t.dims[1], rank), _uniform(rng, t.dims[2], rank)
    i, k, l = t.coords[:, 0], t.coords[:, 1], t.coords[:, 2]
    ref = np.zeros((t.dims[0], rank))
    np.add.at(ref, i, t.vals[:, None] * cm[k] * dm[l])
    return Problem("mttkrp", [b, dense("C", cm), dense("D", dm)], ref,
                   description=f"{'x'.join(map(str, t.dims))} nnz {t.nnz}, rank {rank}",
                   stats=dict(_tensor_stats(t), dense=rank))
