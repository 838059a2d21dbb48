from tunerlib import tune_function
from tunerlib.parameters import (Beta, BooleanParameter, ConfigurationManipulator, EnumParameter, Near,
                                 OrdinalParameter, PowerOfTwoParameter, Probabilities)

space = ConfigurationManipulator()
space.add_parameter(PowerOfTwoParameter("block", 1, 1024))          # work-group size
space.add_parameter(OrdinalParameter("unroll", [1, 2, 4, 8, 16]))
space.add_parameter(EnumParameter("layout", ["row", "col", "tiled"]))
space.add_parameter(BooleanParameter("vectorize"))
space.add_constraint("block * unroll <= 4096")

# what the engineer believes (each line is optional)
space.set_prior("block", Beta(4, 2))                        # leans to the top of its log range
space.set_prior("layout", Probabilities({"tiled": 0.6}))    # row and col share the other 0.4
space.set_prior("vectorize", Near(True, 0.8))               # True 80 % of the time (+ half of the rest)
space.set_prior_near({"unroll": 4}, confidence=0.5)         # or: near a whole (partial) configuration


def cost(cfg):
    return abs(cfg["block"] - 256) / 256 + abs(cfg["unroll"] - 4) + (cfg["layout"] != "tiled") + (not cfg["vectorize"])


run = tune_function(space, cost, test_limit=30, seed=1)
print("prior:", space.prior.to_json())
print("best:", run.summary.best_configuration)
