"""Sparse inputs for the TACO example: Matrix Market and FROSTT readers, random generators, CSF.

* :func:`read_matrix` -- ``.mtx`` / ``.mtx.gz`` through ``scipy.io.mmread``; returns a canonical
  CSR matrix (duplicates summed, column indices sorted, ``float64`` values, ``int32`` indices);
  a value that is nan or inf is an error naming its line.
* :func:`read_tns` -- FROSTT text tensors: one nonzero per line, ``i j k value`` with 1-based
  coordinates; ``#`` starts a comment; the dimensions are the largest coordinates.
* :func:`random_matrix` / :func:`random_tensor` -- uniform random sparsity patterns with values in
  [0.5, 1.5) from ``numpy.random.default_rng(seed)`` (deterministic per seed).
* :func:`csf` -- coordinates to TACO's ``dss`` layout (dense ``i``, compressed ``j``, compressed
  ``k``): the level arrays the generated kernels read.

Every problem with a file is an :class:`InputError` whose message is one line naming the file
(and line) and what to fix.
"""
from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from typing import Iterator, List, Sequence, Tuple

import numpy as np
import scipy.io
import scipy.sparse as sp

#: largest dimension / nonzero count accepted (the generated kernels index with int32)
INT32_LIMIT = 2 ** 31 - 1


class InputError(ValueError):
    """A malformed or unusable input file or size (one-line message)."""


# ------------------------------------------------------------------ matrices
def read_matrix(path: str) -> sp.csr_matrix:
    """Read a Matrix Market file (``.mtx`` or ``.mtx.gz``) as a canonical CSR matrix."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file; give a Matrix Market .mtx or .mtx.gz file")
    try:
        data = scipy.io.mmread(path)
    except Exception as exc:   # scipy raises ValueError, OSError, IndexError ... for bad files
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(f"{path}: not a readable Matrix Market file ({detail[:200]}); "
                         "check the '%%MatrixMarket' header and the entry lines") from None
    matrix = sp.csr_matrix(data) if not sp.issparse(data) else data.tocsr()
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise InputError(f"{path}: the matrix is empty (shape {matrix.shape}); give a non-empty matrix")
    if np.iscomplexobj(matrix.data):
        raise InputError(f"{path}: complex matrices are not supported; give a real or integer matrix")
    if not np.isfinite(matrix.data).all():
        raise InputError(f"{_nonfinite_entry(path)}: value is not finite (nan or inf), which every kernel would "
                         "propagate into its output; correct the entry or give another matrix")
    return canonical_csr(matrix)


def _nonfinite_entry(path: str) -> str:
    """``path:LINE`` of the first entry line whose value is nan or inf (``path`` when none is found)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        entries = (t for t in enumerate(fh, start=1) if t[1].strip() and not t[1].lstrip().startswith("%"))
        next(entries, None)   # the size line
        for lineno, line in entries:
            try:
                value = float(line.split()[-1])
            except ValueError:
                continue
            if not np.isfinite(value):
                return f"{path}:{lineno}"
    return path


def canonical_csr(matrix: sp.spmatrix) -> sp.csr_matrix:
    """CSR with summed duplicates, sorted indices, float64 values and int32 index arrays."""
    m = sp.csr_matrix(matrix, dtype=np.float64)
    m.sum_duplicates()
    m.sort_indices()
    if max(m.shape) > INT32_LIMIT or m.nnz > INT32_LIMIT:
        raise InputError(f"matrix of shape {m.shape} with {m.nnz} nonzeros exceeds the int32 indices "
                         "of the generated kernels")
    m.indptr = m.indptr.astype(np.int32)
    m.indices = m.indices.astype(np.int32)
    return m


def random_matrix(rows: int, cols: int, density: float, seed: int) -> sp.csr_matrix:
    """A ``rows x cols`` CSR matrix with about ``density*rows*cols`` nonzeros (at least one)."""
    _check_sizes((rows, cols), density)
    rng = np.random.default_rng(seed)
    lin = _unique_positions(rng, rows * cols, max(1, round(density * rows * cols)))
    vals = 0.5 + rng.random(lin.size)
    return canonical_csr(sp.csr_matrix((vals, (lin // cols, lin % cols)), shape=(rows, cols)))


# ------------------------------------------------------------------ tensors
@dataclass(frozen=True)
class CooTensor:
    """A sparse 3-tensor: sorted unique 0-based coordinates (n x 3 int64), values, dimensions."""

    coords: np.ndarray
    vals: np.ndarray
    dims: Tuple[int, int, int]

    @property
    def nnz(self) -> int:
        """Number of stored nonzeros."""
        return int(self.vals.size)


def read_tns(path: str) -> CooTensor:
    """Read a FROSTT ``.tns`` file holding a 3-tensor (1-based coordinates, duplicates summed)."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file; give a FROSTT .tns file (lines 'i j k value')")
    coords: List[Tuple[int, int, int]] = []
    vals: List[float] = []
    for lineno, fields in _tns_lines(path):
        where = f"{path}:{lineno}"
        if len(fields) != 4:
            raise InputError(f"{where}: expected 3 coordinates and a value, got {len(fields)} fields; "
                             "only 3-tensors ('i j k value') are supported")
        try:
            ijk = tuple(int(f) for f in fields[:3])
        except ValueError:
            raise InputError(f"{where}: coordinates must be integers, got {' '.join(fields[:3])!r}") from None
        try:
            value = float(fields[3])
        except ValueError:
            raise InputError(f"{where}: value {fields[3]!r} is not a number") from None
        if min(ijk) < 1:
            raise InputError(f"{where}: coordinates are 1-based, got {ijk}; add 1 to 0-based files")
        if not np.isfinite(value):
            raise InputError(f"{where}: value {fields[3]!r} is not finite")
        coords.append(ijk)
        vals.append(value)
    if not coords:
        raise InputError(f"{path}: no nonzeros found; a .tns file holds lines 'i j k value'")
    arr = np.asarray(coords, dtype=np.int64) - 1
    dims = tuple(int(d) for d in arr.max(axis=0) + 1)
    return coo_tensor(arr, np.asarray(vals, dtype=np.float64), dims)


def _tns_lines(path: str) -> Iterator[Tuple[int, List[str]]]:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="strict") as fh:
            for lineno, line in enumerate(fh, start=1):
                text = line.split("#", 1)[0].strip()
                if text:
                    yield lineno, text.split()
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot read as text ({type(exc).__name__}); give a FROSTT .tns "
                         "text file") from None


def coo_tensor(coords: np.ndarray, vals: np.ndarray, dims: Sequence[int]) -> CooTensor:
    """Sort coordinates lexicographically and sum duplicates."""
    dims3 = (int(dims[0]), int(dims[1]), int(dims[2]))
    if max(dims3) > INT32_LIMIT or vals.size > INT32_LIMIT:
        raise InputError(f"tensor of dimensions {dims3} with {vals.size} nonzeros exceeds int32 indices")
    lin = np.ravel_multi_index(coords.T, dims3)
    uniq, inverse = np.unique(lin, return_inverse=True)
    summed = np.zeros(uniq.size, dtype=np.float64)
    np.add.at(summed, inverse, vals)
    return CooTensor(np.stack(np.unravel_index(uniq, dims3), axis=1).astype(np.int64), summed, dims3)


def random_tensor(dims: Sequence[int], density: float, seed: int) -> CooTensor:
    """A random 3-tensor with about ``density * prod(dims)`` nonzeros (at least one)."""
    if len(dims) != 3:
        raise InputError(f"--dims needs three sizes I J K, got {list(dims)}")
    _check_sizes(dims, density)
    rng = np.random.default_rng(seed)
    total = int(np.prod([int(d) for d in dims], dtype=np.int64))
    lin = _unique_positions(rng, total, max(1, round(density * total)))
    coords = np.stack(np.unravel_index(lin, tuple(int(d) for d in dims)), axis=1)
    return coo_tensor(coords, 0.5 + rng.random(lin.size), dims)


def _check_sizes(dims: Sequence[int], density: float) -> None:
    if any(int(d) < 1 for d in dims):
        raise InputError(f"sizes must be at least 1, got {list(dims)}")
    if not 0.0 < density <= 1.0:
        raise InputError(f"--density must lie in (0, 1], got {density}")
    if density * float(np.prod([float(d) for d in dims])) > 5e7:
        raise InputError(f"sizes {list(dims)} at density {density} give over 5e7 nonzeros; "
                         "lower the sizes or --density")


def _unique_positions(rng: np.random.Generator, total: int, count: int) -> np.ndarray:
    """``count`` distinct sorted integers in [0, total) (rejection, never materialises ``total``)."""
    count = min(count, total)
    if count > total // 4:
        return np.sort(rng.choice(total, size=count, replace=False))
    picked = np.unique(rng.integers(0, total, size=count))
    while picked.size < count:
        more = rng.integers(0, total, size=count - picked.size)
        picked = np.unique(np.concatenate([picked, more]))
    return picked


# ------------------------------------------------------------------ CSF (dss)
@dataclass(frozen=True)
class Csf:
    """TACO ``dss`` levels of a 3-tensor: ``pos2``/``crd2`` over rows, ``pos3``/``crd3`` over
    ``(i,j)`` fibers, values in fiber order; ``fiber_rows`` is the row of each fiber."""

    dims: Tuple[int, int, int]
    pos2: np.ndarray
    crd2: np.ndarray
    pos3: np.ndarray
    crd3: np.ndarray
    vals: np.ndarray
    fiber_rows: np.ndarray


def csf(t: CooTensor) -> Csf:
    """Build the ``dss`` arrays (int32 indices) from a sorted :class:`CooTensor`."""
    i, j, k = t.coords[:, 0], t.coords[:, 1], t.coords[:, 2]
    new_fiber = np.ones(t.nnz, dtype=bool)
    new_fiber[1:] = (i[1:] != i[:-1]) | (j[1:] != j[:-1])
    starts = np.flatnonzero(new_fiber)
    fiber_rows, fiber_cols = i[starts], j[starts]
    pos2 = np.zeros(t.dims[0] + 1, dtype=np.int64)
    np.add.at(pos2, fiber_rows + 1, 1)
    pos3 = np.append(starts, t.nnz)
    return Csf(t.dims, np.cumsum(pos2).astype(np.int32), fiber_cols.astype(np.int32),
               pos3.astype(np.int32), k.astype(np.int32), t.vals.astype(np.float64),
               fiber_rows.astype(np.int64))
