from tunerlib import MinimizeAttribute, Result, TuningRunManager
from tunerlib.parameters import ConfigurationManipulator, FloatParameter, IntegerParameter

space = ConfigurationManipulator()
space.add_parameter(FloatParameter("x", -5.0, 5.0))
space.add_parameter(IntegerParameter("n", 1, 10))


def f(cfg):                                  # the function to minimise
    return (cfg["x"] - 1.5) ** 2 + abs(cfg["n"] - 3)


manager = TuningRunManager.for_space(space, objective=MinimizeAttribute("loss"), database="runs.db",
                                     seed=1, test_limit=50)
while (desired := manager.get_next_desired_result()) is not None:
    manager.report_result(desired, Result(extra={"loss": f(desired.configuration.data)}))
print(manager.get_best_configuration())
manager.finish()
