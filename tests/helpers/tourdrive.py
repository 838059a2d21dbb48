"""Drive a tour technique directly (bind / propose / observe, no database), as the search driver
does: one permutation parameter ``t`` of ``n`` items, each proposal measured by ``cost``; and drive
MetricStructuralSurrogate's model through its identification on random tours."""
import random
from typing import Callable, List, Optional, Tuple

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques.base import Feedback, Technique
from tunerlib.techniques.structural import identification


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


def tour_cost(W: np.ndarray) -> Callable[[np.ndarray], float]:
    """The length of a tour (an array of items) under the step costs ``W``."""
    return lambda t: float(W[t, np.roll(t, -1)].sum())


def identified(W: np.ndarray, seed: int = 0) -> Tuple[identification.MetricBayesLinear, Optional[int]]:
    """A MetricBayesLinear given uniformly random tours of ``W``'s items, identified at each checkpoint
    until its status leaves "identifying"; returns it and the random tours it took (None when it never
    left)."""
    n = W.shape[0]
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    model = identification.MetricBayesLinear(layout.size, layout.groups, seed=seed)
    rng, f = np.random.default_rng(seed + 1), tour_cost(W)
    for k in range(1, int(identification.CHECKPOINTS[-1] * n) + 1):
        t = rng.permutation(n)
        model.add(layout.encode({"t": list(t)}), f(t))
        model.mark_random()
        if model.checkpoint(k) and model.identify() != "identifying":
            return model, k
    return model, None
