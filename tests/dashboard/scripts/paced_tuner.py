"""A tuner script for the dashboard's tests: a time objective (in seconds) over an enum whose options
and an error text that are HTML (``<script>``...), an integer and a float. Each measurement sleeps
--sleep seconds and then waits while the file --pause exists, so a test can hold the run between two
results and let it go on; the `<img>` option always fails with an error whose text is HTML too."""
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from tunerlib import MeasurementInterface, Result, TuningOptions
from tunerlib.parameters import ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter

SCRIPT_OPTION = "<script>window.__xss = 1</script>"
FAILING_OPTION = "<img src=x onerror=window.__xss=2>"
ERROR_TEXT = "kernel rejected: <img src=x onerror=window.__xss=3> & <b>bold</b>"


@dataclass
class PacedOptions(TuningOptions):
    sleep: float = field(default=0.05, metadata={"help": "seconds each measurement sleeps"})
    pause: Optional[str] = field(default=None, metadata={"help": "measurements wait while this file exists"})


class PacedTuner(MeasurementInterface):
    Options = PacedOptions

    def program_name(self):
        return "paced"

    def manipulator(self):
        return ConfigurationManipulator([EnumParameter("kernel", ["plain", SCRIPT_OPTION, FAILING_OPTION]),
                                         IntegerParameter("block", 1, 64), FloatParameter("ratio", 0.0, 1.0)])

    def run(self, desired_result, input, limit):
        cfg = desired_result.configuration.data
        time.sleep(self.options.sleep)
        end = time.monotonic() + 600
        while self.options.pause and os.path.exists(self.options.pause) and time.monotonic() < end:
            time.sleep(0.02)
        if cfg["kernel"] == FAILING_OPTION:
            raise RuntimeError(ERROR_TEXT)
        penalty = 0.5 if cfg["kernel"] == SCRIPT_OPTION else 0.0
        return Result(time=1.0 + penalty + abs(cfg["block"] - 24) / 8.0 + (cfg["ratio"] - 0.3) ** 2)


if __name__ == "__main__":
    sys.exit(PacedTuner.main())
