"""A recorded table file -> :class:`~tunerlib.replay.ReplayBenchmark`: whose space it is.

The kernel defines the space (parameters, known constraints, expert and default configurations);
a table file only answers measurements, so a table recorded on another machine, with its columns
in another order and under any file name, gets the same space as the shipped one.
:func:`benchmark_from_file` decides the space:

* ``like`` names a benchmark (a tuner's ``--kernel`` or ``--benchmark``): that benchmark's space.
  The file must hold its parameters (a one-line ValueError names the missing and unexpected
  columns otherwise).
* Without ``like`` the file is identified by its content: the benchmark whose own file it is
  (same path tail as in :data:`~tunerlib.replay.recorded.catalogue.BENCHMARKS`), else the kernel whose
  parameters are exactly the file's (Kernel Tuner caches: ``tune_params_keys``; CSVs: every column
  but the known metadata ones).  Benchmarks of one kernel on several devices share a space.  When
  several kernels fit (RISE kmeans and stencil have the same parameters), the one named in the
  file name is taken; otherwise ValueError asks to name the benchmark.
* A file with every parameter of a kernel and more columns is refused (ValueError naming the
  unexpected columns): read as a generic table it would lose the kernel's constraints.  Named with
  ``like``, its other columns are metadata (a Kernel Tuner cache must have exactly the kernel's
  parameters).
* No kernel fits: a generic space (parameters from the recorded values, no known constraints;
  :func:`tunerlib.replay.benchmark_from_table`).

A table that is not the benchmark's own file is named ``<benchmark>:<file stem>`` (so runs on
different tables never share a program name in the results database).  It is exhaustive when its
data say so: every configuration of the kernel's space that satisfies the known constraints has a
row, OK or failed (:meth:`~tunerlib.replay.ReplayBenchmark.covers_space`); otherwise it is a sample.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Optional, Sequence, Union

from tunerlib.replay import RecordedTable, ReplayBenchmark, benchmark_from_table, read_header, split_columns

from .catalogue import BENCHMARKS, RecordedSpec
from .tables import check_columns, load_table

__all__ = ["benchmark_from_file", "identify", "own_spec"]


def benchmark_from_file(path: Union[str, Path], like: Optional[str] = None) -> ReplayBenchmark:
    """The :class:`ReplayBenchmark` replaying the table file ``path`` (see the module docstring).

    Raises FileNotFoundError for a missing file, KeyError for an unknown ``like`` and ValueError
    (one line) when the file does not fit the benchmark or fits several.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"replay table {path} not found; give an existing .json[.gz] or .csv[.gz]")
    if like is not None:
        if like not in BENCHMARKS:
            raise KeyError(f"unknown replay benchmark {like!r}; known: {', '.join(BENCHMARKS)}")
        spec = BENCHMARKS[like]
        if (spec.family == "kerneltuner") != (".json" in path.suffixes):
            kind = "a Kernel Tuner cache (.json[.gz])" if spec.family == "kerneltuner" else "a CSV table"
            raise ValueError(f"{path}: {like}'s table is {kind}; give such a file or another benchmark")
        return _joined(spec, path)
    own = own_spec(path)
    if own is not None:
        return ReplayBenchmark(own, load_table(own, path))
    if ".json" in path.suffixes:
        table = load_table(_generic_spec(path, "kerneltuner"), path)
        found = identify(path, ("kerneltuner",), table.params)
        if found is not None:
            return _joined(found, path, table)
        return ReplayBenchmark(_generic_spec(path, "kerneltuner"), table)
    names, _ = split_columns(read_header(path, "measurement CSV"), path)
    found = identify(path, ("rise", "taco"), names)
    if found is not None:
        return _joined(found, path)
    return _generic(path, "taco" if "permutation" in names else "rise")


def own_spec(path: Path) -> Optional[RecordedSpec]:
    """The benchmark whose own table ``path`` is (same last two path parts), or None."""
    tail = path.resolve().parts[-2:]
    return next((s for s in BENCHMARKS.values() if tuple(Path(s.path).parts[-2:]) == tail), None)


def identify(path: Path, families: Sequence[str], names: Sequence[str]) -> Optional[RecordedSpec]:
    """The first benchmark (of ``families``) whose kernel's parameters are exactly ``names``; None
    when there is none; ValueError (one line) when several kernels fit and the file name names
    none of them."""
    fits = [s for s in BENCHMARKS.values()
            if s.family in families and s.param_names is not None and set(s.param_names) == set(names)]
    kernels = list(dict.fromkeys(s.kernel for s in fits))
    if not kernels:
        _refuse_extra_columns(path, families, names)
    if len(kernels) > 1:
        words = set(re.split(r"[^a-z0-9]+", path.name.lower()))
        named = [k for k in kernels if k in words]
        if len(named) != 1:
            choices = ", ".join(s.name for s in fits)
            raise ValueError(f"{path}: its columns fit several kernels ({choices}); say which "
                             "(a tuner's --kernel or --benchmark, or BENCHMARK=FILE)")
        kernels = named
    return next((s for s in fits if s.kernel == kernels[0]), None) if kernels else None


def _refuse_extra_columns(path: Path, families: Sequence[str], names: Sequence[str]) -> None:
    """ValueError (one line) when ``names`` hold every parameter of a known kernel and more: the
    table is that kernel's with unexpected columns, which a generic space would silently drop the
    kernel's constraints for."""
    within = [s for s in BENCHMARKS.values() if s.family in families and s.param_names is not None
              and set(s.param_names) < set(names)]
    if within:
        spec = max(within, key=lambda s: len(s.param_names or ()))
        unexpected = [n for n in names if n not in (spec.param_names or ())]
        fix = (f"a {spec.kernel} cache has exactly the parameters {list(spec.param_names or ())}"
               if spec.family == "kerneltuner" else
               f"remove them, or name the benchmark (a tuner's --benchmark {spec.name}, or "
               f"{spec.name}=FILE) to read them as metadata")
        raise ValueError(f"{path}: holds the parameters of kernel {spec.kernel} ({spec.name}) and the unexpected "
                         f"column(s) {unexpected}; {fix}")


def _joined(spec: RecordedSpec, path: Path, table: Optional[RecordedTable] = None) -> ReplayBenchmark:
    """``spec``'s space with the table of ``path`` (renamed when it is not the spec's own file)."""
    if table is None:
        table = load_table(spec, path)
    else:
        check_columns(table.params, spec.param_names or (), path, spec.kernel or spec.name)
    if own_spec(path) == spec:
        return ReplayBenchmark(spec, table)
    stem, kernel = path.name.split(".")[0], spec.name
    spec = replace(spec, name=f"{kernel}:{stem}", path=str(path), exhaustive=False,
                   description=f"{path.name}: recorded table in the space of {kernel}")
    bench = ReplayBenchmark(spec, table)
    if not bench.covers_space():
        return bench
    spec = replace(spec, exhaustive=True, description=f"{path.name}: exhaustive table in the space of {kernel}")
    return ReplayBenchmark(spec, table)


def _generic_spec(path: Path, family: str) -> RecordedSpec:
    return RecordedSpec(path.name.split(".")[0], str(path), family=family,
                        description=f"recorded table {path.name} (no known constraints)")


def _generic(path: Path, family: str) -> ReplayBenchmark:
    """An unknown CSV: parameters from the recorded values; single-valued ones are constants."""
    spec = _generic_spec(path, family)
    return benchmark_from_table(load_table(spec, path), spec)
