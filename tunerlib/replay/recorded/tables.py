"""Where the recorded tables lie and how they are read: the shared data folder, :func:`load_table`,
:func:`load_benchmark`.

The shared data folder (holding ``data/gpu_cache`` and ``data/taco_cache``) is given explicitly or
by ``$TUNERLIB_SHARED_DIR``; there is no default (:func:`shared_folder` says what to pass).  Each
:class:`~tunerlib.replay.recorded.catalogue.RecordedSpec` names its table relative to that folder
and its reader by ``family``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple, Union

from tunerlib.replay import RecordedTable, ReplayBenchmark

from .catalogue import BENCHMARKS, RecordedSpec
from .kerneltuner import read_kerneltuner_cache
from .rise import read_rise_csv
from .taco import read_taco_csv

__all__ = ["SHARED_ENV", "available_benchmarks", "check_columns", "load_benchmark", "load_table", "shared_folder"]

#: environment variable naming the shared data folder (the only default there is)
SHARED_ENV = "TUNERLIB_SHARED_DIR"
_READERS = {"rise": read_rise_csv, "taco": read_taco_csv}  # Kernel Tuner caches: read_kerneltuner_cache
Folder = Union[str, Path, None]


def shared_folder(given: Folder = None, option: str = "--shared-dir DIR") -> Path:
    """The shared data folder: ``given``, else ``$TUNERLIB_SHARED_DIR``.  Without either raises
    FileNotFoundError with one line saying to pass ``option`` or set the variable."""
    if given is not None and str(given):
        return Path(given)
    env = os.environ.get(SHARED_ENV)
    if env:
        return Path(env)
    raise FileNotFoundError(f"no shared data folder given (the folder holding data/gpu_cache and data/taco_cache): "
                            f"pass {option} or set ${SHARED_ENV}")


def available_benchmarks(shared_dir: Folder = None, include_sparse: bool = True) -> List[str]:
    """Names of the benchmarks whose table file exists under ``shared_dir`` (default:
    :func:`shared_folder`)."""
    root = shared_folder(shared_dir)
    return [n for n, s in BENCHMARKS.items()
            if (root / s.path).is_file() and (include_sparse or not s.sparse)]


def load_benchmark(name: str, shared_dir: Folder = None) -> ReplayBenchmark:
    """The :class:`~tunerlib.replay.ReplayBenchmark` called ``name`` (table read once per process)
    from ``shared_dir`` (default: :func:`shared_folder`).

    Raises KeyError for an unknown name and FileNotFoundError when its table or the folder is missing.
    """
    if name not in BENCHMARKS:
        raise KeyError(f"unknown replay benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    spec = BENCHMARKS[name]
    path = shared_folder(shared_dir) / spec.path
    if not path.is_file():
        raise FileNotFoundError(f"replay table {path} not found; pass the shared data folder "
                                f"(shared_dir= or ${SHARED_ENV})")
    return ReplayBenchmark(spec, load_table(spec, path))


_TABLES: Dict[Tuple[Any, ...], RecordedTable] = {}


def load_table(spec: RecordedSpec, path: Path) -> RecordedTable:
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
