"""Search spaces of the RISE/ELEVATE GPU kernels, scaled to the problem size of a run.

The spaces are those of ``docs/benchmark-spaces.md`` (BaCO paper, RISE & ELEVATE table): every
parameter is an ordinal of powers of two (log-scaled), except Harris' ``tileX``/``tileY`` (1 or an
even number) and the known constraints are tunerlib expression strings.

The paper's ranges assume its problem sizes (matrices and images 1024 wide, 2^24 / 2^25 / 2^19
elements).  With ``--size`` a run uses a smaller problem, and the ranges that stand for the
problem's extent scale with it ("N" below is the size of the run, "1024"/"2^24" the paper's):

* mm, stencil, harris (``--size N`` = matrix/image side): tile sizes (``v3..v8``), global sizes
  (``gs0``, ``gs1``) and the Harris tiles range up to N instead of 1024; local sizes up to
  ``min(1024, N)``; the divisibility constraints ``1024 % v == 0`` become ``N % v == 0``.
  Device limits stay as in the paper (``ls0*ls1 <= 1024``, MM's 48 KiB shared-memory bound,
  Harris' ``tileX*tileY <= 1024``).
* asum, scal (``--size n`` = vector length): the split sizes (``sp0``, ``stride``, ``sp1``,
  ``s0``, ``s1``) range up to n instead of 2^24 / 2^25; work-group and global sizes keep
  ``{1..1024}``.
* kmeans (``--size n`` = points): only local and global sizes, unchanged.

The paper's expert and default configurations are mapped into the scaled space by
:func:`paper_config` (rule per kernel in :class:`KernelSpec` ``scale``): global sizes of the
2-D kernels scale by N/1024 (the expert's "one work-group row per tile row" mapping stays the
same), a split larger than the vector is shrunk to the vector with its stride shrunk alike, every
other value is kept.  A configuration that then violates the space is ``None``: Harris' and
Scal's documented defaults are outside even the paper's space (see :data:`NO_DEFAULT`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tunerlib.parameters import ConfigurationManipulator, OrdinalParameter

Config = Dict[str, Any]


def pow2(lo: int, hi: int) -> List[int]:
    """Powers of two from ``lo`` to ``hi`` inclusive (``lo`` a power of two)."""
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def is_pow2(n: int) -> bool:
    """True for 1, 2, 4, ..."""
    return n > 0 and n & (n - 1) == 0


def even_tiles(hi: int) -> List[int]:
    """Harris tile sizes: 1 and the even numbers up to ``hi``."""
    return [1] + list(range(2, hi + 1, 2))


_GRID = ["gs0 % ls0 == 0", "gs1 % ls1 == 0", "ls0 * ls1 <= 1024"]


def _grid2d(n: int) -> List[Tuple[str, List[int]]]:
    """Local and global sizes of a kernel over an n x n domain (global sizes scale with n)."""
    ls = pow2(1, min(1024, n))
    return [("ls0", ls), ("ls1", ls), ("gs0", pow2(1, n)), ("gs1", pow2(1, n))]


def _grid_fixed() -> List[Tuple[str, List[int]]]:
    """Local and global sizes {1..1024} (1-D kernels: not tied to the problem size)."""
    r = pow2(1, 1024)
    return [("ls0", r), ("ls1", r), ("gs0", r), ("gs1", r)]


# ------------------------------------------------------------------------ per-kernel definitions
def _mm_params(n: int) -> List[Tuple[str, List[int]]]:
    return _grid2d(n) + [("v3", pow2(4, n)), ("v4", pow2(1, n)), ("v5", pow2(4, n)),
                         ("v6", pow2(4, n)), ("v7", pow2(4, n)), ("v8", pow2(1, n))]


def _mm_constraints(n: int) -> List[str]:
    return (["v7 % v3 == 0", "v5 % v4 == 0", "(v5 * v8) % v6 == 0"]
            + [f"{n} % {v} == 0" for v in ("v5", "v7", "v8", "gs0", "gs1")]
            + [f"{v} % 4 == 0" for v in ("v3", "v5", "v6", "v7")]
            + ["49152 - 4 * v5 * v7 - 4 * v5 * v8 - 4 * v7 * v8 >= 0"] + _GRID)


def _asum_params(n: int) -> List[Tuple[str, List[int]]]:
    return [("ls0", pow2(1, 1024)), ("gs0", pow2(1, 1024)), ("sp0", pow2(1, n)),
            ("sp1", pow2(256, n)), ("stride", pow2(1, n))]


def _asum_constraints(n: int) -> List[str]:
    return ["sp0 % sp1 == 0", "sp0 >= sp1 * stride", "gs0 % ls0 == 0"]


def _scal_params(n: int) -> List[Tuple[str, List[int]]]:
    return _grid_fixed() + [("s0", pow2(1, n)), ("s1", pow2(1, n)), ("vec", pow2(2, 16))]


def _scal_constraints(n: int) -> List[str]:
    return ["s0 % (s1 * vec) == 0"] + _GRID


def _harris_params(n: int) -> List[Tuple[str, List[int]]]:
    tiles = even_tiles(min(1024, n))
    return _grid2d(n) + [("tileX", tiles), ("tileY", tiles), ("vec", [2, 4])]


def _harris_constraints(n: int) -> List[str]:
    return ["(tileX + 4) % vec == 0", "tileX * tileY <= 1024"] + _GRID


def _scale_grid(cfg: Config, n: int, paper: int) -> Config:
    """Global sizes scaled by n/paper (at least 1); everything else kept."""
    out = dict(cfg)
    for key in ("gs0", "gs1"):
        out[key] = max(1, cfg[key] * n // paper)
    return out


def _scale_split(cfg: Config, n: int, paper: int) -> Config:
    """asum: a chunk ``sp0`` larger than the vector becomes the vector, ``stride`` shrinks alike."""
    out = dict(cfg)
    if cfg["sp0"] > n:
        factor = cfg["sp0"] // n
        out["sp0"], out["stride"] = n, max(1, cfg["stride"] // factor)
    return out


def _keep(cfg: Config, n: int, paper: int) -> Config:
    return dict(cfg)


@dataclass(frozen=True)
class KernelSpec:
    """One RISE kernel: what it computes, sizes, space builders, budget, paper configurations.

    ``params(n)`` lists (name, ordered values) and ``constraints(n)`` the known constraints at
    size n; ``scale(cfg, n, paper_size)`` maps a paper configuration to size n.  ``budget`` is
    the paper's (initial design + iterations); ``replay`` names the recorded RTX Titan table in
    :data:`tunerlib.replay.recorded.BENCHMARKS`.
    """

    name: str
    what: str
    size_meaning: str
    paper_size: int
    default_size: int
    min_size: int
    max_size: int
    initial: int
    iterations: int
    params: Callable[[int], List[Tuple[str, List[int]]]]
    constraints: Callable[[int], List[str]]
    expert: Mapping[str, int]
    default: Optional[Mapping[str, int]]
    scale: Callable[[Config, int, int], Config] = _keep

    @property
    def budget(self) -> int:
        """The paper's evaluation budget (initial design + iterations)."""
        return self.initial + self.iterations

    @property
    def replay(self) -> str:
        """Name of the recorded table of this kernel (a ``tunerlib.replay.recorded`` benchmark)."""
        return f"rise_{self.name}"


KERNELS: Dict[str, KernelSpec] = {s.name: s for s in [
    KernelSpec("mm", "matrix multiply C = A B (float32), local-memory tiles", "matrix side N (N x N x N)",
               1024, 256, 16, 4096, 11, 109, _mm_params, _mm_constraints,
               dict(ls0=32, ls1=8, gs0=256, gs1=128, v3=4, v4=8, v5=64, v6=128, v7=128, v8=16),
               dict(ls0=1, ls1=1, gs0=1024, gs1=1024, v3=4, v4=1, v5=4, v6=4, v7=4, v8=1), _scale_grid),
    KernelSpec("asum", "sum of absolute values (partial sums per split)", "vector length n",
               2 ** 24, 2 ** 22, 2 ** 10, 2 ** 26, 6, 54, _asum_params, _asum_constraints,
               dict(ls0=128, gs0=1024, sp0=262144, sp1=2048, stride=128),
               dict(ls0=4, gs0=1024, sp0=2 ** 24, sp1=512, stride=4096), _scale_split),
    KernelSpec("scal", "y = alpha x (float32, vector loads)", "vector length n",
               2 ** 25, 2 ** 22, 2 ** 10, 2 ** 26, 8, 52, _scal_params, _scal_constraints,
               dict(ls0=256, ls1=1, gs0=1024, gs1=1, s0=512, s1=1, vec=2), None),
    KernelSpec("kmeans", "nearest-centroid assignment (5 clusters, 34 features)", "points n",
               2 ** 19, 2 ** 16, 2 ** 10, 2 ** 22, 5, 55, lambda n: _grid_fixed(), lambda n: list(_GRID),
               dict(ls0=256, ls1=1, gs0=1024, gs1=1), dict(ls0=1, ls1=1, gs0=1024, gs1=1)),
    KernelSpec("harris", "Harris corner response of an RGB image (gray, Sobel, 3x3 sums)", "image side N",
               1024, 512, 16, 8192, 9, 91, _harris_params, _harris_constraints,
               dict(ls0=8, ls1=32, gs0=128, gs1=1024, tileX=64, tileY=16, vec=4), None, _scale_grid),
    KernelSpec("stencil", "2-D 5-point Jacobi stencil", "grid side N",
               1024, 1024, 16, 8192, 11, 49, lambda n: _grid2d(n), lambda n: list(_GRID),
               dict(ls0=32, ls1=32, gs0=1024, gs1=1024), dict(ls0=1, ls1=1, gs0=1024, gs1=1024), _scale_grid),
]}

#: why a kernel has no default configuration
NO_DEFAULT = {
    "scal": "the documented default (32, 1, 1024, 1, 32, 32, 8) violates s0 % (s1*vec) == 0",
    "harris": "the documented default (all 1, vec 4) violates (tileX + 4) % vec == 0",
}


def kernel_names() -> List[str]:
    """The kernels in the order of the paper's table."""
    return list(KERNELS)


def resolve_size(kernel: str, size: Optional[int]) -> int:
    """The problem size of a run (``None`` -> the kernel's default); ValueError (one line) when it is
    not a power of two within the kernel's range."""
    spec = KERNELS[kernel]
    n = spec.default_size if size is None else int(size)
    if not is_pow2(n) or not spec.min_size <= n <= spec.max_size:
        raise ValueError(f"--size {n} is not valid for {kernel}: use a power of two from "
                         f"{spec.min_size} to {spec.max_size} ({spec.size_meaning})")
    return n


def build_space(kernel: str, size: int) -> ConfigurationManipulator:
    """A new search space for ``kernel`` at problem size ``size`` (called once per run)."""
    spec = KERNELS[kernel]
    params = [OrdinalParameter(name, values, log=True) for name, values in spec.params(size)]
    return ConfigurationManipulator(params, spec.constraints(size))


def paper_config(kernel: str, which: str, size: int) -> Optional[Config]:
    """The paper's ``"expert"`` or ``"default"`` configuration mapped to ``size`` (see the module
    docstring), or None when there is none or it lies outside the scaled space."""
    spec = KERNELS[kernel]
    cfg = spec.expert if which == "expert" else spec.default
    if cfg is None:
        return None
    scaled = spec.scale(dict(cfg), size, spec.paper_size)
    space = build_space(kernel, size)
    if not space.is_valid(scaled) or not space.is_feasible(scaled):
        return None
    return space.normalize(scaled)


def work_groups(cfg: Mapping[str, Any]) -> int:
    """How many work-groups a configuration launches: (gs0/ls0) x (gs1/ls1) (1-D kernels: gs0/ls0)."""
    count = 1
    for gs, ls in (("gs0", "ls0"), ("gs1", "ls1")):
        if gs in cfg and ls in cfg:
            count *= max(1, cfg[gs] // cfg[ls])
    return count


def machine_config(kernel: str, cfg: Optional[Config], size: int, compute_units: int) -> Optional[Config]:
    """The paper's GPU configuration mapped to this device: the same work-group shape and per-item
    choices, launching no more work-groups than the device has compute units (a GPU expert fills
    an 80-SM GPU with hundreds of work-groups; a CPU runs one per core), by halving ``gs1`` and
    then ``gs0`` down to their local sizes.  None when it already fits, or the mapped form lies
    outside the space."""
    if cfg is None or work_groups(cfg) <= max(1, compute_units):
        return None
    out = dict(cfg)
    for gs, ls in (("gs1", "ls1"), ("gs0", "ls0")):
        while gs in out and out[gs] > out[ls] and work_groups(out) > compute_units:
            out[gs] //= 2
    space = build_space(kernel, size)
    return space.normalize(out) if space.is_valid(out) and space.is_feasible(out) else None


def baselines(kernel: str, size: int, compute_units: int) -> Dict[str, Optional[Config]]:
    """The paper's default and expert, each as given and -- when it launches more work-groups than
    this device has compute units -- mapped to it (:func:`machine_config`), in table order:
    ``{"default": cfg, "default, 2 work-groups": cfg, "expert": cfg, "expert, 2 work-groups": cfg}``
    (None: no configuration; a mapped form only where it differs)."""
    out: Dict[str, Optional[Config]] = {}
    for which in ("default", "expert"):
        cfg = out[which] = paper_config(kernel, which, size)
        mapped = machine_config(kernel, cfg, size, compute_units)
        if mapped is not None:
            out[f"{which}, {work_groups(mapped)} work-group{'s' if work_groups(mapped) > 1 else ''}"] = mapped
    return out


def why_no_config(kernel: str, which: str, size: int) -> str:
    """A short reason why :func:`paper_config` returned None."""
    spec = KERNELS[kernel]
    cfg = spec.expert if which == "expert" else spec.default
    if cfg is None:
        return NO_DEFAULT.get(kernel, f"no {which} configuration is documented")
    scaled = spec.scale(dict(cfg), size, spec.paper_size)
    space = build_space(kernel, size)
    if not space.is_valid(scaled):
        outside = [f"{k}={v}" for k, v in scaled.items() if not space.parameter(k).is_valid(v)]
        return f"{', '.join(outside)} outside the ranges at size {size}"
    return f"violates {', '.join(space.violated_constraints(scaled))} at size {size}"


def describe(cfg: Optional[Mapping[str, Any]], names: Optional[Sequence[str]] = None) -> str:
    """``k=v`` pairs of a configuration in parameter order (``-`` for None)."""
    if cfg is None:
        return "-"
    keys = list(names) if names is not None else list(cfg)
    return " ".join(f"{k}={cfg[k]}" for k in keys if k in cfg)
