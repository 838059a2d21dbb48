"""Search spaces (parameters + known constraints) of every recorded benchmark: :data:`BENCHMARKS`.

:data:`BENCHMARKS` maps a benchmark name (``gemm_rtxtitan``, ``conv_a100``, ``rise_kmeans``,
``taco_spmm`` ...) to a :class:`RecordedSpec` (a :class:`tunerlib.replay.BenchmarkSpec` with the
reader and kernel it belongs to): where its table lies under the shared data folder, how its
parameters are typed, its known constraints as tunerlib expression strings, budgets and (for RISE)
the expert and default configurations of ``docs/benchmark-spaces.md``.
:func:`tunerlib.replay.recorded.load_benchmark` joins a spec with its recorded table into a
:class:`tunerlib.replay.ReplayBenchmark` (manipulator factory, lookups, optimum).

Where the definitions come from:

* Kernel Tuner caches (exhaustive): parameter values are the cache's ``tune_params``; single-valued
  parameters are constants (left out of the space, filled in on lookup).  GEMM constraints are the
  gpu_cache README's; convolution and dedispersion constraints are the ``Conditions`` of
  ``t1_specs/<kernel>.json``, transcribed here (a test checks them against the parsed spec);
  pnpoly has none.  Flags (0/1) and method selectors are enums, other sets ordinals (log-scaled
  when all values are powers of two).
* RISE kernels: CATBench's definitions (``catbench/benchmarks/<bench>.py``): power-of-two ordinals
  (log-scaled).  Harris ``tileX``/``tileY`` are integers 1..1024 that must be 1 or even: that rule is
  encoded in the domain {1, 2, 4, 6, ..., 1024}.  Scal's compound constraint is reduced to
  ``s0 % (s1*vec) == 0`` (its other terms follow from it for positive powers of two); 8854 of the
  13436 recorded scal rows violate it and their times are bogus (down to 0.0026 ms recorded, 2.6e-06 s), so the
  in-space optimum (1.061 ms recorded, 0.001061 s) is what a replay run can reach.
* TACO: CATBench's definitions.  The thread count is the machine's: its values are the recorded
  ones that satisfy CATBench's rule (an integer >= 2, and even for SpMM and SDDMM, which encodes
  their ``omp_num_threads % 2 == 0``), so the shipped 128-thread tables give the even numbers
  2..128 and a table from another machine gives its own counts (``ParamDef.for_table``).
  CATBench's ``permutation[k]`` (position of loop k) is written ``index(permutation, k)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from tunerlib.replay import BenchmarkSpec, ParamDef

__all__ = ["BENCHMARKS", "FAMILIES", "RecordedSpec", "pow2"]

#: table formats of the recorded benchmarks (the ``family`` of a spec picks the reader)
FAMILIES = ("kerneltuner", "rise", "taco")


def pow2(lo: int, hi: int) -> Tuple[int, ...]:
    """Powers of two from ``lo`` to ``hi`` inclusive."""
    out, v = [], 1
    while v <= hi:
        if v >= lo:
            out.append(v)
        v *= 2
    return tuple(out)


@dataclass(frozen=True)
class RecordedSpec(BenchmarkSpec):
    """A recorded benchmark of the shared data folder: a :class:`~tunerlib.replay.BenchmarkSpec`
    whose ``path`` is relative to the shared folder, with the reader and kernel it belongs to.

    ``family`` picks the reader (``kerneltuner``, ``rise``, ``taco``); ``kernel`` names the kernel
    (benchmarks of one kernel on several devices share it and their space); ``columns`` lists a
    Kernel Tuner cache's parameters (``params`` None: from the cache's ``tune_params``, with
    ``categorical`` naming enum parameters); ``t1_spec`` is the T1 specification its constraints
    were transcribed from.
    """

    family: str = ""
    kernel: str = ""
    columns: Tuple[str, ...] = ()
    t1_spec: Optional[str] = None

    @property
    def param_names(self) -> Optional[Tuple[str, ...]]:
        """The tuning-parameter columns a table of this benchmark holds (``params`` or, for Kernel
        Tuner caches, ``columns``); None for a generic table."""
        if self.params is not None:
            return tuple(p.name for p in self.params)
        return self.columns or None


# --------------------------------------------------------------------------- definitions
_KT = "data/gpu_cache/kerneltuner_hub"
_RISE = "data/gpu_cache/rise_baco"
_TACO = "data/taco_cache"
_GEMM_CONSTRAINTS = (
    "KWG % KWI == 0", "MWG % (MDIMC * VWM) == 0", "NWG % (NDIMC * VWN) == 0",
    "MWG % (MDIMA * VWM) == 0", "NWG % (NDIMB * VWN) == 0",
    "KWG % ((MDIMC * NDIMC) / MDIMA) == 0", "KWG % ((MDIMC * NDIMC) / NDIMB) == 0",
    "MDIMC * NDIMC <= 1024")  # the last: Kernel Tuner's thread limit on block_size_names
_CONV_CONSTRAINTS = (  # t1_specs/convolution_milo.json Conditions
    "use_padding==0 or block_size_x % 32 != 0",
    "block_size_x*block_size_y<=1024",
    "use_padding==0 or use_shmem != 0",
    "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*tile_size_y"
    "+(filter_height-1)))) < 12*1024")
_DEDISP_CONSTRAINTS = (  # t1_specs/dedispersion_milo.json Conditions
    "32 <= block_size_x * block_size_y <= 1024",
    "tile_size_x > 1 or tile_stride_x == 0",
    "tile_size_y > 1 or tile_stride_y == 0")
_GPUS = {"a100": "A100", "a4000": "A4000", "mi250x": "MI250X"}
#: parameters (``tune_params_keys``) of the Kernel Tuner caches, per kernel
_KT_COLUMNS = {
    "gemm": tuple("MWG NWG KWG MDIMC NDIMC MDIMA NDIMB KWI VWM VWN STRM STRN SA SB PRECISION".split()),
    "conv": tuple("block_size_x block_size_y tile_size_x tile_size_y read_only use_padding use_shmem "
                  "use_cmem filter_height filter_width".split()),
    "dedisp": tuple("block_size_x block_size_y block_size_z tile_size_x tile_size_y tile_stride_x "
                    "tile_stride_y loop_unroll_factor_channel".split()),
    "pnpoly": ("between_method", "block_size_x", "tile_size", "use_method"),
}


def _kt_specs() -> List[RecordedSpec]:
    specs = [RecordedSpec(
        f"gemm_{gpu.lower().replace('_', '')}", f"{_KT}/gemm_clblast/{fname}", _GEMM_CONSTRAINTS,
        family="kerneltuner", categorical=("SA", "SB"), exhaustive=True, kernel="gemm",
        columns=_KT_COLUMNS["gemm"],
        description=f"CLBlast Xgemm 4096^2 fp32 on {gpu.replace('_', ' ')} (Kernel Tuner cache, exhaustive)")
        for gpu, fname in (("RTX_Titan", "RTX_Titan.json.gz"), ("RTX_3090", "RTX_3090.trimmed.json.gz"))]
    for short, gpu in _GPUS.items():
        conv_file = "A100.json.gz" if gpu == "A100" else f"{gpu}.trimmed.json.gz"
        specs.append(RecordedSpec(
            f"conv_{short}", f"{_KT}/convolution_milo/{conv_file}", _CONV_CONSTRAINTS, family="kerneltuner",
            categorical=("read_only", "use_padding", "use_shmem"), exhaustive=True, kernel="conv",
            columns=_KT_COLUMNS["conv"],
            description=f"2D convolution 4096^2, 15x15 filter on {gpu} (Kernel Tuner cache, exhaustive)",
            t1_spec=f"{_KT}/t1_specs/convolution_milo.json"))
        specs.append(RecordedSpec(
            f"dedisp_{short}", f"{_KT}/dedispersion_milo/{gpu}.trimmed.json.gz", _DEDISP_CONSTRAINTS,
            family="kerneltuner", categorical=("tile_stride_x", "tile_stride_y"), exhaustive=True, kernel="dedisp",
            columns=_KT_COLUMNS["dedisp"],
            description=f"dedispersion 25000x2048 on {gpu} (Kernel Tuner cache, exhaustive)",
            t1_spec=f"{_KT}/t1_specs/dedispersion_milo.json"))
    specs.append(RecordedSpec(
        "pnpoly_rtxtitan", f"{_KT}/pnpoly/RTX_Titan.trimmed.json.gz", (), family="kerneltuner",
        categorical=("between_method", "use_method"), exhaustive=True, kernel="pnpoly",
        columns=_KT_COLUMNS["pnpoly"],
        description="point-in-polygon 20M points on RTX Titan (Kernel Tuner cache, exhaustive)"))
    return specs


def _p2(names: str, lo: int, hi: int) -> Tuple[ParamDef, ...]:
    return tuple(ParamDef(f"tuned_{n}", pow2(lo, hi)) for n in names.split())


def _tuned(values: Mapping[str, Any]) -> Dict[str, Any]:
    return {f"tuned_{k}": v for k, v in values.items()}


_GRID = ("tuned_gs0 % tuned_ls0 == 0", "tuned_gs1 % tuned_ls1 == 0", "tuned_ls0 * tuned_ls1 <= 1024")
_TILES = (1,) + tuple(range(2, 1025, 2))


def _rise_specs() -> List[RecordedSpec]:
    def spec(name: str, params: Tuple[ParamDef, ...], constraints: Tuple[str, ...], budgets, expert,
             default, what: str, exhaustive: bool = False) -> RecordedSpec:
        return RecordedSpec(f"rise_{name}", f"{_RISE}/{name}_rtxtitan.csv.gz", constraints,
                            params, family="rise", exhaustive=exhaustive, budgets=budgets, expert=_tuned(expert),
                            default=_tuned(default) if default else None, kernel=name,
                            description=f"RISE {what} on RTX Titan (BaCO/CATBench table, "
                                        f"{'near-exhaustive' if exhaustive else 'sparse sample'})")
    grid = _p2("gs0 gs1 ls0 ls1", 1, 1024)
    return [
        spec("kmeans", grid, _GRID, (20, 50, 60, 100), dict(ls0=256, ls1=1, gs0=1024, gs1=1),
             dict(ls0=1, ls1=1, gs0=1024, gs1=1), "K-means (2^19 points)", True),
        spec("stencil", grid, _GRID, (20, 50, 60, 100), dict(ls0=32, ls1=32, gs0=1024, gs1=1024),
             dict(ls0=1, ls1=1, gs0=1024, gs1=1024), "stencil (1024)", True),
        spec("mm", _p2("v3", 4, 1024) + _p2("v4", 1, 1024) + _p2("v5 v6 v7", 4, 1024)
             + _p2("v8 ls0 ls1 gs0 gs1", 1, 1024),
             ("tuned_v7 % tuned_v3 == 0", "tuned_v5 % tuned_v4 == 0", "tuned_v5 * tuned_v8 % tuned_v6 == 0")
             + _GRID + ("49152 - tuned_v5 * 4 - tuned_v5 * 4 - 4 >= 0",
                        "49152 - tuned_v5 * tuned_v7 * 4 - tuned_v5 * 4 - 4 * tuned_v7 >= 0",
                        "49152 - tuned_v5 * tuned_v7 * 4 - tuned_v5 * tuned_v8 * 4 - 4 * tuned_v7 * tuned_v8 >= 0"),
             (20, 50, 120), dict(ls0=32, ls1=8, gs0=256, gs1=128, v3=4, v4=8, v5=64, v6=128, v7=128, v8=16),
             dict(ls0=1, ls1=1, gs0=1024, gs1=1024, v3=4, v4=1, v5=4, v6=4, v7=4, v8=1), "MM_GPU (1024^3)"),
        spec("asum", _p2("sp0", 1, 2 ** 24) + _p2("gs0", 1, 1024) + _p2("stride", 1, 2 ** 24)
             + _p2("sp1", 256, 2 ** 24) + _p2("ls0", 1, 1024),
             ("tuned_sp0 % tuned_sp1 == 0", "tuned_sp0 >= tuned_sp1",
              "tuned_sp0 >= tuned_sp1 * tuned_stride", "tuned_gs0 % tuned_ls0 == 0"),
             (20, 60), dict(ls0=128, gs0=1024, sp0=262144, sp1=2048, stride=128),
             dict(ls0=4, gs0=1024, sp0=16777216, sp1=512, stride=4096), "asum (2^24 floats)"),
        spec("scal", _p2("ls1 gs0", 1, 1024) + _p2("s0", 1, 2 ** 25) + _p2("vec", 2, 16)
             + _p2("gs1 ls0", 1, 1024) + _p2("s1", 1, 2 ** 25),
             _GRID + ("tuned_s0 % (tuned_s1 * tuned_vec) == 0",),
             (20, 60), dict(ls0=256, ls1=1, gs0=1024, gs1=1, s0=512, s1=1, vec=2), None, "scal (2^25 floats)"),
        spec("harris", _p2("ls0 ls1 gs0 gs1", 1, 1024) + (ParamDef("tuned_tileX", _TILES),
                                                         ParamDef("tuned_tileY", _TILES))
             + _p2("vec", 2, 4),
             _GRID + ("(tuned_tileX + 4) % tuned_vec == 0", "tuned_tileX * tuned_tileY <= 1024",
                      "(tuned_tileY != 1) or ((tuned_tileX != 1024) and (tuned_tileX != 1022))"),
             (20, 100), dict(ls0=8, ls1=32, gs0=128, gs1=1024, tileX=64, tileY=16, vec=4), None,
             "Harris corner detection (1024^2)"),
    ]


def _perm_pos(k: int) -> str:
    return f"index(permutation, {k})"


#: CATBench's thread rule: an integer from 2 up to the machine's thread count; SpMM and SDDMM
#: also require an even count (their constraint ``omp_num_threads % 2 == 0``)
_THREADS = "omp_num_threads >= 2"
_EVEN_THREADS = _THREADS + " and omp_num_threads % 2 == 0"


def _taco_common(threads: str) -> Tuple[ParamDef, ...]:
    return (ParamDef("omp_num_threads", (), recorded=threads),
            ParamDef("omp_scheduling_type", (0, 1, 2), "enum"), ParamDef("omp_monotonic", (0, 1), "enum"),
            ParamDef("omp_dynamic", (0, 1), "enum"), ParamDef("permutation", (0, 1, 2, 3, 4), "permutation"))


def _taco_specs() -> List[RecordedSpec]:
    p = _perm_pos
    defs = {
        "spmm": ((("chunk_size", 2, 64), ("unroll_factor", 1, 16), ("omp_chunk_size", 1, 64)),
                 (f"{p(0)} < {p(3)}", f"{p(1)} < {p(3)}", f"{p(0)} < {p(2)}", f"{p(1)} < {p(2)}",
                  f"({p(3)} < {p(2)}) or ({p(3)} < {p(4)})")),
        "spmv": ((("chunk_size", 1, 1024), ("chunk_size2", 1, 64), ("chunk_size3", 1, 64),
                  ("omp_chunk_size", 1, 256)), (f"{p(4)} == 4",)),
        "sddmm": ((("chunk_size", 1, 256), ("unroll_factor", 1, 64), ("omp_chunk_size", 1, 256)),
                  ("unroll_factor < chunk_size",
                   f"(({p(2)} < {p(4)}) and ({p(0)} < {p(2)}) and ({p(1)} < {p(2)})) or "
                   f"(({p(4)} < {p(2)}) and ({p(0)} < {p(4)}) and ({p(1)} < {p(4)}))")),
        "ttv": ((("chunk_size_i", 2, 256), ("chunk_size_fpos", 2, 256), ("chunk_size_k", 2, 256),
                 ("omp_chunk_size", 1, 32)),
                (f"({p(0)} == 4) or (({p(0)} == 0) and ({p(1)} == 1)) or (({p(0)} == 1) and ({p(1)} == 0))"
                 f" or (({p(0)} == 0) and ({p(1)} == 4)) or (({p(0)} == 1) and ({p(1)} == 4))",)),
        "mttkrp": ((("chunk_size", 1, 1024), ("unroll_factor", 1, 1024), ("omp_chunk_size", 1, 256)),
                   ("unroll_factor < chunk_size",)),
    }
    out = []
    for op, (pows, cons) in defs.items():
        threads = _EVEN_THREADS if op in ("spmm", "sddmm") else _THREADS
        params = tuple(ParamDef(n, pow2(lo, hi)) for n, lo, hi in pows) + _taco_common(threads)
        out.append(RecordedSpec(f"taco_{op}", f"{_TACO}/{op}_7742.csv.gz", cons, params, family="taco",
                                budgets=(20, 60), kernel=op,
                                description=f"TACO {op.upper()} on a 128-thread CPU (CATBench table, "
                                            "sparse sample)"))
    return out


#: every known replay benchmark, by name
BENCHMARKS: Dict[str, RecordedSpec] = {s.name: s for s in _kt_specs() + _rise_specs() + _taco_specs()}
