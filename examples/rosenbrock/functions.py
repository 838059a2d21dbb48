"""Classic continuous test functions with known global minima (pure numpy, no tunerlib imports).

Each function takes a 1-D sequence of floats (any dimension >= 1; Rosenbrock needs >= 2, as its
sum over consecutive pairs is empty in one dimension) and returns a Python float. :data:`FUNCTIONS` maps the names accepted by
``rosenbrock_tuner.py --function`` to a :class:`TestFunction` holding the function, the location of
its global minimum for a given dimension and the minimum value.

=========== ======================================== ================ =======
name        formula                                  minimum at       value
=========== ======================================== ================ =======
rosenbrock  sum 100 (x[i+1] - x[i]^2)^2 + (1-x[i])^2  (1, ..., 1)      0
sphere      sum x[i]^2                                (0, ..., 0)      0
rastrigin   10 d + sum x[i]^2 - 10 cos(2 pi x[i])     (0, ..., 0)      0
ackley      -20 exp(-0.2 sqrt(mean x^2))              (0, ..., 0)      0
            - exp(mean cos(2 pi x)) + 20 + e
=========== ======================================== ================ =======
"""

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence

import numpy as np

__all__ = ["rosenbrock", "sphere", "rastrigin", "ackley", "TestFunction", "FUNCTIONS"]


def _vector(x: Sequence[float], min_size: int = 1) -> np.ndarray:
    v = np.asarray(x, dtype=np.float64)
    if v.ndim != 1 or v.size < min_size:
        raise ValueError(f"expected a 1-D vector of at least {min_size} values, got shape {v.shape}")
    return v


def rosenbrock(x: Sequence[float]) -> float:
    """Rosenbrock's banana valley: sum_i 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2; minimum 0 at (1,...,1)."""
    v = _vector(x, min_size=2)
    return float(np.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2))


def sphere(x: Sequence[float]) -> float:
    """Sum of squares; minimum 0 at the origin."""
    v = _vector(x)
    return float(np.dot(v, v))


def rastrigin(x: Sequence[float]) -> float:
    """Rastrigin: 10 d + sum x^2 - 10 cos(2 pi x); highly multimodal, minimum 0 at the origin."""
    v = _vector(x)
    return float(10.0 * v.size + np.sum(v ** 2 - 10.0 * np.cos(2.0 * math.pi * v)))


def ackley(x: Sequence[float]) -> float:
    """Ackley: nearly flat outer region with a deep hole; minimum 0 at the origin (up to rounding)."""
    v = _vector(x)
    term1 = -20.0 * math.exp(-0.2 * math.sqrt(float(np.mean(v ** 2))))
    term2 = -math.exp(float(np.mean(np.cos(2.0 * math.pi * v))))
    return max(0.0, term1 + term2 + 20.0 + math.e)     # clamp the -4e-16 rounding at the optimum


@dataclass(frozen=True)
class TestFunction:
    """A test function with its known global minimum."""

    __test__ = False                     # not a pytest test class despite the name

    name: str
    function: Callable[[Sequence[float]], float]
    optimum_coordinate: float            # every x[i] of the minimiser has this value
    optimum_value: float
    min_dimensions: int = 1

    def optimum(self, dimensions: int) -> List[float]:
        """The minimiser in ``dimensions`` dimensions."""
        return [self.optimum_coordinate] * dimensions

    def __call__(self, x: Sequence[float]) -> float:
        return self.function(x)


FUNCTIONS: Dict[str, TestFunction] = {
    "rosenbrock": TestFunction("rosenbrock", rosenbrock, 1.0, 0.0, min_dimensions=2),
    "sphere": TestFunction("sphere", sphere, 0.0, 0.0),
    "rastrigin": TestFunction("rastrigin", rastrigin, 0.0, 0.0),
    "ackley": TestFunction("ackley", ackley, 0.0, 0.0),
}
