"""Drive a tour technique directly (bind / propose / observe, no database), as the search driver
does: one permutation parameter ``t`` of ``n`` items, each proposal measured by ``cost``."""
import random
from typing import Callable, List, Tuple

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.techniques.base import Feedback, Technique


def drive_tour(tech: Technique, n: int, cost: Callable[[np.ndarray], float], evals: int,
               seed: int) -> Tuple[List[float], Technique]:
    """The values of ``evals`` suggestions of ``tech`` (bound here with ``seed``), and ``tech``."""
    space = ConfigurationManipulator([PermutationParameter("t", list(range(n)))])
    tech.bind(space, random.Random(seed), tech.name)
    values: List[float] = []
    for _ in range(evals):
        prop = tech.propose()
        value = cost(np.asarray(prop.config["t"]))
        values.append(value)
        tech.observe(Feedback(prop.config, space.hash_config(prop.config), value, "ok", prop.requestor,
                              value < min(values[:-1], default=np.inf)))
    return values, tech
