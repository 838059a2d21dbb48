"""Tune a compiled C program: gcc's flags and the tile sizes of a matrix multiplication (matmul.c).

Each configuration is built with gcc into its own folder (compile()), then run with the run's time
limit (run_precompiled()); the command's wall time is the result once the checksum it prints
matches the exact product.

    python examples/tutorial/matmul_tuner.py --size 300 --test-limit 40 --seed 1
"""
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import numpy as np

from tunerlib import MeasurementInterface, Result, TuningOptions, UsageError
from tunerlib.parameters import BooleanParameter, ConfigurationManipulator, EnumParameter, PowerOfTwoParameter

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = ["-funroll-loops", "-fno-tree-vectorize", "-march=native"]


@dataclass
class MatmulOptions(TuningOptions):
    """Tune gcc's flags and the tile sizes of a tiled matrix multiplication (examples/tutorial/matmul.c)."""

    size: int = field(default=300, metadata={"help": "the matrices are SIZE x SIZE"})
    cc: str = field(default="gcc", metadata={"help": "the C compiler"})
    source: str = field(default=os.path.join(HERE, "matmul.c"), metadata={"help": "the C program"})


def expected_checksum(n: int) -> float:
    """The sum of every entry of A * B for matmul.c's matrices (exact: they hold small integers)."""
    i, j = np.indices((n, n))
    a, b = (i * 7 + j * 3) % 10, (i * 5 + j * 11) % 10
    return float(a.sum(axis=0) @ b.sum(axis=1))


class MatmulTuner(MeasurementInterface):
    """Tune gcc's flags and the tile sizes of a tiled matrix multiplication."""

    Options = MatmulOptions

    def __init__(self, options: Optional[MatmulOptions] = None) -> None:
        super().__init__(options)
        if self.options.size < 1:
            raise UsageError(f"--size {self.options.size}: expected a matrix size >= 1")
        if shutil.which(self.options.cc) is None:
            raise UsageError(f"--cc {self.options.cc}: no such compiler on PATH; install gcc or pass --cc")
        self.work = tempfile.mkdtemp(prefix="matmul-")
        self.checksum = expected_checksum(self.options.size)

    def manipulator(self) -> ConfigurationManipulator:
        m = ConfigurationManipulator()
        m.add_parameter(EnumParameter("opt", ["-O0", "-O1", "-O2", "-O3"]))
        for flag in FLAGS:
            m.add_parameter(BooleanParameter(flag))
        for axis in "ijk":
            m.add_parameter(PowerOfTwoParameter(f"tile_{axis}", 1, 256))
        return m

    def seed_configurations(self):
        """Measure the obvious build first: -O2 and 32 x 32 x 32 tiles."""
        return [{"opt": "-O2", **{f: False for f in FLAGS}, "tile_i": 32, "tile_j": 32, "tile_k": 32}]

    def compile(self, config_data: Dict[str, Any], id: Optional[int]) -> Any:
        """Build this configuration; returns the executable's path, or the failed build's Result."""
        exe = os.path.join(self.work, f"matmul-{id}")
        flags = [config_data["opt"]] + [f for f in FLAGS if config_data[f]]
        tiles = [f"-DTILE_{axis.upper()}={config_data['tile_' + axis]}" for axis in "ijk"]
        build = self.call_program([self.options.cc, *flags, *tiles, self.options.source, "-o", exe])
        if build.returncode != 0:
            return Result(state="ERROR", extra={"stderr": build.stderr[-2000:]})
        return exe

    def run_precompiled(self, desired_result, input, limit, compile_result, id) -> Result:
        """Run the build with the run's time limit; the command's wall time is the result (the
        limit bounds that same time, so a build slower than limit seconds is stopped: TIMEOUT)."""
        if isinstance(compile_result, Result):
            return compile_result
        out = self.call_program([compile_result, str(self.options.size)], limit=limit)
        size = os.path.getsize(compile_result)   # the executable's bytes: --objectives time,size
        os.remove(compile_result)
        if out.timeout:
            return Result(state="TIMEOUT")
        if out.returncode != 0:
            return Result(state="ERROR", extra={"stderr": out.stderr[-2000:]})
        printed = dict(line.split() for line in out.stdout.splitlines())
        if float(printed["checksum"]) != self.checksum:
            return Result(state="ERROR", extra={"error": f"wrong checksum {printed['checksum']}"})
        return Result(time=out.time, size=size)

    def save_final_config(self, config: Dict[str, Any]) -> None:
        """Print the best build as a gcc command line, then write --final-config if given."""
        flags = [config["opt"]] + [f for f in FLAGS if config[f]]
        tiles = [f"-DTILE_{axis.upper()}={config['tile_' + axis]}" for axis in "ijk"]
        print("best build:", " ".join([self.options.cc, *flags, *tiles, "matmul.c"]))
        shutil.rmtree(self.work, ignore_errors=True)
        super().save_final_config(config)

    def finish_without_best(self) -> None:
        """No build succeeded: remove the build folder all the same."""
        shutil.rmtree(self.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(MatmulTuner.main())
