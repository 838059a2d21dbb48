"""Halide pipelines tuned by ``halide_tuner.py``: algorithm definitions and numpy references.

Each :class:`PipelineSpec` describes one pipeline of a different character:

* ``blur``    -- separable 3x3 box blur (``blur_x`` then ``blur_y``): memory bound, two stages.
* ``harris``  -- Harris corner response (gray, Sobel ``Ix``/``Iy``, 3x3 structure-tensor sums, the
  response): seven stages, compute heavy, many producer/consumer placement choices.
* ``matmul``  -- dense matrix multiply with a reduction over an ``RDom`` (``prod`` accumulates
  ``A*B`` in an update definition, ``matmul`` copies it out): compute bound, reduction scheduling.

Every stage is a 2-D ``Func`` over ``(x, y)``; a stage with a reduction also has an update stage
over one ``RVar`` (``k``).  :meth:`PipelineSpec.define` builds *fresh* Halide Funcs on every call,
because a schedule changes Funcs in place and cannot be undone: every evaluation defines the
algorithm anew and schedules that copy.

Inputs are float32 arrays drawn from a fixed-seed generator (same size → same data), and the numpy
reference (:meth:`PipelineSpec.reference`) computes the exact same maths, so a default-schedule
output can be checked against it.  Image borders replicate the edge pixel (numpy ``mode="edge"``),
but instead of Halide's ``BoundaryConditions.repeat_edge`` (whose clamps make Halide partition every
loop, which multiplies JIT compile times by 3-5x) the Halide input buffers are padded by
:data:`PAD` replicated pixels on every side (zero rows/columns for matmul), the way Halide's own
apps provide a margin.  Schedules that over-compute (a split larger than the region a consumer
needs is shifted or rounded up) therefore stay in bounds; a region that grows past the margin
fails at realize time and is recorded as infeasible.

Tolerance (:func:`outputs_match`): ``np.allclose(out, ref, rtol=1e-4, atol=1e-4 * max|ref|)``.
Schedules do not reassociate sums, but LLVM may contract ``a*b + c`` into a fused multiply-add in
some loop shapes (vectorised or not), which changes the last bits of a float32 result; 1e-4 is far
above that noise (about 1e-7 relative) and far below any real scheduling bug (wrong region, race).

This module imports ``halide`` lazily (inside :meth:`PipelineSpec.define`), so the specs, inputs and
references can be used without it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

#: np.allclose tolerances for every pipeline output (see the module docstring)
RTOL = 1e-4
ATOL_FRACTION = 1e-4

#: margin (pixels) around every Halide input buffer: more than the largest tile (256) plus the
#: stencil radii, so over-computed regions stay inside the buffer
PAD = 272

#: seed of the input generator (inputs are the same for every run of a given size)
INPUT_SEED = 12345


@dataclass(frozen=True)
class StageSpec:
    """One Func to schedule.

    ``consumers`` are the Funcs that read it directly (empty for the output); ``rvars`` names the
    reduction variables of its update stage (empty when the Func has no update definition).
    A Func with an update definition cannot be computed inline.
    """

    name: str
    consumers: Tuple[str, ...] = ()
    rvars: Tuple[str, ...] = ()

    @property
    def inlinable(self) -> bool:
        """True when ``compute_inline`` is legal (no update definition)."""
        return not self.rvars


@dataclass
class Algorithm:
    """Fresh Halide objects for one evaluation: Funcs by name, the output Func, loop variables."""

    funcs: Dict[str, Any]
    output: Any
    x: Any
    y: Any
    rvars: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Instance:
    """A pipeline at one problem size: numpy inputs, the padded copies behind the Halide buffers
    (kept alive here), the Halide buffers (made on the first :meth:`define`)."""

    spec: "PipelineSpec"
    size: int
    arrays: Dict[str, np.ndarray]
    buffers: Dict[str, Any] = field(default_factory=dict)
    padded: Dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def width(self) -> int:
        """Extent of the output's x dimension (numpy's last axis)."""
        return self.size

    @property
    def height(self) -> int:
        """Extent of the output's y dimension (numpy's first axis)."""
        return self.size

    def output_shape(self) -> Tuple[int, int]:
        """numpy shape of the output array (rows = y, columns = x)."""
        return (self.height, self.width)

    def define(self) -> Algorithm:
        """Called once per evaluation: fresh Funcs bound to this instance's input buffers."""
        if not self.buffers:
            made = self.spec.buffers_fn(self.arrays)
            self.buffers = {name: buf for name, (buf, _) in made.items()}
            self.padded = {name: full for name, (_, full) in made.items()}
        return self.spec.define_fn(self)

    def reference(self) -> np.ndarray:
        """The expected output computed with numpy (float32 array of :meth:`output_shape`)."""
        return self.spec.reference_fn(self.arrays).astype(np.float32)


@dataclass(frozen=True)
class PipelineSpec:
    """A tunable pipeline: its stages (producers first, output last) and how to build it."""

    name: str
    description: str
    stages: Tuple[StageSpec, ...]
    default_size: int
    tiny_size: int
    make_arrays: Callable[[int], Dict[str, np.ndarray]]
    buffers_fn: Callable[[Dict[str, np.ndarray]], Dict[str, Tuple[Any, np.ndarray]]]
    define_fn: Callable[[Instance], Algorithm]
    reference_fn: Callable[[Dict[str, np.ndarray]], np.ndarray]

    @property
    def output_name(self) -> str:
        """Name of the output Func (the last stage)."""
        return self.stages[-1].name

    def stage(self, name: str) -> StageSpec:
        """The stage called ``name``."""
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(name)

    def instance(self, size: Optional[int] = None) -> Instance:
        """The pipeline at ``size`` (default :attr:`default_size`) with its deterministic inputs."""
        n = self.default_size if size is None else int(size)
        return Instance(self, n, self.make_arrays(n))


class Compiled:
    """A JIT-compiled pipeline bound to its output buffer; :meth:`run` realizes it once.

    ``compile_s`` is the JIT compile time in seconds.  Made by :func:`compile_algorithm`.
    """

    def __init__(self, pipeline: Any, out_buffer: Any, compile_s: float) -> None:
        self.pipeline, self.out_buffer, self.compile_s = pipeline, out_buffer, compile_s

    def run(self) -> None:
        """Realize the pipeline into the output buffer (raises halide.HalideError on failure)."""
        self.pipeline.realize(self.out_buffer)

    def output(self) -> np.ndarray:
        """A numpy copy of the output buffer (rows = y)."""
        return np.array(self.out_buffer, copy=True)


def jit_target() -> Any:
    """The host JIT target (Halide's default, with the CPU features it detects)."""
    import halide as hl
    return hl.get_jit_target_from_environment()


def compile_algorithm(inst: Instance, alg: Algorithm) -> Compiled:
    """JIT-compile ``alg`` (already scheduled) for the host; raises halide.HalideError on failure."""
    import halide as hl
    pipeline = hl.Pipeline(alg.output)
    start = time.perf_counter()
    pipeline.compile_jit(jit_target())
    compile_s = time.perf_counter() - start
    out = hl.Buffer(hl.Float(32), [inst.width, inst.height])
    return Compiled(pipeline, out, compile_s)


def outputs_match(out: np.ndarray, ref: np.ndarray) -> bool:
    """True when ``out`` equals ``ref`` within the documented tolerance (shapes must agree)."""
    if out.shape != ref.shape or not np.all(np.isfinite(out)):
        return False
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    return bool(np.allclose(out, ref, rtol=RTOL, atol=ATOL_FRACTION * scale))


def max_abs_error(out: np.ndarray, ref: np.ndarray) -> float:
    """Largest absolute difference (inf when the shapes differ), for error messages."""
    if out.shape != ref.shape:
        return float("inf")
    return float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64)))) if ref.size else 0.0


def _rng(size: int) -> np.random.Generator:
    return np.random.default_rng([INPUT_SEED, size])


def padded_buffer(arr: np.ndarray, pads: Tuple[Tuple[int, int], ...], mode: str) -> Tuple[Any, np.ndarray]:
    """A Halide buffer over ``np.pad(arr, pads, mode)`` whose coordinates start at minus the low pad.

    ``pads`` follows numpy's axis order; Halide's dimensions are numpy's axes reversed (x = last
    axis).  Returns ``(buffer, padded_array)``: the caller keeps the array alive as long as the
    buffer (the buffer does not own the memory).
    """
    import halide as hl
    full = np.ascontiguousarray(np.pad(arr, pads, mode=mode))
    buf = hl.Buffer(full)
    buf.set_min([-lo for lo, _ in reversed(pads)])
    return buf, full


def _image_buffers(arrays: Dict[str, np.ndarray]) -> Dict[str, Tuple[Any, np.ndarray]]:
    arr = arrays["input"]
    pads = ((0, 0),) * (arr.ndim - 2) + ((PAD, PAD), (PAD, PAD))
    return {"input": padded_buffer(arr, pads, "edge")}


# ---------------------------------------------------------------------------------------- blur
def _blur_arrays(n: int) -> Dict[str, np.ndarray]:
    return {"input": _rng(n).random((n, n), dtype=np.float32)}


def _blur_define(inst: Instance) -> Algorithm:
    import halide as hl
    x, y = hl.Var("x"), hl.Var("y")
    inp = inst.buffers["input"]
    blur_x, blur_y = hl.Func("blur_x"), hl.Func("blur_y")
    third = hl.f32(1.0 / 3.0)
    blur_x[x, y] = (inp[x - 1, y] + inp[x, y] + inp[x + 1, y]) * third
    blur_y[x, y] = (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) * third
    return Algorithm({"blur_x": blur_x, "blur_y": blur_y}, blur_y, x, y)


def _blur_reference(arrays: Dict[str, np.ndarray]) -> np.ndarray:
    third = np.float32(1.0 / 3.0)
    p = np.pad(arrays["input"], 1, mode="edge")
    bx = (p[:, :-2] + p[:, 1:-1] + p[:, 2:]) * third
    return (bx[:-2] + bx[1:-1] + bx[2:]) * third


BLUR = PipelineSpec(
    name="blur",
    description="separable 3x3 box blur of a float32 image (blur_x then blur_y); memory bound",
    stages=(StageSpec("blur_x", ("blur_y",)), StageSpec("blur_y")),
    default_size=2048, tiny_size=64,
    make_arrays=_blur_arrays, buffers_fn=_image_buffers, define_fn=_blur_define, reference_fn=_blur_reference)


# -------------------------------------------------------------------------------------- harris
_HARRIS_K = 0.04


def _harris_arrays(n: int) -> Dict[str, np.ndarray]:
    return {"input": _rng(n).random((3, n, n), dtype=np.float32)}   # planar RGB: (c, y, x)


def _harris_define(inst: Instance) -> Algorithm:
    import halide as hl
    x, y = hl.Var("x"), hl.Var("y")
    inp = inst.buffers["input"]
    f = {name: hl.Func(name) for name in ("gray", "Ix", "Iy", "Sxx", "Syy", "Sxy", "harris")}
    f["gray"][x, y] = (hl.f32(0.299) * inp[x, y, 0] + hl.f32(0.587) * inp[x, y, 1]
                       + hl.f32(0.114) * inp[x, y, 2])
    g = f["gray"]
    c1, c2 = hl.f32(1.0 / 12.0), hl.f32(2.0 / 12.0)
    f["Ix"][x, y] = (c1 * (g[x + 1, y - 1] - g[x - 1, y - 1]) + c2 * (g[x + 1, y] - g[x - 1, y])
                     + c1 * (g[x + 1, y + 1] - g[x - 1, y + 1]))
    f["Iy"][x, y] = (c1 * (g[x - 1, y + 1] - g[x - 1, y - 1]) + c2 * (g[x, y + 1] - g[x, y - 1])
                     + c1 * (g[x + 1, y + 1] - g[x + 1, y - 1]))
    ix, iy = f["Ix"], f["Iy"]

    def box(a, b):
        return sum((a[x + dx, y + dy] * b[x + dx, y + dy] for dy in (-1, 0, 1) for dx in (-1, 0, 1)),
                   hl.f32(0.0))

    f["Sxx"][x, y] = box(ix, ix)
    f["Syy"][x, y] = box(iy, iy)
    f["Sxy"][x, y] = box(ix, iy)
    sxx, syy, sxy = f["Sxx"][x, y], f["Syy"][x, y], f["Sxy"][x, y]
    trace = sxx + syy
    f["harris"][x, y] = sxx * syy - sxy * sxy - hl.f32(_HARRIS_K) * trace * trace
    return Algorithm(f, f["harris"], x, y)


def _harris_reference(arrays: Dict[str, np.ndarray]) -> np.ndarray:
    rgb = np.pad(arrays["input"], ((0, 0), (2, 2), (2, 2)), mode="edge")
    g = (np.float32(0.299) * rgb[0] + np.float32(0.587) * rgb[1] + np.float32(0.114) * rgb[2])
    c1, c2 = np.float32(1.0 / 12.0), np.float32(2.0 / 12.0)

    def sh(a, dx, dy):   # a[y + dy, x + dx] over the interior one pixel in from each side
        return a[1 + dy:a.shape[0] - 1 + dy, 1 + dx:a.shape[1] - 1 + dx]

    ix = (c1 * (sh(g, 1, -1) - sh(g, -1, -1)) + c2 * (sh(g, 1, 0) - sh(g, -1, 0))
          + c1 * (sh(g, 1, 1) - sh(g, -1, 1)))
    iy = (c1 * (sh(g, -1, 1) - sh(g, -1, -1)) + c2 * (sh(g, 0, 1) - sh(g, 0, -1))
          + c1 * (sh(g, 1, 1) - sh(g, 1, -1)))

    def box(a, b):
        p = a * b
        return sum(sh(p, dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1))

    sxx, syy, sxy = box(ix, ix), box(iy, iy), box(ix, iy)
    trace = sxx + syy
    return sxx * syy - sxy * sxy - np.float32(_HARRIS_K) * trace * trace


HARRIS = PipelineSpec(
    name="harris",
    description="Harris corner response of an RGB float32 image: gray, Sobel Ix/Iy, 3x3 "
                "structure-tensor sums Sxx/Syy/Sxy, response; seven stages, compute heavy",
    stages=(StageSpec("gray", ("Ix", "Iy")), StageSpec("Ix", ("Sxx", "Sxy")),
            StageSpec("Iy", ("Syy", "Sxy")), StageSpec("Sxx", ("harris",)),
            StageSpec("Syy", ("harris",)), StageSpec("Sxy", ("harris",)), StageSpec("harris")),
    default_size=1024, tiny_size=48,
    make_arrays=_harris_arrays, buffers_fn=_image_buffers, define_fn=_harris_define, reference_fn=_harris_reference)


# -------------------------------------------------------------------------------------- matmul
def _matmul_arrays(n: int) -> Dict[str, np.ndarray]:
    rng = _rng(n)
    return {"A": rng.random((n, n), dtype=np.float32), "B": rng.random((n, n), dtype=np.float32)}


def _matmul_buffers(arrays: Dict[str, np.ndarray]) -> Dict[str, Tuple[Any, np.ndarray]]:
    # zero rows around A (its y) and zero columns around B (its x): an over-computed prod tile
    # reads zeros instead of failing; k never leaves [0, N).
    return {"A": padded_buffer(arrays["A"], ((PAD, PAD), (0, 0)), "constant"),
            "B": padded_buffer(arrays["B"], ((0, 0), (PAD, PAD)), "constant")}


def _matmul_define(inst: Instance) -> Algorithm:
    import halide as hl
    x, y = hl.Var("x"), hl.Var("y")
    a, b = inst.buffers["A"], inst.buffers["B"]        # Halide a(k, y) = A[y, k]; b(x, k) = B[k, x]
    k = hl.RDom([hl.Range(0, inst.size)], "k")
    prod, out = hl.Func("prod"), hl.Func("matmul")
    prod[x, y] = hl.f32(0.0)
    prod[x, y] = prod[x, y] + a[k.x, y] * b[x, k.x]
    out[x, y] = prod[x, y]
    return Algorithm({"prod": prod, "matmul": out}, out, x, y, {"k": k.x})


def _matmul_reference(arrays: Dict[str, np.ndarray]) -> np.ndarray:
    return arrays["A"].astype(np.float64) @ arrays["B"].astype(np.float64)


MATMUL = PipelineSpec(
    name="matmul",
    description="dense float32 matrix multiply C = A @ B with a reduction over RDom k (prod "
                "accumulates in an update definition, matmul copies it out); compute bound",
    stages=(StageSpec("prod", ("matmul",), ("k",)), StageSpec("matmul")),
    default_size=256, tiny_size=32,
    make_arrays=_matmul_arrays, buffers_fn=_matmul_buffers, define_fn=_matmul_define, reference_fn=_matmul_reference)


#: every pipeline by name
PIPELINES: Dict[str, PipelineSpec] = {p.name: p for p in (BLUR, HARRIS, MATMUL)}


def pipeline_names() -> List[str]:
    """Names accepted by ``--pipeline``, in a stable order."""
    return list(PIPELINES)
