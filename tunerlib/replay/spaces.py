"""Search spaces (parameters + known constraints) of every recorded benchmark, and their loader.

:data:`BENCHMARKS` maps a benchmark name (``gemm_rtxtitan``, ``conv_a100``, ``rise_kmeans``,
``taco_spmm`` ...) to a :class:`BenchmarkSpec`: where its table lies under the shared data folder,
how its parameters are typed, its known constraints as tunerlib expression strings, budgets and
(for RISE) the expert and default configurations of ``docs/benchmark-spaces.md``.
:func:`tunerlib.replay.interface.load_benchmark` joins a spec with its recorded table into a
``ReplayBenchmark`` (manipulator factory, lookups, optimum).  :func:`rows_in_space` measures a space
against its table (the feasible count is ``tunerlib.parameters.FeasibleSpace.count``).

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
  13436 recorded scal rows violate it and their times are bogus (down to 0.0026 ms), so the
  in-space optimum (1.061 ms) is what a replay run can reach.
* TACO: CATBench's definitions.  The thread count is the machine's: its values are the recorded
  ones that satisfy CATBench's rule (an integer >= 2, and even for SpMM and SDDMM, which encodes
  their ``omp_num_threads % 2 == 0``), so the shipped 128-thread tables give the even numbers
  2..128 and a table from another machine gives its own counts (:meth:`ParamDef.for_table`).
  CATBench's ``permutation[k]`` (position of loop k) is written ``index(permutation, k)``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..parameters import (ConfigurationManipulator, EnumParameter, OrdinalParameter, Parameter,
                          PermutationParameter, parse_expression)
from .kerneltuner import read_kerneltuner_cache
from .rise import read_rise_csv
from .table import RecordedTable, canonical_value
from .taco import read_taco_csv

#: environment variable naming the shared folder (there is no default: the library knows no repository layout)
SHARED_ENV = "TUNERLIB_SHARED_DIR"


def pow2(lo: int, hi: int) -> Tuple[int, ...]:
    """Powers of two from ``lo`` to ``hi`` inclusive."""
    out, v = [], 1
    while v <= hi:
        if v >= lo:
            out.append(v)
        v *= 2
    return tuple(out)


def _is_pow2_set(values: Sequence[Any]) -> bool:
    return len(values) > 1 and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                   and v & (v - 1) == 0 for v in values)


@dataclass(frozen=True)
class ParamDef:
    """One search parameter: ordered legal values and a kind (ordinal, enum or permutation).

    A machine-dependent parameter (TACO's thread count) has no fixed values: ``recorded`` is the
    kernel's rule for it (an expression over the parameter, e.g. ``"omp_num_threads >= 2"``) and
    its values are those of the replayed table that satisfy the rule (:meth:`for_table`).
    """

    name: str
    values: Tuple[Any, ...]
    kind: str = "ordinal"
    recorded: Optional[str] = None

    def build(self) -> Parameter:
        """The tunerlib parameter (ordinals are log-scaled when every value is a power of two)."""
        if self.recorded is not None and not self.values:
            raise ValueError(f"parameter {self.name!r} takes its values from a table; call for_table first")
        if self.kind == "enum":
            return EnumParameter(self.name, list(self.values))
        if self.kind == "permutation":
            return PermutationParameter(self.name, list(self.values))
        vals = sorted(self.values)
        return OrdinalParameter(self.name, vals, log=_is_pow2_set(vals))

    def for_table(self, table: RecordedTable) -> "ParamDef":
        """This definition with the values of ``table`` that satisfy :attr:`recorded` (itself when
        the values are fixed).  Raises ValueError (one line) when no recorded value satisfies it."""
        if self.recorded is None:
            return self
        rule = parse_expression(self.recorded)
        seen = table.value_sets().get(self.name, [])
        values = tuple(v for v in seen if isinstance(v, int) and rule.evaluate({self.name: v}))
        if not values:
            raise ValueError(f"{table.source or table.name}: no recorded {self.name} satisfies "
                             f"{self.recorded!r} (recorded: {seen[:8]}); give a table of this kernel")
        return ParamDef(self.name, values, self.kind)


@dataclass(frozen=True)
class BenchmarkSpec:
    """Static definition of a replay benchmark.

    ``path`` is relative to the shared folder; ``family`` picks the reader (``kerneltuner``,
    ``rise``, ``taco``); ``kernel`` names the kernel (benchmarks of one kernel on several devices
    share it and their space); ``columns`` lists a Kernel Tuner cache's parameters.  ``params``
    None means "from the Kernel Tuner cache's tune_params" (with ``categorical`` naming enum
    parameters).  ``constraints`` may name constants; they are
    substituted when the manipulator is built.  ``exhaustive`` tables record every feasible
    configuration (up to failures); ``sparse`` ones are samples.
    """

    name: str
    family: str
    path: str
    constraints: Tuple[str, ...] = ()
    params: Optional[Tuple[ParamDef, ...]] = None
    categorical: Tuple[str, ...] = ()
    exhaustive: bool = False
    budgets: Tuple[int, ...] = (20, 50, 100)
    expert: Optional[Mapping[str, Any]] = None
    default: Optional[Mapping[str, Any]] = None
    description: str = ""
    t1_spec: Optional[str] = None
    kernel: str = ""
    columns: Tuple[str, ...] = ()

    @property
    def sparse(self) -> bool:
        """True when the table is a sample of the space (most configurations are not measured)."""
        return not self.exhaustive

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


def _kt_specs() -> List[BenchmarkSpec]:
    specs = [BenchmarkSpec(
        f"gemm_{gpu.lower().replace('_', '')}", "kerneltuner", f"{_KT}/gemm_clblast/{fname}",
        _GEMM_CONSTRAINTS, categorical=("SA", "SB"), exhaustive=True, kernel="gemm", columns=_KT_COLUMNS["gemm"],
        description=f"CLBlast Xgemm 4096^2 fp32 on {gpu.replace('_', ' ')} (Kernel Tuner cache, exhaustive)")
        for gpu, fname in (("RTX_Titan", "RTX_Titan.json.gz"), ("RTX_3090", "RTX_3090.trimmed.json.gz"))]
    for short, gpu in _GPUS.items():
        conv_file = "A100.json.gz" if gpu == "A100" else f"{gpu}.trimmed.json.gz"
        specs.append(BenchmarkSpec(
            f"conv_{short}", "kerneltuner", f"{_KT}/convolution_milo/{conv_file}", _CONV_CONSTRAINTS,
            categorical=("read_only", "use_padding", "use_shmem"), exhaustive=True, kernel="conv",
            columns=_KT_COLUMNS["conv"],
            description=f"2D convolution 4096^2, 15x15 filter on {gpu} (Kernel Tuner cache, exhaustive)",
            t1_spec=f"{_KT}/t1_specs/convolution_milo.json"))
        specs.append(BenchmarkSpec(
            f"dedisp_{short}", "kerneltuner", f"{_KT}/dedispersion_milo/{gpu}.trimmed.json.gz",
            _DEDISP_CONSTRAINTS, categorical=("tile_stride_x", "tile_stride_y"), exhaustive=True,
            kernel="dedisp", columns=_KT_COLUMNS["dedisp"],
            description=f"dedispersion 25000x2048 on {gpu} (Kernel Tuner cache, exhaustive)",
            t1_spec=f"{_KT}/t1_specs/dedispersion_milo.json"))
    specs.append(BenchmarkSpec(
        "pnpoly_rtxtitan", "kerneltuner", f"{_KT}/pnpoly/RTX_Titan.trimmed.json.gz", (),
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


def _rise_specs() -> List[BenchmarkSpec]:
    def spec(name: str, params: Tuple[ParamDef, ...], constraints: Tuple[str, ...], budgets, expert,
             default, what: str, exhaustive: bool = False) -> BenchmarkSpec:
        return BenchmarkSpec(f"rise_{name}", "rise", f"{_RISE}/{name}_rtxtitan.csv.gz", constraints,
                             params, exhaustive=exhaustive, budgets=budgets, expert=_tuned(expert),
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


def _taco_specs() -> List[BenchmarkSpec]:
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
        out.append(BenchmarkSpec(f"taco_{op}", "taco", f"{_TACO}/{op}_7742.csv.gz", cons, params,
                                 budgets=(20, 60), kernel=op,
                                 description=f"TACO {op.upper()} on a 128-thread CPU (CATBench table, "
                                             "sparse sample)"))
    return out


#: every known replay benchmark, by name
BENCHMARKS: Dict[str, BenchmarkSpec] = {s.name: s for s in _kt_specs() + _rise_specs() + _taco_specs()}
_READERS = {"kerneltuner": read_kerneltuner_cache, "rise": read_rise_csv, "taco": read_taco_csv}


# --------------------------------------------------------------------------- locating data
def default_shared_dir() -> Path:
    """``$TUNERLIB_SHARED_DIR``: the shared data folder when no folder is passed.  The library knows
    no repository layout, so without it this raises FileNotFoundError saying what to pass."""
    env = os.environ.get(SHARED_ENV)
    if env:
        return Path(env)
    raise FileNotFoundError(f"no shared data folder given: pass it (--shared-dir DIR, the folder holding "
                            f"data/gpu_cache and data/taco_cache) or set ${SHARED_ENV}")


def available_benchmarks(shared_dir: Union[str, Path, None] = None,
                         include_sparse: bool = True) -> List[str]:
    """Names of the benchmarks whose table file exists under ``shared_dir``."""
    root = Path(shared_dir) if shared_dir is not None else default_shared_dir()
    return [n for n, s in BENCHMARKS.items()
            if (root / s.path).is_file() and (include_sparse or not s.sparse)]


_TABLES: Dict[Tuple[Any, ...], RecordedTable] = {}


def load_table(spec: BenchmarkSpec, path: Path) -> RecordedTable:
    """Read ``path`` with the spec's reader, taking the spec's parameter columns by name (once per
    file and spec: cached by path, mtime and spec).  Raises ValueError (one line) when the file
    lacks a parameter of the spec, or (Kernel Tuner caches) has parameters the spec lacks."""
    names = spec.param_names
    key = (str(path.resolve()), path.stat().st_mtime, spec.name, spec.family, names)
    if key not in _TABLES:
        if spec.family == "kerneltuner":
            table = read_kerneltuner_cache(path, name=spec.name)
            if names is not None:
                check_columns(table.params, names, path, spec.kernel or spec.name)
        else:
            table = _READERS[spec.family](path, name=spec.name, params=names)
        _TABLES[key] = table
    return _TABLES[key]


def check_columns(found: Sequence[str], expected: Sequence[str], path: Path, kernel: str) -> None:
    """ValueError (one line) naming the missing and unexpected parameters unless ``found`` and
    ``expected`` hold the same names."""
    missing = [n for n in expected if n not in found]
    unexpected = [n for n in found if n not in expected]
    if missing or unexpected:
        parts = ([f"missing {missing}"] if missing else []) + ([f"unexpected {unexpected}"] if unexpected else [])
        raise ValueError(f"{path}: not a {kernel} table: parameters {', '.join(parts)}; "
                         f"give a table with the parameters {list(expected)}")


# --------------------------------------------------------------------------- rows in the space
def rows_in_space(manipulator: ConfigurationManipulator, configs: Iterable[Mapping[str, Any]]) -> Tuple[int, int]:
    """(configurations with legal values, of those the ones satisfying every known constraint).

    Memoised per parameter value and per constraint group projection, so tables of 10^4-10^5 rows
    with few distinct values per group are checked quickly; equal to calling ``is_valid`` and
    ``is_feasible`` on each configuration.
    """
    names = manipulator.names
    groups = [(tuple(sorted(g)), manipulator.group_constraints(g)) for g in manipulator.groups()]
    valid: Dict[Tuple[str, Any], bool] = {}
    feasible: List[Dict[Tuple[Any, ...], bool]] = [{} for _ in groups]
    n_legal = n_feasible = 0
    for cfg in configs:
        if len(cfg) != len(names) or any(n not in cfg for n in names):
            continue
        if not all(_memo(valid, (n, canonical_value(cfg[n])), lambda: manipulator.parameter(n).is_valid(cfg[n]))
                   for n in names):
            continue
        n_legal += 1
        n_feasible += all(_memo(memo, tuple(canonical_value(cfg[n]) for n in g),
                                lambda: all(c.is_satisfied(cfg) for c in checks))
                          for memo, (g, checks) in zip(feasible, groups))
    return n_legal, n_feasible


def _memo(cache: Dict[Any, bool], key: Any, compute) -> bool:
    value = cache.get(key)
    if value is None:
        value = cache[key] = bool(compute())
    return value
