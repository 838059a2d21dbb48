#!/usr/bin/env python3
"""Tune a travelling-salesman tour with tunerlib.

The search space is one permutation parameter ``tour`` (every node of the instance, 0-based); the
objective is the length of the closed tour, computed exactly with TSPLIB's distance rules. The
instance is either a TSPLIB file (``--instance PATH``, .tsp or .atsp) or a built-in random EUC_2D
instance (``--random N``, the default, so the quick start needs no data)::

    python examples/tsp/tsp_tuner.py --random 40 --test-limit 2000
    python examples/tsp/tsp_tuner.py --instance ../shared/data/tsplib/berlin52.tsp --test-limit 5000

At the end the best tour is printed with 1-based TSPLIB node ids, its length, and the gap to the
optimum when it is known (``--optimum``, or a ``bestSolutions*.txt`` list next to the instance).
"""
# No `from __future__ import annotations`: argparse-dataclass needs the real type hints.
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tsplib  # noqa: E402  (sibling module, see above)

from tunerlib import MeasurementInterface, MinimizeAttribute, Result, TuningOptions, UsageError  # noqa: E402
from tunerlib.parameters import ConfigurationManipulator, PermutationParameter  # noqa: E402


class OptionError(UsageError):
    """A bad TSP option value (one-line message)."""


@dataclass
class TSPOptions(TuningOptions):
    """Search for a short closed tour through every node of a TSP/ATSP instance."""

    instance: Optional[str] = field(default=None, metadata={
        "metavar": "PATH",
        "help": "TSPLIB instance file (.tsp or .atsp; EUC_2D, CEIL_2D, ATT, GEO, MAN/MAX and EXPLICIT "
                "weights); when omitted a random instance of --random nodes is used"})
    random: int = field(default=40, metadata={
        "metavar": "N",
        "help": "number of nodes of the built-in random instance (points uniform in a 1000x1000 "
                "square, EUC_2D distances), used when --instance is not given (default 40)"})
    instance_seed: int = field(default=0, metadata={
        "help": "seed of the random instance (the same seed gives the same points; default 0); "
                "independent of --seed, which drives the search"})
    optimum: Optional[float] = field(default=None, metadata={
        "help": "known optimal tour length, used to print the gap of the best tour; default: looked "
                "up in a bestSolutions*.txt list next to the --instance file"})


def load_instance(options: TSPOptions) -> tsplib.Instance:
    """The instance named by the options: the --instance file, else a --random instance."""
    if options.instance:
        return tsplib.read_instance(options.instance)
    if options.random < 2:
        raise OptionError(f"--random {options.random} is too small; use at least 2 nodes")
    return tsplib.random_instance(options.random, options.instance_seed)


def known_optimum(options: TSPOptions, instance: tsplib.Instance) -> Optional[float]:
    """--optimum when given, else the published optimum listed next to the instance file, else None."""
    if options.optimum is not None:
        if options.optimum <= 0:
            raise OptionError(f"--optimum {options.optimum} must be positive (a tour length)")
        return float(options.optimum)
    if options.instance:
        return tsplib.lookup_optimum(options.instance, instance.name)
    return None


def format_gap(length: float, optimum: Optional[float]) -> str:
    """'gap to optimum: +3.2%' (or an empty string when the optimum is unknown)."""
    if not optimum:
        return ""
    return f"gap to optimum: {100.0 * (length - optimum) / optimum:+.1f}% (optimum {optimum:g})"


def tsplib_tour(tour: List[int]) -> List[int]:
    """A 0-based tour rotated to start at node 0 and written with 1-based TSPLIB node ids."""
    start = tour.index(0) if 0 in tour else 0
    return [node + 1 for node in tour[start:] + tour[:start]]


class TSPTuner(MeasurementInterface):
    """Measurement interface: one permutation parameter, objective = closed tour length."""

    Options = TSPOptions

    def __init__(self, options: TSPOptions) -> None:
        """Load the instance (raises TSPLIBError / OptionError with a one-line message)."""
        super().__init__(options)
        try:
            self.instance = load_instance(options)
        except tsplib.TSPLIBError as exc:
            raise OptionError(str(exc)) from None
        self.optimum = known_optimum(options, self.instance)

    def program_name(self) -> str:
        """Program recorded in the results database."""
        return "tsp"

    def program_version(self) -> str:
        """The instance name, so runs on different instances never mix (and --resume finds its run)."""
        return self.instance.name

    def manipulator(self) -> ConfigurationManipulator:
        """Search space: the visiting order of all nodes (0-based)."""
        manipulator = ConfigurationManipulator()
        manipulator.add_parameter(PermutationParameter("tour", list(range(self.instance.dimension))))
        return manipulator

    def objective(self) -> MinimizeAttribute:
        """Minimise ``Result.extra["length"]``."""
        return MinimizeAttribute("length")

    def length(self, tour: List[int]) -> float:
        """Closed tour length of a 0-based tour."""
        return float(tsplib.tour_length(self.instance.matrix, np.asarray(tour, dtype=np.int64)))

    def run(self, desired_result, input, limit) -> Result:
        """Called once per configuration: returns the tour length in ``extra["length"]``."""
        return Result(extra={"length": self.length(desired_result.configuration.data["tour"])})

    def save_final_config(self, config: Dict) -> None:
        """Called once at the end with the best configuration: prints the tour, its length and gap."""
        tour = list(config["tour"])
        length = self.length(tour)
        inst = self.instance
        print(f"best tour for {inst.name} ({inst.kind}, {inst.dimension} nodes, "
              f"{inst.edge_weight_type}), 1-based node ids:")
        print(" ".join(str(node) for node in tsplib_tour(tour)))
        print(f"length: {length:g}")
        gap = format_gap(length, self.optimum)
        if gap:
            print(gap)
        super().save_final_config(config)          # --final-config PATH still writes the JSON



if __name__ == "__main__":
    sys.exit(TSPTuner.main())
