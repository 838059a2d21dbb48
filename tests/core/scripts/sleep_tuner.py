"""A tuner script with a time objective whose measurements are real commands (call_program):
``fast`` sleeps briefly, ``slow`` runs `sleep 100` under the limit it is given, ``stuck`` ignores the
limit and sleeps 100 s in Python (only --measurement-timeout stops it)."""
import sys
import time
from dataclasses import dataclass, field

from tunerlib import MeasurementInterface, Result, TuningOptions
from tunerlib.parameters import ConfigurationManipulator, EnumParameter


@dataclass
class SleepOptions(TuningOptions):
    fast: float = field(default=0.05, metadata={"help": "seconds the fast configuration sleeps"})


class SleepTuner(MeasurementInterface):
    Options = SleepOptions

    def program_name(self):
        return "sleeper"

    def manipulator(self):
        return ConfigurationManipulator([EnumParameter("kind", ["fast", "slow", "stuck"])])

    def seed_configurations(self):
        return [{"kind": "fast"}, {"kind": "slow"}, {"kind": "stuck"}]

    def run(self, desired_result, input, limit):
        kind = desired_result.configuration.data["kind"]
        if kind == "stuck":
            time.sleep(100)
            return Result(time=100.0)
        seconds = self.options.fast if kind == "fast" else 100
        out = self.call_program(["sleep", str(seconds)], limit=limit)
        if out.timeout:
            return Result(state="TIMEOUT", extra={"limit": limit})
        return Result(time=out.time, extra={"limit": limit})


if __name__ == "__main__":
    sys.exit(SleepTuner.main())
