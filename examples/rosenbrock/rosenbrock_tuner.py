#!/usr/bin/env python3
"""Minimise a classic continuous test function with tunerlib.

Each coordinate x0 .. x{d-1} is one FloatParameter in [-domain, domain] (IntegerParameter with
``--integer``); the objective is the function value, reported in ``Result.extra["value"]``. The
functions and their known minima live in ``functions.py`` (rosenbrock: 0 at (1, ..., 1); sphere,
rastrigin, ackley: 0 at the origin)::

    python examples/rosenbrock/rosenbrock_tuner.py --dimensions 4 --test-limit 1000

The final report prints the best point, its value and the known minimum, so the distance to the
optimum is visible at a glance. This is an analytic benchmark, not a measured program: it is the
cheapest way to watch techniques converge and to check the framework end to end.
"""
# No `from __future__ import annotations`: argparse-dataclass needs the real type hints.
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from functions import FUNCTIONS, TestFunction  # noqa: E402  (sibling module, see above)

from tunerlib import MeasurementInterface, MinimizeAttribute, Result, TuningOptions, UsageError  # noqa: E402
from tunerlib.parameters import (ConfigurationManipulator, FloatParameter,  # noqa: E402
                                 IntegerParameter)


class OptionError(UsageError):
    """A bad option value (one-line message)."""


@dataclass
class RosenbrockOptions(TuningOptions):
    """Minimise an analytic test function (rosenbrock, sphere, rastrigin or ackley) over a box."""

    dimensions: int = field(default=4, metadata={
        "metavar": "D", "help": "number of variables x0..x{D-1} (default 4)"})
    domain: float = field(default=5.0, metadata={
        "metavar": "R", "help": "every variable ranges over [-R, R] (default 5.0)"})
    function: str = field(default="rosenbrock", metadata={
        "choices": sorted(FUNCTIONS),
        "help": "function to minimise; all have minimum 0, rosenbrock at (1,...,1), the others at "
                "the origin (default rosenbrock)"})
    integer: bool = field(default=False, metadata={
        "help": "use integer variables in [-floor(R), floor(R)] instead of floats"})


class RosenbrockTuner(MeasurementInterface):
    """Measurement interface: one numeric parameter per dimension, objective = function value."""

    Options = RosenbrockOptions

    def __init__(self, options: RosenbrockOptions) -> None:
        """Validate the options (OptionError with a one-line message) and pick the function."""
        super().__init__(options)
        minimum = FUNCTIONS[options.function].min_dimensions
        if options.dimensions < minimum:
            raise OptionError(f"--dimensions {options.dimensions} is too small for {options.function}; "
                             f"use --dimensions {minimum} or more")
        if not (options.domain > 0 and math.isfinite(options.domain)):
            raise OptionError(f"--domain {options.domain} must be a positive finite number")
        if options.integer and options.domain < 1:
            raise OptionError(f"--domain {options.domain} leaves no integer range; use --domain >= 1 "
                             "with --integer")
        self.function: TestFunction = FUNCTIONS[options.function]
        self.names = [f"x{i}" for i in range(options.dimensions)]

    def program_name(self) -> str:
        """Program recorded in the results database."""
        return "rosenbrock"

    def program_version(self) -> str:
        """Function, dimensions, domain and variable kind: runs with different spaces never mix."""
        o = self.options
        kind = "-int" if o.integer else ""
        return f"{o.function}-d{o.dimensions}-domain{o.domain:g}{kind}"

    def manipulator(self) -> ConfigurationManipulator:
        """Search space: x_i in [-domain, domain] for every dimension."""
        manipulator = ConfigurationManipulator()
        bound = self.options.domain
        for name in self.names:
            if self.options.integer:
                manipulator.add_parameter(IntegerParameter(name, -math.floor(bound), math.floor(bound)))
            else:
                manipulator.add_parameter(FloatParameter(name, -bound, bound))
        return manipulator

    def objective(self) -> MinimizeAttribute:
        """Minimise ``Result.extra["value"]``."""
        return MinimizeAttribute("value")

    def point(self, config: Dict) -> List[float]:
        """The configuration as a vector (x0, x1, ...)."""
        return [float(config[name]) for name in self.names]

    def run(self, desired_result, input, limit) -> Result:
        """Called once per configuration: returns f(x) in ``extra["value"]``."""
        return Result(extra={"value": self.function(self.point(desired_result.configuration.data))})

    def save_final_config(self, config: Dict) -> None:
        """Called once at the end with the best configuration: prints x, f(x) and the known minimum."""
        x = self.point(config)
        value = self.function(x)
        optimum = self.function.optimum(len(x))
        print(f"best point for {self.options.function} in {len(x)} dimensions:")
        print("  " + ", ".join(f"{n}={v:.6g}" for n, v in zip(self.names, x)))
        print(f"value: {value:.6g} (known minimum {self.function.optimum_value:g} at "
              f"({', '.join(f'{c:g}' for c in optimum[:3])}{', ...' if len(x) > 3 else ''}))")
        if abs(self.function.optimum_coordinate) > self.options.domain:
            print("note: the known minimiser lies outside [-domain, domain]")
        super().save_final_config(config)          # --final-config PATH still writes the JSON



if __name__ == "__main__":
    sys.exit(RosenbrockTuner.main())
