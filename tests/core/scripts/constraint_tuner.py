"""A tuner script whose known constraint comes from the command line (``--constraint TEXT``), for the
tests of constraints that cannot be evaluated; ``--fail-after N`` adds a callable constraint that
raises TypeError for odd ``a`` once it has been called N times (64: the start-up check; a constraint
that breaks mid-run)."""
import sys
from dataclasses import dataclass, field
from typing import Optional

from tunerlib import MeasurementInterface, Result, TuningOptions
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter


@dataclass
class ConstraintOptions(TuningOptions):
    constraint: Optional[str] = field(default=None, metadata={"help": "a known constraint (expression)"})
    fail_after: Optional[int] = field(default=None, metadata={
        "help": "add a callable constraint that raises TypeError for odd a after this many calls"})


class ConstraintTuner(MeasurementInterface):
    Options = ConstraintOptions

    def program_name(self):
        return "constraint-tuner"

    def manipulator(self):
        m = ConfigurationManipulator()
        m.add_parameter(IntegerParameter("a", 0, 40))
        m.add_parameter(IntegerParameter("b", 0, 40))
        if self.options.constraint:
            m.add_constraint(self.options.constraint)
        if self.options.fail_after is not None:
            calls = [0]

            def breaks_later(cfg):
                calls[0] += 1
                if calls[0] > self.options.fail_after and cfg["a"] % 2:
                    return cfg["a"] < "x"      # TypeError
                return cfg["a"] + cfg["b"] < 70
            m.add_constraint(breaks_later, reads=["a", "b"])
        return m

    def run(self, desired_result, input, limit):
        cfg = desired_result.configuration.data
        return Result(time=1.0 + (cfg["a"] - 3) ** 2 + cfg["b"])


if __name__ == "__main__":
    sys.exit(ConstraintTuner.main())
