"""OpenCL C sources of the RISE kernels, written for tunerlib in the style of RISE's generated code.

RISE lowers ``mapWorkGroup`` / ``mapLocal`` / ``mapGlobal`` to loops that start at the work-item's
id and step by the number of work-groups / work-items, so *any* global and local size computes the
right result: the sizes decide only how the work is spread (idle work-items, several tiles per
work-group ...).  The kernels here follow that style: every tuning parameter is a preprocessor
constant (``-D`` build option, see :func:`build_options`), split sizes and tiles are compile-time
constants, and 2-D launch grids of 1-D computations are flattened (``WG_ID``, ``L_ID``, ``G_ID``).

* ``mm``: C = A B, A M x K, B K x N (row-major).  Work-group tiles of V5 x V7 outputs, K walked in
  steps of V8; the A tile (V5 x V8) is copied to local memory in chunks of V6 elements
  (``split(v6)``), the B tile (V8 x V7) in chunks of V3; each work-item item accumulates a V4 x V3
  block in private memory; the V5 x V7 accumulator tile lives in local memory (the table's
  48 KiB bound counts all three tiles).
* ``asum``: partial sums of |x|: chunks of SP0 elements per work-group, read through
  ``reorderWithStride(STRIDE)`` and split into SP0/SP1 sequential reductions of SP1 elements per
  work-item; output n/SP1 partial sums (the final sum is left to the host, as in RISE's benchmark).
* ``scal``: y = alpha x; chunks of S0 per work-group, S1 vectors of width VEC per work-item.
* ``kmeans``: nearest of K_CLUSTERS centroids for every point (features stored feature-major).
* ``harris``: Harris corner response of a planar RGB image of (N+4)^2 pixels into N^2 outputs:
  per work-group tile of TILEY x TILEX outputs, gray (vector loads of width VEC, hence
  ``(tileX+4) % vec == 0``), Sobel gradient products and 3 x 3 sums staged in local memory.
* ``stencil``: 5-point Jacobi on an (N+2)^2 padded grid into N^2 outputs, ``mapGlobal`` in 2-D.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping

#: helpers shared by every kernel (flattened ids of a 2-D launch; vector type/load/store by width)
PRELUDE = r"""
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define WG_ID  ((int)(get_group_id(0) + get_num_groups(0) * get_group_id(1)))
#define NUM_WG ((int)(get_num_groups(0) * get_num_groups(1)))
#define L_ID   ((int)(get_local_id(0) + get_local_size(0) * get_local_id(1)))
#define NUM_L  ((int)(get_local_size(0) * get_local_size(1)))
#define G_ID   ((int)(get_global_id(0) + get_global_size(0) * get_global_id(1)))
#define NUM_G  ((int)(get_global_size(0) * get_global_size(1)))
"""

MM = r"""
__kernel void mm(const __global float* restrict A, const __global float* restrict B,
                 __global float* restrict C) {
  __local float Al[V5 * V8];
  __local float Bl[V8 * V7];
  __local float Cl[V5 * V7];
  const int lid = L_ID, nl = NUM_L;
  for (int wg1 = get_group_id(1); wg1 < M / V5; wg1 += get_num_groups(1)) {
    for (int wg0 = get_group_id(0); wg0 < N / V7; wg0 += get_num_groups(0)) {
      for (int i = lid; i < V5 * V7; i += nl) Cl[i] = 0.0f;
      for (int kt = 0; kt < K / V8; kt++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int c = lid; c < (V5 * V8) / V6; c += nl) {
          for (int e = 0; e < V6; e++) {
            const int idx = c * V6 + e;
            Al[idx] = A[(wg1 * V5 + idx / V8) * K + kt * V8 + idx % V8];
          }
        }
        for (int c = lid; c < (V8 * V7) / V3; c += nl) {
          for (int e = 0; e < V3; e++) {
            const int idx = c * V3 + e;
            Bl[idx] = B[(kt * V8 + idx / V7) * N + wg0 * V7 + idx % V7];
          }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int l1 = get_local_id(1); l1 < V5 / V4; l1 += get_local_size(1)) {
          for (int l0 = get_local_id(0); l0 < V7 / V3; l0 += get_local_size(0)) {
            float acc[V4 * V3];
            for (int a = 0; a < V4; a++)
              for (int b = 0; b < V3; b++) acc[a * V3 + b] = Cl[(l1 * V4 + a) * V7 + l0 * V3 + b];
            for (int k = 0; k < V8; k++) {
              for (int a = 0; a < V4; a++) {
                const float av = Al[(l1 * V4 + a) * V8 + k];
                for (int b = 0; b < V3; b++) acc[a * V3 + b] += av * Bl[k * V7 + l0 * V3 + b];
              }
            }
            for (int a = 0; a < V4; a++)
              for (int b = 0; b < V3; b++) Cl[(l1 * V4 + a) * V7 + l0 * V3 + b] = acc[a * V3 + b];
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int i = lid; i < V5 * V7; i += nl) C[(wg1 * V5 + i / V7) * N + wg0 * V7 + i % V7] = Cl[i];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
"""

ASUM = r"""
#define CH (SP0 / STRIDE)
__kernel void asum(const __global float* restrict x, __global float* restrict out) {
  for (int wg = get_group_id(0); wg < NX / SP0; wg += get_num_groups(0)) {
    const __global float* chunk = x + wg * SP0;
    for (int l = get_local_id(0); l < SP0 / SP1; l += get_local_size(0)) {
      float acc = 0.0f;
      for (int j = 0; j < SP1; j++) {
        const int p = l * SP1 + j;
        acc += fabs(chunk[p / CH + STRIDE * (p % CH)]);
      }
      out[wg * (SP0 / SP1) + l] = acc;
    }
  }
}
"""

SCAL = r"""
#define VT CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)
__kernel void scal(const __global float* restrict x, __global float* restrict y, const float alpha) {
  const int lid = L_ID, nl = NUM_L;
  for (int wg = WG_ID; wg < NX / S0; wg += NUM_WG) {
    for (int i = lid; i < S0 / (S1 * VEC); i += nl) {
      for (int j = 0; j < S1; j++) {
        const int off = wg * S0 + (i * S1 + j) * VEC;
        VSTORE(alpha * VLOAD(0, x + off), 0, y + off);
      }
    }
  }
}
"""

KMEANS = r"""
__kernel void kmeans(const __global float* restrict features, const __global float* restrict clusters,
                     __global int* restrict membership) {
  for (int i = G_ID; i < NP; i += NUM_G) {
    int best = 0;
    float best_d = FLT_MAX;
    for (int c = 0; c < K_CLUSTERS; c++) {
      float d = 0.0f;
      for (int f = 0; f < N_FEATURES; f++) {
        const float t = features[f * NP + i] - clusters[c * N_FEATURES + f];
        d += t * t;
      }
      if (d < best_d) { best_d = d; best = c; }
    }
    membership[i] = best;
  }
}
"""

HARRIS = r"""
#define VT CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)
#define W (N + 4)
#define TW (TILEX + 4)
#define TH (TILEY + 4)
#define SW (TILEX + 2)
#define SH (TILEY + 2)
inline float gray_at(const __global float* rgb, int i) {
  return 0.299f * rgb[i] + 0.587f * rgb[W * W + i] + 0.114f * rgb[2 * W * W + i];
}
__kernel void harris(const __global float* restrict rgb, __global float* restrict out) {
  __local float gray[TH * TW];
  __local float sxx[SH * SW], sxy[SH * SW], syy[SH * SW];
  const int lid = L_ID, nl = NUM_L;
  for (int ty = get_group_id(1); ty < (N + TILEY - 1) / TILEY; ty += get_num_groups(1)) {
    for (int tx = get_group_id(0); tx < (N + TILEX - 1) / TILEX; tx += get_num_groups(0)) {
      const int y0 = ty * TILEY, x0 = tx * TILEX;
      for (int i = lid; i < TH * (TW / VEC); i += nl) {          /* gray, VEC pixels at a time */
        const int r = i / (TW / VEC), c = (i % (TW / VEC)) * VEC;
        const int row = min(y0 + r, W - 1) * W;
        if (x0 + c + VEC <= W) {
          const int g = row + x0 + c;
          VT v = 0.299f * VLOAD(0, rgb + g) + 0.587f * VLOAD(0, rgb + W * W + g)
               + 0.114f * VLOAD(0, rgb + 2 * W * W + g);
          VSTORE(v, 0, gray + r * TW + c);
        } else {                                                  /* right edge of the image */
          for (int e = 0; e < VEC; e++) gray[r * TW + c + e] = gray_at(rgb, row + min(x0 + c + e, W - 1));
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int i = lid; i < SH * SW; i += nl) {                   /* Sobel gradients, products */
        const int r = i / SW, c = i % SW;
        const __local float* g = gray + r * TW + c;
        const float ix = (g[2] + 2.0f * g[TW + 2] + g[2 * TW + 2]) - (g[0] + 2.0f * g[TW] + g[2 * TW]);
        const float iy = (g[2 * TW] + 2.0f * g[2 * TW + 1] + g[2 * TW + 2]) - (g[0] + 2.0f * g[1] + g[2]);
        sxx[i] = ix * ix; sxy[i] = ix * iy; syy[i] = iy * iy;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int i = lid; i < TILEY * TILEX; i += nl) {             /* 3x3 sums, response */
        const int r = i / TILEX, c = i % TILEX;
        if (y0 + r < N && x0 + c < N) {
          float a = 0.0f, b = 0.0f, d = 0.0f;
          for (int u = 0; u < 3; u++)
            for (int v = 0; v < 3; v++) {
              const int j = (r + u) * SW + c + v;
              a += sxx[j]; b += sxy[j]; d += syy[j];
            }
          const float det = a * d - b * b, tr = a + d;
          out[(y0 + r) * N + x0 + c] = det - 0.04f * tr * tr;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
"""

STENCIL = r"""
#define W (N + 2)
__kernel void stencil(const __global float* restrict in, __global float* restrict out) {
  for (int y = get_global_id(1); y < N; y += get_global_size(1)) {
    for (int x = get_global_id(0); x < N; x += get_global_size(0)) {
      const int c = (y + 1) * W + x + 1;
      out[y * N + x] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - W] + in[c + W]);
    }
  }
}
"""

SOURCES = {"mm": MM, "asum": ASUM, "scal": SCAL, "kmeans": KMEANS, "harris": HARRIS, "stencil": STENCIL}

#: configuration keys passed to the kernel as preprocessor constants (upper-cased)
DEFINES = {
    "mm": ("v3", "v4", "v5", "v6", "v7", "v8"),
    "asum": ("sp0", "sp1", "stride"),
    "scal": ("s0", "s1", "vec"),
    "kmeans": (),
    "harris": ("tileX", "tileY", "vec"),
    "stencil": (),
}


def source(kernel: str) -> str:
    """The OpenCL C source of ``kernel`` (constant per kernel; configurations go into the build
    options)."""
    return PRELUDE + SOURCES[kernel]


def build_options(kernel: str, cfg: Mapping[str, Any], sizes: Mapping[str, int]) -> List[str]:
    """``-D NAME=value`` options for the problem ``sizes`` and the configuration's kernel
    parameters (local and global sizes are launch arguments, not build options)."""
    defines: Dict[str, Any] = dict(sizes)
    for key in DEFINES[kernel]:
        defines[key.upper()] = int(cfg[key])
    return [f"-D{name}={int(value)}" for name, value in sorted(defines.items())]


def launch_geometry(kernel: str, cfg: Mapping[str, Any]) -> tuple:
    """(global size, local size) tuples of a launch: 1-D for asum, 2-D for the others."""
    if kernel == "asum":
        return (int(cfg["gs0"]),), (int(cfg["ls0"]),)
    return (int(cfg["gs0"]), int(cfg["gs1"])), (int(cfg["ls0"]), int(cfg["ls1"]))
