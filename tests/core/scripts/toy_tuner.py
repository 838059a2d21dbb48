"""A small real tuner script used by the end-to-end tests (run as a subprocess or in-process)."""
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from tunerlib import MeasurementInterface, MinimizeAttribute, Result, TuningOptions
from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, PermutationParameter)


@dataclass
class ToyOptions(TuningOptions):
    sleep: float = field(default=0.0, metadata={"help": "seconds each measurement sleeps"})
    mode: str = field(default="ok", metadata={"help": "ok | raise | bad-return | no-metric",
                                              "choices": ["ok", "raise", "bad-return", "no-metric"]})
    marker: Optional[str] = field(default=None, metadata={"help": "append a line per measurement here"})


class ToyTuner(MeasurementInterface):
    Options = ToyOptions

    def program_name(self):
        return "toy"

    def manipulator(self):
        m = ConfigurationManipulator()
        m.add_parameter(IntegerParameter("x", -20, 20))
        m.add_parameter(FloatParameter("y", -5.0, 5.0))
        m.add_parameter(EnumParameter("mode", ["a", "b", "c"]))
        m.add_parameter(PermutationParameter("order", ["i", "j", "k", "l"]))
        m.add_constraint("x + y < 18")
        return m

    def objective(self):
        return MinimizeAttribute("cost")

    def run(self, desired_result, input, limit):
        cfg = desired_result.configuration.data
        if self.options.sleep:
            time.sleep(self.options.sleep)
        if self.options.marker:
            with open(self.options.marker, "a") as fh:
                fh.write(f"{os.getpid()}\n")
        if self.options.mode == "raise" and cfg["mode"] == "b":
            raise RuntimeError("simulated crash in run()")
        if self.options.mode == "bad-return":
            return 42.0
        if self.options.mode == "no-metric":
            return Result()
        penalty = {"a": 0.0, "b": 1.0, "c": 2.5}[cfg["mode"]]
        inversions = sum(1 for a in range(4) for b in range(a + 1, 4) if cfg["order"][a] > cfg["order"][b])
        cost = (cfg["x"] - 3) ** 2 + (cfg["y"] - 1.5) ** 2 + penalty + inversions + math.sin(cfg["y"])
        return Result(extra={"cost": cost})


if __name__ == "__main__":
    sys.exit(ToyTuner.main())
