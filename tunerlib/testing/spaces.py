"""The conformance kit's search spaces: one of every kind a technique must handle, each with a cost
function (read by :func:`tunerlib.testing.check_technique` and by a user's own technique tests)."""
from __future__ import annotations

import math
import random
from typing import Any, Callable, Dict, Tuple

from tunerlib.parameters import (BooleanArray, BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 FloatArray, FloatParameter, IntegerArray, IntegerParameter,
                                 LogFloatParameter, LogIntegerParameter, OrdinalParameter,
                                 PermutationParameter, PowerOfTwoParameter, ScheduleParameter,
                                 SelectorParameter, SwitchParameter)

__all__ = ["Cost", "SPACES", "Space", "constrained_space", "mixed_space", "numeric_space", "permutation_space"]

Cost = Callable[[Dict[str, Any]], float]
Space = Tuple[ConfigurationManipulator, Cost]

_POINTS = [(random.Random(5 + i).random(), random.Random(50 + i).random()) for i in range(10)]


def permutation_space() -> Space:
    """A 10-city tour."""
    def length(cfg):
        t = cfg["tour"]
        return sum(math.dist(_POINTS[t[i]], _POINTS[t[(i + 1) % len(t)]]) for i in range(len(t)))
    return ConfigurationManipulator([PermutationParameter("tour", list(range(10)))]), length


def numeric_space() -> Space:
    """A shifted sphere over three floats and two integers."""
    params = [FloatParameter(f"f{i}", -4.0, 4.0) for i in range(3)] + \
             [IntegerParameter(f"i{i}", -50, 50) for i in range(2)]
    return ConfigurationManipulator(params), lambda cfg: sum((cfg[p.name] - 1) ** 2 for p in params)


def mixed_space() -> Space:
    """One parameter of every built-in kind."""
    m = ConfigurationManipulator([
        IntegerParameter("i", 0, 100), FloatParameter("f", -1.0, 1.0), LogFloatParameter("lf", 1e-4, 1.0),
        LogIntegerParameter("li", 1, 1000), PowerOfTwoParameter("p2", 1, 1024),
        EnumParameter("e", ["a", "b", "c"]), BooleanParameter("b"), OrdinalParameter("o", [1, 2, 4, 8, 16], log=True),
        SwitchParameter("s", 4), PermutationParameter("perm", list(range(5))),
        ScheduleParameter("sch", ["x", "y", "z", "w"], {"w": ["x"]}), SelectorParameter("sel", ["p", "q", "r"], 100),
        IntegerArray("ia", 3, 0, 9), BooleanArray("ba", 3), FloatArray("fa", 2, 0.0, 1.0)])

    def cost(cfg):
        inv = sum(1 for a in range(5) for b in range(a + 1, 5) if cfg["perm"][a] > cfg["perm"][b])
        return ((cfg["i"] - 37) ** 2 / 100 + cfg["f"] ** 2 + abs(math.log10(cfg["lf"]) + 2) +
                abs(math.log10(cfg["li"]) - 1) + abs(math.log2(cfg["p2"]) - 5) + (cfg["e"] != "b") + cfg["b"] +
                abs(cfg["o"] - 4) / 4 + cfg["s"] + inv + sum(cfg["ia"]) / 9 + sum(cfg["ba"]) + sum(cfg["fa"]) +
                cfg["sch"].index("z") + (cfg["sel"]["order"][0] != "q"))
    return m, cost


def constrained_space() -> Space:
    """Integer and power-of-two parameters under expression and Python constraints."""
    m = ConfigurationManipulator([IntegerParameter("a", 1, 32), IntegerParameter("b", 1, 32),
                                  PowerOfTwoParameter("ls", 1, 32), PowerOfTwoParameter("gs", 1, 128),
                                  EnumParameter("mode", ["x", "y"])])
    m.add_constraint("a < b")
    m.add_constraint("gs % ls == 0 and ls * a <= 128")
    m.add_constraint(lambda c: c["mode"] == "x" or c["b"] > 8, reads=["mode", "b"], name="mode-y-needs-b")

    def cost(cfg):
        return abs(cfg["a"] - 20) + abs(cfg["b"] - 21) + abs(math.log2(cfg["ls"]) - 3) + (cfg["mode"] == "y")
    return m, cost


#: the kit's spaces: name -> factory of (manipulator, cost function)
SPACES: Dict[str, Callable[[], Space]] = {"permutation": permutation_space, "numeric": numeric_space,
                                          "mixed": mixed_space, "constrained": constrained_space}
