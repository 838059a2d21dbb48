"""tunerlib.replay.recorded: the recorded benchmarks of the shared data folder, their readers and catalogue.

The core (:mod:`tunerlib.replay`) replays any table in any space and knows no benchmark collection,
file format of a particular tool or data folder.  This installed module is the collection tunerlib's
examples and benchmark tools replay: GPU kernels recorded by Kernel Tuner, RISE/ELEVATE kernels
(BaCO/CATBench) and TACO schedules (CATBench), with their search spaces and known constraints.
Examples and tools import it as a public module (``from tunerlib.replay.recorded import ...``):

* :data:`BENCHMARKS` -- name -> :class:`RecordedSpec` (``gemm_rtxtitan``, ``conv_a100``,
  ``rise_kmeans``, ``taco_spmm`` ...; :mod:`.catalogue`);
* :func:`load_benchmark` -- a :class:`tunerlib.replay.ReplayBenchmark` by name from the shared data
  folder; :func:`available_benchmarks`, :func:`shared_folder` (an explicit folder or
  ``$TUNERLIB_SHARED_DIR``, :data:`SHARED_ENV`; there is no default), :func:`load_table`
  (:mod:`.tables`);
* :func:`benchmark_from_file` -- a table file from any machine, under any name, in its kernel's
  space (:mod:`.files`);
* the readers :func:`read_kerneltuner_cache`, :func:`read_t1_spec`, :func:`t1_constraints`
  (:mod:`.kerneltuner`), :func:`read_rise_csv` (:mod:`.rise`), :func:`read_taco_csv` (:mod:`.taco`);
* :class:`RecordedInterface` / :class:`RecordedOptions` -- the replay tuner over them
  (:mod:`.interface`, imported on first use)::

      python -m tunerlib.replay.recorded --benchmark rise_kmeans --shared-dir ../shared --test-limit 60
      python -m tunerlib.replay.recorded --data OTHER_GPU.csv.gz --benchmark rise_kmeans
"""
from tunerlib import lazy_exports

from .catalogue import BENCHMARKS, FAMILIES, RecordedSpec
from .files import benchmark_from_file
from .kerneltuner import read_kerneltuner_cache, read_t1_spec, t1_constraints
from .rise import read_rise_csv
from .tables import SHARED_ENV, available_benchmarks, load_benchmark, load_table, shared_folder
from .taco import read_taco_csv

_LAZY = ("RecordedInterface", "RecordedOptions")
__all__ = ["BENCHMARKS", "FAMILIES", "RecordedInterface", "RecordedOptions", "RecordedSpec", "SHARED_ENV",
           "available_benchmarks", "benchmark_from_file", "load_benchmark", "load_table", "read_kerneltuner_cache",
           "read_rise_csv", "read_t1_spec", "read_taco_csv", "shared_folder", "t1_constraints"]

__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(_LAZY, "interface"), __all__)
