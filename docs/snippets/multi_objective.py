from tunerlib import MaximizeAttribute, MinimizeTime, MultiObjective, Result, TuningRunManager
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter, PowerOfTwoParameter

space = ConfigurationManipulator([PowerOfTwoParameter("block", 1, 256), IntegerParameter("unroll", 1, 8)])


def measure(cfg):                            # a model standing in for a kernel: fast blocks cost accuracy
    seconds = 1.0 / cfg["block"] + 0.01 * cfg["unroll"]
    accuracy = 1.0 - 0.002 * cfg["block"] / cfg["unroll"]
    return Result(time=seconds, accuracy=accuracy)


objectives = MultiObjective([MinimizeTime(), MaximizeAttribute("accuracy")])
manager = TuningRunManager.for_space(space, objective=objectives, database="runs.db", seed=1,
                                     test_limit=60, technique=["NSGA2"])
while (desired := manager.get_next_desired_result()) is not None:
    manager.report_result(desired, measure(desired.configuration.data))
summary = manager.finish()
for point in summary.pareto_front:           # [{"configuration": {...}, "objectives": {...}}, ...]
    print(point["objectives"], point["configuration"])
