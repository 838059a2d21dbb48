"""The four spaces of the technique conformance kit: permutation, numeric, mixed and constrained
(each a factory returning (manipulator, cost function))."""
import math
import random

from tunerlib.parameters import (BooleanArray, BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 FloatArray, FloatParameter, IntegerArray, IntegerParameter,
                                 LogFloatParameter, OrdinalParameter, PermutationParameter,
                                 PowerOfTwoParameter, ScheduleParameter, SwitchParameter)
_rng = random.Random(5)
_POINTS = [(_rng.random(), _rng.random()) for _ in range(10)]


def tour_length(cfg):
    t = cfg["tour"]
    return sum(math.dist(_POINTS[t[i]], _POINTS[t[(i + 1) % len(t)]]) for i in range(len(t)))


def permutation_space():
    return ConfigurationManipulator([PermutationParameter("tour", list(range(10)))]), tour_length


def numeric_space():
    params = [FloatParameter(f"f{i}", -4.0, 4.0) for i in range(3)] + \
             [IntegerParameter(f"i{i}", -50, 50) for i in range(2)]

    def sphere(cfg):
        return sum((cfg[p.name] - 1) ** 2 for p in params)
    return ConfigurationManipulator(params), sphere


def mixed_space():
    m = ConfigurationManipulator([
        IntegerParameter("i", 0, 100), FloatParameter("f", -1.0, 1.0), LogFloatParameter("lf", 1e-4, 1.0),
        PowerOfTwoParameter("p2", 1, 1024), EnumParameter("e", ["a", "b", "c"]), BooleanParameter("b"),
        OrdinalParameter("o", [1, 2, 4, 8, 16], log=True), SwitchParameter("s", 4),
        PermutationParameter("perm", list(range(5))), ScheduleParameter("sch", ["x", "y", "z", "w"], {"w": ["x"]}),
        IntegerArray("ia", 3, 0, 9), BooleanArray("ba", 3), FloatArray("fa", 2, 0.0, 1.0)])

    def cost(cfg):
        inv = sum(1 for a in range(5) for b in range(a + 1, 5) if cfg["perm"][a] > cfg["perm"][b])
        return ((cfg["i"] - 37) ** 2 / 100 + cfg["f"] ** 2 + abs(math.log10(cfg["lf"]) + 2) +
                abs(math.log2(cfg["p2"]) - 5) + (cfg["e"] != "b") + cfg["b"] + abs(cfg["o"] - 4) / 4 +
                cfg["s"] + inv + sum(cfg["ia"]) / 9 + sum(cfg["ba"]) + sum(cfg["fa"]) +
                cfg["sch"].index("z"))
    return m, cost


def constrained_space():
    m = ConfigurationManipulator([IntegerParameter("a", 1, 64), IntegerParameter("b", 1, 64),
                                  PowerOfTwoParameter("ls", 1, 64), PowerOfTwoParameter("gs", 1, 256),
                                  EnumParameter("mode", ["x", "y"])])
    m.add_constraint("a < b")
    m.add_constraint("gs % ls == 0 and ls * a <= 256")
    m.add_constraint(lambda c: c["mode"] == "x" or c["b"] > 8, reads=["mode", "b"], name="mode-y-needs-b")

    def cost(cfg):
        assert cfg["a"] < cfg["b"] and cfg["gs"] % cfg["ls"] == 0, "infeasible configuration measured"
        return abs(cfg["a"] - 20) + abs(cfg["b"] - 21) + abs(math.log2(cfg["ls"]) - 3) + (cfg["mode"] == "y")
    return m, cost


SPACES = {"permutation": permutation_space, "numeric": numeric_space, "mixed": mixed_space,
          "constrained": constrained_space}
