from dataclasses import dataclass, field

from tunerlib import MeasurementInterface, Result, TuningOptions
from tunerlib.parameters import ConfigurationManipulator, PowerOfTwoParameter


@dataclass
class BlockOptions(TuningOptions):
    """Tune the block size of a kernel.

    The description is the docstring of the options class: say what the script tunes.
    """

    size: int = field(default=100, metadata={"help": "problem size"})
    kernel: str = field(default="blocked", metadata={"help": "which kernel to time",
                                                     "choices": ["blocked", "naive"]})


class BlockTuner(MeasurementInterface):
    Options = BlockOptions

    def manipulator(self):
        m = ConfigurationManipulator()
        m.add_parameter(PowerOfTwoParameter("block", 1, 1024))
        return m

    def run(self, desired_result, input, limit):
        block = desired_result.configuration.data["block"]
        return Result(time=abs(block - self.options.size) / 1000)


if __name__ == "__main__":
    raise SystemExit(BlockTuner.main())
