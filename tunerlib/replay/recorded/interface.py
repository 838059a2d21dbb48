""":class:`RecordedInterface`: :class:`tunerlib.replay.ReplayInterface` over the recorded benchmarks
of the shared data folder (``--benchmark NAME``) or a table file of any of their formats
(``--data FILE``).  ``python -m tunerlib.replay.recorded`` runs it::

    python -m tunerlib.replay.recorded --benchmark rise_kmeans --shared-dir ../shared --test-limit 60 --seed 1
    python -m tunerlib.replay.recorded --data ../shared/data/gpu_cache/rise_baco/kmeans_rtxtitan.csv.gz
    python -m tunerlib.replay.recorded --benchmark rise_kmeans --data OTHER_GPU.csv.gz

No ``from __future__ import annotations`` here: argparse-dataclass reads the real type hints.
"""
from dataclasses import dataclass, field
from typing import Optional

from tunerlib import TuningOptions, UsageError
from tunerlib.replay import ReplayBenchmark, ReplayInterface, ReplayOptions

from .catalogue import BENCHMARKS
from .files import benchmark_from_file
from .tables import load_benchmark

__all__ = ["RecordedInterface", "RecordedOptions"]


@dataclass
class RecordedOptions(ReplayOptions):
    """Options of a replay tuning run over a recorded benchmark (recorded measurements instead of
    real ones)."""

    benchmark: Optional[str] = field(default=None, metadata={
        "help": f"recorded benchmark to replay: {', '.join(BENCHMARKS)}; with --data, the benchmark "
                "whose space the file's table is replayed in"})
    data: Optional[str] = field(default=None, metadata={
        "help": "recorded table file to replay (Kernel Tuner cache .json[.gz], RISE or TACO .csv[.gz], "
                "from any machine and under any name); its kernel's space and constraints are found "
                "from its columns, or name them with --benchmark"})
    shared_dir: Optional[str] = field(default=None, metadata={
        "help": "shared data folder holding data/gpu_cache and data/taco_cache "
                "(default: $TUNERLIB_SHARED_DIR)"})


class RecordedInterface(ReplayInterface):
    """Replays a recorded benchmark of :data:`~tunerlib.replay.recorded.BENCHMARKS` or a table file
    in its kernel's space (see :class:`tunerlib.replay.ReplayInterface` for the outcomes)."""

    Options = RecordedOptions

    @classmethod
    def load_benchmark(cls, options: TuningOptions) -> ReplayBenchmark:
        """Called once by the constructor: ``--data`` in the space of ``--benchmark`` (found from the
        file when not given), else the table of ``--benchmark`` under ``--shared-dir``.  Raises
        :class:`~tunerlib.UsageError` (one line) when it is unknown, missing or does not fit."""
        data = getattr(options, "data", None)
        name = getattr(options, "benchmark", None)
        try:
            if data:
                return benchmark_from_file(data, name)
            if name:
                return load_benchmark(name, getattr(options, "shared_dir", None))
        except (KeyError, FileNotFoundError, ValueError) as exc:
            raise UsageError(str(exc.args[0]) if exc.args else str(exc)) from None
        raise UsageError(f"{cls.__name__} needs a table: pass --benchmark NAME "
                         f"(one of {', '.join(BENCHMARKS)}) or --data FILE")
