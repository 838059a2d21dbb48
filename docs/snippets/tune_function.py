from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, FloatParameter

space = ConfigurationManipulator()
space.add_parameter(FloatParameter("x", -5.0, 5.0))
run = tune_function(space, lambda cfg: (cfg["x"] - 1.5) ** 2, test_limit=100, technique=["PureRandom"], seed=1)
print(run.summary.best_configuration, run.summary.best_value)
