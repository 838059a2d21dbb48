"""OpenTuner's PseudoAnnealingSearch (which crashes on Python 3; this one runs)."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence

from .base import Config
from .pattern_search import BatchGen, BatchSequentialTechnique, axis_points, complex_moves

#: schedule steps between two listed temperatures when no interval is given (OpenTuner's)
DEFAULT_INTERVAL = 100


def cooling_schedule(temps: Sequence[float], intervals: Sequence[int] = ()) -> List[float]:
    """Temperatures falling linearly from ``temps[i]`` to ``temps[i+1]`` in ``intervals[i]``
    steps (``DEFAULT_INTERVAL`` where missing), never below 0; ``[30, 0]`` gives 101 values."""
    if not temps:
        raise ValueError("the temperature schedule needs at least one temperature, e.g. temps=[30, 0]")
    ext = list(intervals) + [DEFAULT_INTERVAL] * max(0, len(temps) - 1 - len(intervals))
    out = [float(temps[0])]
    for i in range(len(temps) - 1):
        n = max(1, int(ext[i]))
        step = (float(temps[i + 1]) - float(temps[i])) / n
        for _ in range(n):
            out.append(max(out[-1] + step, 0.0))
    return out


def acceptance(temp: float) -> float:
    """Probability of passing over the next-best point: ``exp(-1/temp)`` (0 when frozen)."""
    if temp <= 0.0 or 1.0 / temp > 10.0:
        return 0.0
    return math.exp(-1.0 / temp)


class PseudoAnnealingSearch(BatchSequentialTechnique):
    """Pseudo-annealing without relative energies (OpenTuner's semantics).

    From the current state, one batch holds the state and its neighbours: every primitive
    parameter moved down and up by ``step * U(0, 1)`` in unit space, with
    ``step = exp(-(20 + t/100) / (T + 1))``, plus ``complex_moves`` mutations of each complex
    parameter (permutation inversions with strength ``step``).  The points are ranked by value;
    the next state is the ``k``-th ranked one where ``k`` counts how many times in a row a draw
    fell below ``exp(-1/T)``, so hot schedules wander and cold ones descend.  When the
    temperature is nearly frozen (``exp(-1/T) < 1e-4``) the state jumps to the global best if it
    is better.  The schedule falls linearly through ``temps`` (default 30 to 0 over 100 steps) and
    loops.  The first state is random.  Infeasible neighbours are moved halfway back toward the
    state a few times; those still infeasible are never proposed and count as ``inf``.
    """

    description = "pseudo simulated annealing over unit-cube and mutation neighbours (temps 30->0, looping)"

    def __init__(self, name: Optional[str] = None, temps: Sequence[float] = (30, 0),
                 intervals: Sequence[int] = (), loop: bool = True, complex_moves: int = 2) -> None:
        super().__init__(name)
        self.schedule = cooling_schedule(temps, intervals)
        self.loop = loop
        self.complex_moves = complex_moves

    def neighbours(self, state: Config, step: float) -> List[Config]:
        """The state's neighbours at this step size (the state itself excluded)."""
        steps = []
        for i, u in enumerate(self.space.vector(state)):
            if u > 0.0:
                steps.append((i, -step * self.rng.random()))
            if u < 1.0:
                steps.append((i, step * self.rng.random()))
        points = axis_points(self, state, steps)
        for param in self.space.complex:
            points += complex_moves(self, state, param, self.complex_moves, min(step, 1.0))
        return points

    def main_generator(self) -> BatchGen:
        assert self.manipulator is not None
        state = self.manipulator.random(self.rng)
        (state_value,) = yield [state]
        counter, last = 0, len(self.schedule) - 1
        while True:
            temp = self.schedule[min(counter, last)]
            step = math.exp(-(20.0 + counter / 100.0) / (temp + 1.0))
            points = [state] + self.neighbours(state, step)
            values = yield points
            # stable sort: the state comes first among equals; inf (failed, infeasible) never chosen
            order = sorted((i for i in range(len(points)) if math.isfinite(values[i])),
                           key=values.__getitem__)
            p, sel = acceptance(temp), 0
            while p > self.rng.random():
                sel += 1
            if order:
                k = order[sel % len(order)]
                state, state_value = points[k], values[k]
            else:
                state, state_value = self.manipulator.random(self.rng), math.inf
            if p < 1e-4 and self.best_config is not None and self.best_value < state_value:
                state, state_value = self.best_config, self.best_value
            counter += 1
            if counter > last and self.loop:
                counter -= last


def register(registry: Any) -> None:
    """Register PseudoAnnealingSearch."""
    from .builtin import add_module
    add_module(registry, "annealing")
