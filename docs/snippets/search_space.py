from tunerlib import tune_function
from tunerlib.parameters import (BooleanParameter, ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, LogFloatParameter, OrdinalParameter, PermutationParameter,
                                 PowerOfTwoParameter, TableConstraint)

space = ConfigurationManipulator()
space.add_parameter(PowerOfTwoParameter("tile_x", 1, 256))       # 1, 2, 4, ... 256
space.add_parameter(PowerOfTwoParameter("tile_y", 1, 256))
space.add_parameter(IntegerParameter("unroll", 1, 8))
space.add_parameter(LogFloatParameter("learning_rate", 1e-5, 1e-1))  # searched on its log scale
space.add_parameter(FloatParameter("alpha", 0.0, 1.0))
space.add_parameter(EnumParameter("schedule", ["static", "dynamic", "guided"]))
space.add_parameter(OrdinalParameter("threads", [1, 2, 4, 8, 16]))  # ordered choices
space.add_parameter(BooleanParameter("vectorize"))
space.add_parameter(PermutationParameter("order", ["i", "j", "k"]))  # a loop order

# known constraints: expression strings (parsed safely, never eval'ed) or callables that name their reads
space.add_constraint("tile_x * tile_y <= 1024")
space.add_constraint("index(order, 'k') != 0 or not vectorize")
space.add_constraint(lambda cfg: cfg["unroll"] <= cfg["tile_x"], reads=["tile_x", "unroll"], name="unroll fits")
# a table of the combinations that exist (here: which thread counts each schedule supports)
space.add_constraint(TableConstraint(["schedule", "threads"], [("static", t) for t in (1, 2, 4, 8, 16)]
                                     + [("dynamic", 4), ("dynamic", 8), ("guided", 16)]))


def cost(cfg):
    return abs(cfg["tile_x"] * cfg["tile_y"] - 512) + cfg["alpha"] + (cfg["schedule"] != "static")


run = tune_function(space, cost, test_limit=60, seed=1)
print(run.summary.best_value, run.summary.best_configuration)
