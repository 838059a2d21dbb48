"""Pattern (compass) search, and the building blocks of every local-search technique.

Building blocks, used by :mod:`.nelder_mead`, :mod:`.torczon` and :mod:`.annealing` too:

* :class:`UnitSpace` -- the unit-cube view of a space's *primitive* parameters (int, float, log,
  pow2, ordinal: ``get_unit_value``/``set_unit_value``); every other parameter is *complex*.
* :func:`mutate_param` -- one small mutation of any parameter with its own operators.
* :class:`BatchSequentialTechnique` -- generator style like :class:`SequentialTechnique`, but a
  ``yield`` hands over a *list* of configurations (all kept in flight at once) and evaluates to
  their values.  Configurations already measured (by anyone) or infeasible are answered from a
  local cache without being proposed, so these methods never re-propose a known configuration.

:class:`PatternSearch` is OpenTuner's (which crashes on Python 3; this one runs).
"""
from __future__ import annotations

import math
import random
from collections import deque
from typing import Any, Deque, Dict, Generator, List, Optional, Sequence, Set, Tuple

from ..parameters import ConfigurationManipulator, Parameter, PrimitiveParameter
from .base import Config, Feedback, Technique

Vec = List[float]
BatchGen = Generator[List[Config], List[float], None]


# ---------------------------------------------------------------------------- building blocks
def _clip(u: float) -> float:
    return 0.0 if u < 0.0 else 1.0 if u > 1.0 else u


def mutate_param(param: Parameter, cfg: Config, rng: random.Random,
                 strength: Optional[float] = None) -> None:
    """Mutate ``param``'s value in ``cfg`` in place with one of its operators.

    Permutations (and schedules) get a random segment inversion (a 2-opt move between two random
    positions when ``strength`` is None; else a section of ``strength`` times the length, or a random
    swap); booleans a flip; boolean
    arrays one flipped element; numbers and numeric arrays a Gaussian step (sigma ``strength``,
    default 0.1, in unit space); enums, switches and selectors a re-draw that differs when it can.
    """
    ops = param.operators()
    if "op2_random_invert" in ops:
        parent = {param.name: param.copy_value(param.get_value(cfg))}
        # section between two random positions (short ones likelier): the strongest single move
        # for tours measured with tools/compare.py on att48; swaps only when a strength is forced
        if strength is None:
            param.apply_operator("op2_random_invert", cfg, [parent], rng,
                                 strength=abs(rng.random() - rng.random()))
        elif rng.random() < 0.5:
            param.apply_operator("op2_random_invert", cfg, [parent], rng, strength=strength)
        else:
            param.apply_operator("op2_random_swap", cfg, [parent], rng)
        return
    for name in ("op1_flip", "op1_flip_random"):
        if name in ops:
            param.apply_operator(name, cfg, [], rng)
            return
    if "op1_normal_mutation" in ops:
        sigma = 0.1 if strength is None else max(float(strength), 1e-12)
        param.apply_operator("op1_normal_mutation", cfg, [], rng, sigma=sigma)
        return
    old = param.get_value(cfg)
    for _ in range(5):
        param.apply_operator("op1_randomize", cfg, [], rng)
        if param.get_value(cfg) != old:
            return


class UnitSpace:
    """Vectors in ``[0, 1]^d`` for the primitive parameters of a manipulator."""

    def __init__(self, manipulator: ConfigurationManipulator) -> None:
        self.manipulator = manipulator
        self.prims: List[PrimitiveParameter] = [p for p in manipulator.parameters
                                                if isinstance(p, PrimitiveParameter)]
        self.complex: List[Parameter] = [p for p in manipulator.parameters
                                         if not isinstance(p, PrimitiveParameter)]

    @property
    def dim(self) -> int:
        return len(self.prims)

    def vector(self, cfg: Config) -> Vec:
        """Unit values of the primitive parameters of ``cfg``."""
        return [p.get_unit_value(cfg) for p in self.prims]

    def config(self, vec: Sequence[float], template: Config) -> Config:
        """A copy of ``template`` whose primitive parameters take ``vec`` (clipped, rounded)."""
        cfg = self.manipulator.copy(template)
        for p, u in zip(self.prims, vec):
            p.set_unit_value(cfg, _clip(u))
        return cfg

    def feasible(self, vec: Sequence[float], anchor: Sequence[float], templates: Sequence[Config],
                 tries: int = 4) -> Tuple[Vec, Config]:
        """Build the point ``vec``; while infeasible, move it halfway toward ``anchor`` (``tries``
        times per template, templates in order).  Returns ``(vec, cfg)``; the cfg may still be
        infeasible, which the caller's batch machinery penalises with ``inf``."""
        start = [_clip(u) for u in vec]
        v, cfg = start, templates[0]
        for template in templates:
            v = start
            for _ in range(tries + 1):
                cfg = self.config(v, template)
                if self.manipulator.is_feasible(cfg):
                    return v, cfg
                v = [a + 0.5 * (x - a) for x, a in zip(v, anchor)]
        return v, cfg


class BatchSequentialTechnique(Technique):
    """Generator-style technique with whole batches in flight.

    Write :meth:`main_generator` with ``values = yield [cfg, ...]``: the values (lower is better,
    ``inf`` for infeasible or failed) come back in the same order once every configuration of the
    batch has a result.  ``propose()`` hands out the batch one configuration per call and returns
    None while results are outstanding.  Configurations already known (measured by any technique,
    or infeasible) are answered from the cache without a request; :attr:`last_novel` counts the
    configurations of the last batch that were really requested.  When ``max_internal_steps``
    batches in a row need no request (4 right after a fallback), or the generator ends,
    ``propose()`` falls back to a mutation of the best configuration (:meth:`fallback`) so the
    run never stalls.
    """

    max_internal_steps = 64

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self.space = UnitSpace(manipulator)
        self.known: Dict[str, float] = {}
        self._gen: Optional[BatchGen] = None
        self._done = False
        self._batch: List[str] = []
        self._queue: Deque[Tuple[str, Config]] = deque()
        self._waiting: Set[str] = set()
        self._fell_back = False
        self.last_novel = 0

    def main_generator(self) -> BatchGen:
        """Yield lists of configurations; each ``yield`` evaluates to their values (override)."""
        yield from self.mutation_loop()

    def observe(self, feedback: Feedback) -> None:
        """Cache every result by key and release the configurations the batch waits for."""
        super().observe(feedback)
        self.known.setdefault(feedback.key, feedback.value if feedback.ok else math.inf)
        self._waiting.discard(feedback.key)

    def desired_configuration(self) -> Optional[Config]:
        # after a fallback, try the generator only briefly: the space may be exhausted
        steps = 4 if self._fell_back else self.max_internal_steps
        for _ in range(steps):
            while self._queue:
                key, cfg = self._queue.popleft()
                if key in self._waiting:
                    self._fell_back = False
                    self.remember_key(cfg, key)  # hashed when queued: the proposal carries it
                    return cfg
            if self._waiting:
                return None
            if not self._advance():
                break
        self._fell_back = True
        return self.fallback()

    def _advance(self) -> bool:
        """Send the finished batch's values to the generator and queue its next batch."""
        if self._done:
            return False
        try:
            if self._gen is None:
                self._gen = self.main_generator()
                batch = next(self._gen)
            else:
                batch = self._gen.send([self.known[k] for k in self._batch])
        except StopIteration:
            self._done = True
            return False
        self._batch = []
        self.last_novel = 0
        m = self.manipulator
        assert m is not None
        for cfg in batch:
            key = m.hash_valid(cfg)
            self._batch.append(key)
            if key in self.known or key in self._waiting:
                continue
            if not m.is_feasible(cfg):
                self.known[key] = math.inf      # penalised locally: never proposed
                continue
            self._waiting.add(key)
            self._queue.append((key, cfg))
            self.last_novel += 1
        return True

    def fallback(self) -> Config:
        """A feasible mutation of the best configuration (random before any result), new if possible."""
        m = self.manipulator
        assert m is not None
        params = m.parameters
        if self.best_config is None or not params:
            return m.random(self.rng)
        for attempt in range(20):
            child = m.copy(self.best_config)
            for _ in range(1 + attempt // 5):  # one move; more only while retries hit known configs
                mutate_param(self.rng.choice(params), child, self.rng)
            if m.is_feasible(child):
                key = m.hash_valid(child)
                if key not in self.known:
                    self.remember_key(child, key)
                    return child
        return m.random(self.rng)

    def mutation_loop(self) -> BatchGen:
        """Mutation of the best configuration, forever (for spaces without usable dimensions)."""
        while True:
            yield [self.fallback()]


# ---------------------------------------------------------------------------- pattern search
def complex_moves(tech: BatchSequentialTechnique, center: Config, param: Parameter, count: int,
                  strength: Optional[float]) -> List[Config]:
    """Up to ``count`` feasible mutations of ``param`` in ``center`` (5 tries each)."""
    m = tech.manipulator
    assert m is not None
    out = []
    for _ in range(count):
        for _ in range(5):
            cfg = m.copy(center)
            mutate_param(param, cfg, tech.rng, strength)
            if m.is_feasible(cfg):
                out.append(cfg)
                break
    return out


def axis_points(tech: BatchSequentialTechnique, center: Config,
                steps: List[Tuple[int, float]]) -> List[Config]:
    """Points moving one primitive parameter of ``center`` by a unit-space offset each
    (``steps`` holds ``(index, offset)``), clipped to the cube and repaired toward the center."""
    space = tech.space
    base = space.vector(center)
    out = []
    for i, delta in steps:
        vec = list(base)
        vec[i] = min(1.0, max(0.0, base[i] + delta))
        _, cfg = space.feasible(vec, base, [center])
        out.append(cfg)
    return out


class PatternSearch(BatchSequentialTechnique):
    """Compass search: from a center, try every primitive parameter ``step`` lower and higher in
    unit space (one batch, all in flight), plus ``complex_moves`` mutations of each complex
    parameter (permutation inversions use ``step`` as their strength); move to the best point
    if it beats the center, else halve ``step``.

    Like OpenTuner's, the first search starts from the best configuration seen (random if none)
    with ``initial_step_size`` 0.4, and adopts the global best -- from any technique -- whenever
    it beats the center.  When the step falls below ``min_step`` or three rounds in a row
    request nothing new (every point rounds to a known configuration), the search restarts from
    a random configuration; after a restart it follows only its own rounds, so each restart is
    an independent local search.  Infeasible axis points are moved halfway back toward the center
    a few times; points still infeasible are never proposed and count as ``inf``.
    """

    description = "compass pattern search on unit-cube steps, step halved when no point improves"

    def __init__(self, name: Optional[str] = None, initial_step_size: float = 0.4,
                 min_step: float = 1e-7, complex_moves: int = 2) -> None:
        super().__init__(name)
        self.initial_step_size = initial_step_size
        self.min_step = min_step
        self.complex_moves = complex_moves
        self.step_history: Deque[float] = deque(maxlen=1000)   # step of the latest rounds

    def pattern(self, center: Config, step: float) -> List[Config]:
        """The round's points around ``center`` (the center itself excluded)."""
        steps = []
        for i, u in enumerate(self.space.vector(center)):
            if u > 0.0:
                steps.append((i, -step))
            if u < 1.0:
                steps.append((i, step))
        points = axis_points(self, center, steps)
        for param in self.space.complex:
            points += complex_moves(self, center, param, self.complex_moves, min(step, 1.0))
        return points

    def main_generator(self) -> BatchGen:
        assert self.manipulator is not None
        center = self.best_config if self.best_config is not None else self.manipulator.random(self.rng)
        step, stale, restarted = self.initial_step_size, 0, False
        while True:
            points = self.pattern(center, step)
            values = yield [center] + points
            self.step_history.append(step)
            stale = 0 if self.last_novel else stale + 1
            center_value = values[0]
            j = min(range(len(points)), key=values[1:].__getitem__, default=None)
            if not restarted and self.best_config is not None and self.best_value < center_value:
                center = self.best_config
            elif j is not None and values[j + 1] < center_value:
                center = points[j]
            else:
                step /= 2.0
            if step < self.min_step or stale >= 3 or not points:
                center = self.manipulator.random(self.rng)
                step, stale, restarted = self.initial_step_size, 0, True


def register(registry: Any) -> None:
    """Register PatternSearch."""
    from .builtin import add_module
    add_module(registry, "pattern_search")
