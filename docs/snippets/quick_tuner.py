import os
import tempfile
from dataclasses import dataclass, field

from tunerlib import MeasurementInterface, Result, TuningOptions
from tunerlib.parameters import BooleanParameter, ConfigurationManipulator, EnumParameter, PowerOfTwoParameter


@dataclass
class Options(TuningOptions):
    """Tune gcc's flags and the tile size of a C matrix multiplication."""

    source: str = field(default="examples/tutorial/matmul.c", metadata={"help": "the C program"})


class GccTuner(MeasurementInterface):
    Options = Options

    def manipulator(self):
        m = ConfigurationManipulator()
        m.add_parameter(EnumParameter("opt", ["-O1", "-O2", "-O3"]))
        m.add_parameter(BooleanParameter("unroll"))
        m.add_parameter(PowerOfTwoParameter("tile", 4, 128))
        return m

    def run(self, desired_result, input, limit):
        cfg = desired_result.configuration.data
        with tempfile.TemporaryDirectory() as tmp:
            exe = os.path.join(tmp, "matmul")
            flags = [cfg["opt"], f"-DTILE_I={cfg['tile']}"] + ["-funroll-loops"] * cfg["unroll"]
            if self.call_program(["gcc", *flags, self.options.source, "-o", exe]).returncode != 0:
                return Result(state="ERROR")
            out = self.call_program([exe, "200"], limit=limit)    # killed after `limit` seconds
        if out.timeout:
            return Result(state="TIMEOUT")
        return Result(time=out.time) if out.returncode == 0 else Result(state="ERROR")


if __name__ == "__main__":
    raise SystemExit(GccTuner.main())
