"""Inputs, numpy references and output checks of the RISE kernels (no OpenCL here).

A :class:`Problem` holds fixed-seed float32 inputs of one kernel at one size; the OpenCL backend
copies them to the device once.  :meth:`Problem.output_shape` says what the kernel writes for a
configuration (asum's partial sums depend on ``sp1``), :meth:`Problem.check` compares an output
with numpy (float64) and returns None or a one-line reason.  Tolerances: ``np.allclose`` with
``rtol`` and ``atol = ATOL_FRACTION * max|reference|`` (float32 sums in another order), k-means
accepts a centroid whose distance is within ``rtol`` of the nearest one (ties).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

RTOL = 1e-3
ATOL_FRACTION = 1e-4
K_CLUSTERS, N_FEATURES = 5, 34
ALPHA = 2.5
SEED = 20240612


@dataclass
class Problem:
    """One kernel's inputs at one size.

    ``inputs`` are the kernel's buffer arguments in order (numpy arrays), ``scalars`` the scalar
    arguments that follow the output buffer (numpy scalars), ``sizes`` the problem-size build
    constants (``-D`` options).
    """

    kernel: str
    size: int
    inputs: List[np.ndarray]
    sizes: Dict[str, int]
    scalars: List[Any] = field(default_factory=list)
    out_dtype: Any = np.float32
    _reference: Optional[np.ndarray] = None

    # ---- shapes ----------------------------------------------------------------
    def output_shape(self, cfg: Mapping[str, Any]) -> Tuple[int, ...]:
        """Shape of the output buffer for ``cfg``."""
        n = self.size
        if self.kernel in ("mm", "harris", "stencil"):
            return (n, n)
        if self.kernel == "asum":
            return (n // int(cfg["sp1"]),)
        return (n,)

    # ---- references --------------------------------------------------------------
    def reference(self, cfg: Mapping[str, Any]) -> np.ndarray:
        """The expected output (float64; asum's depends on the split)."""
        if self.kernel == "asum":
            return asum_reference(self.inputs[0], int(cfg["sp0"]), int(cfg["sp1"]), int(cfg["stride"]))
        if self._reference is None:
            self._reference = REFERENCES[self.kernel](self)
        return self._reference

    def check(self, out: np.ndarray, cfg: Mapping[str, Any]) -> Optional[str]:
        """None when ``out`` matches numpy, else a one-line reason (an ERROR result)."""
        if self.kernel == "kmeans":
            return kmeans_check(self, out)
        ref = self.reference(cfg)
        if out.shape != ref.shape:
            return f"wrong output shape {out.shape}, expected {ref.shape}"
        if not np.all(np.isfinite(out)):
            return f"output has {int(np.sum(~np.isfinite(out)))} non-finite values (not written?)"
        atol = ATOL_FRACTION * float(np.max(np.abs(ref))) if ref.size else 0.0
        if np.allclose(out, ref, rtol=RTOL, atol=atol):
            return None
        err = float(np.max(np.abs(out - ref)))
        return f"wrong output: max abs error {err:.3g} (rtol {RTOL:g}, atol {atol:.3g})"


# ------------------------------------------------------------------------------ inputs
def make_problem(kernel: str, size: int) -> Problem:
    """Fixed-seed inputs of ``kernel`` at ``size`` (see rise_spaces.KernelSpec.size_meaning)."""
    rng = np.random.default_rng(SEED + size)
    n = size
    if kernel == "mm":
        a, b = (rng.uniform(-1, 1, (n, n)).astype(np.float32) for _ in range(2))
        return Problem(kernel, n, [a, b], {"M": n, "N": n, "K": n})
    if kernel == "asum":
        return Problem(kernel, n, [rng.uniform(-1, 1, n).astype(np.float32)], {"NX": n})
    if kernel == "scal":
        return Problem(kernel, n, [rng.uniform(-1, 1, n).astype(np.float32)], {"NX": n},
                       [np.float32(ALPHA)])
    if kernel == "kmeans":
        features = rng.uniform(0, 1, (N_FEATURES, n)).astype(np.float32)
        clusters = rng.uniform(0, 1, (K_CLUSTERS, N_FEATURES)).astype(np.float32)
        return Problem(kernel, n, [features, clusters],
                       {"NP": n, "K_CLUSTERS": K_CLUSTERS, "N_FEATURES": N_FEATURES}, out_dtype=np.int32)
    if kernel == "harris":
        return Problem(kernel, n, [rng.uniform(0, 1, (3, n + 4, n + 4)).astype(np.float32)], {"N": n})
    if kernel == "stencil":
        return Problem(kernel, n, [rng.uniform(0, 1, (n + 2, n + 2)).astype(np.float32)], {"N": n})
    raise KeyError(f"unknown kernel {kernel!r}")


# ------------------------------------------------------------------------------ references
def asum_permutation(sp0: int, stride: int) -> np.ndarray:
    """``reorderWithStride(stride)`` of a chunk of ``sp0``: position p reads element
    ``p // (sp0/stride) + stride * (p % (sp0/stride))``."""
    p = np.arange(sp0)
    ch = sp0 // stride
    return p // ch + stride * (p % ch)


def asum_reference(x: np.ndarray, sp0: int, sp1: int, stride: int) -> np.ndarray:
    """Partial sums of |x|: per chunk of ``sp0``, reordered, ``sp0/sp1`` sums of ``sp1``."""
    chunks = np.abs(x.astype(np.float64)).reshape(-1, sp0)[:, asum_permutation(sp0, stride)]
    return chunks.reshape(chunks.shape[0], sp0 // sp1, sp1).sum(axis=2).reshape(-1)


def _mm(p: Problem) -> np.ndarray:
    return p.inputs[0].astype(np.float64) @ p.inputs[1].astype(np.float64)


def _scal(p: Problem) -> np.ndarray:
    return ALPHA * p.inputs[0].astype(np.float64)


def kmeans_distances(p: Problem) -> np.ndarray:
    """Squared distances (points x clusters), float64."""
    f = p.inputs[0].astype(np.float64)
    c = p.inputs[1].astype(np.float64)
    return np.stack([((f - c[k][:, None]) ** 2).sum(axis=0) for k in range(c.shape[0])], axis=1)


def kmeans_check(p: Problem, out: np.ndarray) -> Optional[str]:
    """Each point's centroid must be the nearest (within ``RTOL`` for near-ties)."""
    if p._reference is None:
        p._reference = kmeans_distances(p)
    d = p._reference
    if out.shape != (d.shape[0],):
        return f"wrong output shape {out.shape}, expected {(d.shape[0],)}"
    bad_index = (out < 0) | (out >= K_CLUSTERS)
    if bad_index.any():
        return f"{int(bad_index.sum())} points have no valid centroid index (not written?)"
    chosen = d[np.arange(d.shape[0]), out]
    wrong = chosen > d.min(axis=1) * (1 + RTOL) + 1e-12
    return None if not wrong.any() else f"wrong output: {int(wrong.sum())} points not at their nearest centroid"


def _gray(p: Problem) -> np.ndarray:
    rgb = p.inputs[0].astype(np.float64)
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def _harris(p: Problem) -> np.ndarray:
    g = _gray(p)
    m = g.shape[0] - 2            # N + 2: the Sobel outputs
    s = lambda dy, dx: g[dy:dy + m, dx:dx + m]   # noqa: E731 - shifted view
    ix = (s(0, 2) + 2 * s(1, 2) + s(2, 2)) - (s(0, 0) + 2 * s(1, 0) + s(2, 0))
    iy = (s(2, 0) + 2 * s(2, 1) + s(2, 2)) - (s(0, 0) + 2 * s(0, 1) + s(0, 2))
    n = m - 2

    def box(a: np.ndarray) -> np.ndarray:
        return sum(a[u:u + n, v:v + n] for u in range(3) for v in range(3))
    a, b, d = box(ix * ix), box(ix * iy), box(iy * iy)
    return a * d - b * b - 0.04 * (a + d) ** 2


def _stencil(p: Problem) -> np.ndarray:
    g = p.inputs[0].astype(np.float64)
    n = g.shape[0] - 2
    return 0.2 * (g[1:n + 1, 1:n + 1] + g[1:n + 1, 0:n] + g[1:n + 1, 2:n + 2] + g[0:n, 1:n + 1]
                  + g[2:n + 2, 1:n + 1])


REFERENCES = {"mm": _mm, "scal": _scal, "harris": _harris, "stencil": _stencil}
