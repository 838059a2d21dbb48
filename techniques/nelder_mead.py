"""Local-search building blocks and the Nelder–Mead simplex family (OpenTuner's names).

Building blocks, shared by :mod:`.torczon`, :mod:`.pattern_search` and :mod:`.annealing`:

* :class:`UnitSpace` -- the unit-cube view of a space's *primitive* parameters (int, float, log,
  pow2, ordinal: ``get_unit_value``/``set_unit_value``); every other parameter is *complex*.
* :func:`mutate_param` -- one small mutation of any parameter with its own operators.
* :class:`BatchSequentialTechnique` -- generator style like :class:`SequentialTechnique`, but a
  ``yield`` hands over a *list* of configurations (all kept in flight at once) and evaluates to
  their values.  Configurations already measured (by anyone) or infeasible are answered from a
  local cache without being proposed, so these methods never re-propose a known configuration.

Then :class:`SimplexTechnique` (initial simplex, restarts, complex parameters), Nelder–Mead with
its three initial-simplex styles, and :class:`MultiSimplex` (OpenTuner's recycling of several
simplexes) for ``MultiNelderMead``.
"""
from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Deque, Dict, Generator, List, Optional, Sequence, Set, Tuple

from ..parameters import ConfigurationManipulator, Parameter, PrimitiveParameter
from .base import Config, Feedback, Proposal, Technique
from .registry import TechniqueRegistry

Vec = List[float]
BatchGen = Generator[List[Config], List[float], None]


# ---------------------------------------------------------------------------- building blocks
def _clip(u: float) -> float:
    return 0.0 if u < 0.0 else 1.0 if u > 1.0 else u


def mutate_param(param: Parameter, cfg: Config, rng: random.Random,
                 strength: Optional[float] = None) -> None:
    """Mutate ``param``'s value in ``cfg`` in place with one of its operators.

    Permutations (and schedules) get a random segment inversion (a 2-opt move, section of
    ``strength`` times the length, random when None) or a random swap; booleans a flip; boolean
    arrays one flipped element; numbers and numeric arrays a Gaussian step (sigma ``strength``,
    default 0.1, in unit space); enums, switches and selectors a re-draw that differs when it can.
    """
    ops = param.operators()
    if "op2_random_invert" in ops:
        parent = {param.name: param.copy_value(param.get_value(cfg))}
        if rng.random() < 0.5:
            s = rng.random() if strength is None else strength
            param.apply_operator("op2_random_invert", cfg, [parent], rng, strength=s)
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
    batches in a row need no request, or the generator ends, ``propose()`` falls back to a
    mutation of the best configuration (:meth:`fallback`) so the run never stalls.
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
        for _ in range(self.max_internal_steps):
            while self._queue:
                key, cfg = self._queue.popleft()
                if key in self._waiting:
                    return cfg
            if self._waiting:
                return None
            if not self._advance():
                break
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
        if self.best_config is None:
            return m.random(self.rng)
        params = m.parameters
        for _ in range(20):
            child = m.copy(self.best_config)
            for _ in range(1 + int(self.rng.random() < 0.3)):
                mutate_param(self.rng.choice(params), child, self.rng)
            if m.is_feasible(child) and m.hash_valid(child) not in self.known:
                return child
        return m.random(self.rng)

    def mutation_loop(self) -> BatchGen:
        """Mutation of the best configuration, forever (for spaces without usable dimensions)."""
        while True:
            yield [self.fallback()]


# ---------------------------------------------------------------------------- simplex base
@dataclass
class Vertex:
    """A simplex vertex: continuous unit-space position, its configuration and value."""

    vec: Vec
    cfg: Config
    value: float = math.inf


class SimplexTechnique(BatchSequentialTechnique):
    """Shared machinery of Nelder–Mead and Torczon on the unit cube of primitive parameters.

    * Initial simplex around a seed (the given ``seed_cfg``, else the best configuration seen,
      else a random one): ``"random"`` (seed + d random configurations), ``"right"`` (seed + one
      step of ``edge`` along each axis, inward) or ``"regular"`` (all edges ``edge`` long,
      mirrored per axis at the cube's border).
    * Vertices keep continuous positions; configurations are their rounding, so integer
      parameters do not collapse the simplex early.
    * Complex parameters (enum, bool, permutation, arrays, selector) are not moved by the
      simplex: every new point takes them from the best vertex, and with probability
      ``complex_rate`` one of them, chosen uniformly, is mutated with :func:`mutate_param`.
      A random initial simplex draws them at random.
    * A space with no primitive parameter falls back to mutation of the best configuration.
    * Infeasible points are moved halfway toward the centroid (the best vertex for Torczon) up to
      ``repairs`` times, first with and then without the complex mutation; if still infeasible
      they are never proposed and count as ``inf``.
    * Restart (so a run never stalls): when every vertex rounds to the same configuration, the
      simplex is smaller than ``min_size``, or ``3 (d + 1) + 1`` steps in a row requested nothing
      new (OpenTuner's criterion).  Restarts alternate between the best configuration (with a
      randomised edge length) and a random one.
    """

    def __init__(self, name: Optional[str] = None, initial: str = "random", edge: float = 0.1,
                 complex_rate: float = 0.2, seed_cfg: Optional[Config] = None, repairs: int = 4,
                 min_size: float = 1e-9) -> None:
        super().__init__(name)
        if initial not in ("random", "right", "regular"):
            raise ValueError(f"initial simplex style must be random, right or regular, got {initial!r}")
        if not 0.0 < edge <= 0.5:
            raise ValueError(f"initial edge length must be in (0, 0.5], got {edge!r}")
        self.initial = initial
        self.edge = edge
        self.complex_rate = complex_rate
        self.seed_cfg = seed_cfg
        self.repairs = repairs
        self.min_size = min_size
        self.restarts = 0

    # ---- the run: restarts around iterate() -------------------------------
    def main_generator(self) -> BatchGen:
        if self.space.dim == 0:
            yield from self.mutation_loop()
            return
        seed, edge = self.seed_cfg, self.edge
        while True:
            if seed is None:
                seed = self.best_config if self.best_config is not None else self._random()
            simplex = self.initial_simplex(seed, edge)
            values = yield [v.cfg for v in simplex]
            for v, f in zip(simplex, values):
                v.value = f
            yield from self.iterate(simplex)
            self.restarts += 1
            use_best = self.restarts % 2 == 1 and self.best_config is not None
            seed = self.best_config if use_best else self._random()
            edge = min(0.5, self.edge * 2.0 ** self.rng.uniform(-1.0, 1.0))

    def iterate(self, simplex: List[Vertex]) -> BatchGen:
        """Run the method from an evaluated simplex; return when it has converged."""
        raise NotImplementedError

    def _random(self) -> Config:
        assert self.manipulator is not None
        return self.manipulator.random(self.rng)

    # ---- initial simplex ------------------------------------------------------
    def initial_simplex(self, seed: Config, edge: float) -> List[Vertex]:
        """d + 1 vertices around ``seed`` in the configured style."""
        space = self.space
        base = space.vector(seed)
        first = Vertex(base, seed)
        if self.initial == "random":
            others = [self._random() for _ in range(space.dim)]
            return [first] + [Vertex(space.vector(c), c) for c in others]
        offsets = self._right_offsets(base, edge) if self.initial == "right" \
            else self._regular_offsets(base, edge)
        simplex = [first]
        for vec in offsets:
            v, cfg = space.feasible(vec, base, [seed], self.repairs)
            if not self.manipulator.is_feasible(cfg):
                cfg = self._random()
                v = space.vector(cfg)
            simplex.append(Vertex(v, cfg))
        return simplex

    @staticmethod
    def _right_offsets(base: Vec, edge: float) -> List[Vec]:
        out = []
        for i, u in enumerate(base):
            vec = list(base)
            vec[i] = u + edge if u <= 0.5 else u - edge
            out.append(vec)
        return out

    @staticmethod
    def _regular_offsets(base: Vec, edge: float) -> List[Vec]:
        """Vertices ``base + p e_i + q sum_{j != i} e_j`` (a regular simplex of edge ``edge``),
        mirrored along axes where ``base + p`` would leave the cube."""
        n = len(base)
        q = (math.sqrt(n + 1.0) - 1.0) / (n * math.sqrt(2.0)) * edge
        p = q + edge / math.sqrt(2.0)
        sign = [-1.0 if u + p > 1.0 else 1.0 for u in base]
        return [[u + sign[j] * (p if j == i else q) for j, u in enumerate(base)] for i in range(n)]

    # ---- points and convergence -------------------------------------------------
    def point(self, vec: Sequence[float], anchor: Sequence[float], template: Config) -> Vertex:
        """A new vertex at ``vec`` with complex values from ``template`` (maybe mutated), repaired
        toward ``anchor`` when infeasible."""
        templates = [template]
        if self.space.complex and self.rng.random() < self.complex_rate:
            mutated = self.manipulator.copy(template)
            mutate_param(self.rng.choice(self.space.complex), mutated, self.rng)
            templates.insert(0, mutated)
        v, cfg = self.space.feasible(vec, anchor, templates, self.repairs)
        return Vertex(v, cfg)

    def evaluate(self, vertices: List[Vertex]) -> BatchGen:
        """Yield the vertices' configurations as one batch and store their values."""
        values = yield [v.cfg for v in vertices]
        for v, f in zip(vertices, values):
            v.value = f

    def converged(self, simplex: List[Vertex], stale: int) -> bool:
        """True when the simplex collapsed, became tiny, or ``stale`` steps requested nothing."""
        if stale > 3 * len(simplex) + 1:
            return True
        m = self.manipulator
        first = m.hash_valid(simplex[0].cfg)
        if all(m.hash_valid(v.cfg) == first for v in simplex[1:]):
            return True
        base = simplex[0].vec
        size = max(abs(a - b) for v in simplex[1:] for a, b in zip(v.vec, base))
        return size < self.min_size

    @staticmethod
    def sort(simplex: List[Vertex]) -> None:
        simplex.sort(key=lambda v: v.value)   # stable: ties keep their order

    @staticmethod
    def centroid(vertices: Sequence[Vertex]) -> Vec:
        n = len(vertices)
        return [sum(col) / n for col in zip(*(v.vec for v in vertices))]


# ---------------------------------------------------------------------------- Nelder–Mead
class NelderMead(SimplexTechnique):
    """Nelder–Mead downhill simplex (reflection ``alpha``, expansion ``gamma``, contraction
    ``beta``, shrink ``sigma``) on the unit cube of primitive parameters.

    Each step reflects the worst vertex through the centroid of the others; a reflection better
    than the best vertex is tried further out (expansion); one no better than the second worst is
    contracted (outside when it beats the worst, else inside), and a failed contraction shrinks
    the whole simplex toward the best vertex.  OpenTuner's version averages *all* vertices into
    the centroid and so uses ``alpha = 2``; this one uses the textbook centroid with ``alpha = 1``,
    which gives the same reflection in two dimensions.  See :class:`SimplexTechnique` for initial
    simplexes, complex parameters, constraints and restarts.
    """

    description = "Nelder-Mead simplex on the unit cube of numeric parameters (random initial simplex)"

    def __init__(self, name: Optional[str] = None, initial: str = "random", alpha: float = 1.0,
                 gamma: float = 2.0, beta: float = 0.5, sigma: float = 0.5, **kw: Any) -> None:
        super().__init__(name, initial=initial, **kw)
        self.alpha, self.gamma, self.beta, self.sigma = alpha, gamma, beta, sigma

    def iterate(self, simplex: List[Vertex]) -> BatchGen:
        stale = 0
        while True:
            self.sort(simplex)
            if self.converged(simplex, stale):
                return
            novel = yield from self.step(simplex)
            stale = 0 if novel else stale + 1

    def step(self, s: List[Vertex]) -> Generator[List[Config], List[float], int]:
        """One Nelder–Mead step on the sorted simplex ``s``; returns how many points were new."""
        best, worst = s[0], s[-1]
        c = self.centroid(s[:-1])
        r = self.point([ci + self.alpha * (ci - wi) for ci, wi in zip(c, worst.vec)], c, best.cfg)
        yield from self.evaluate([r])
        novel = self.last_novel
        if r.value < best.value:
            e = self.point([ci + self.gamma * (ri - ci) for ci, ri in zip(c, r.vec)], c, best.cfg)
            yield from self.evaluate([e])
            novel += self.last_novel
            s[-1] = e if e.value < r.value else r
        elif r.value < s[-2].value:
            s[-1] = r
        else:
            base = r if r.value <= worst.value else worst
            k = self.point([ci + self.beta * (bi - ci) for ci, bi in zip(c, base.vec)], c, best.cfg)
            yield from self.evaluate([k])
            novel += self.last_novel
            if k.value <= base.value:
                s[-1] = k
            else:
                shrunk = [self.point([b + self.sigma * (x - b) for b, x in zip(best.vec, v.vec)],
                                     best.vec, best.cfg) for v in s[1:]]
                yield from self.evaluate(shrunk)
                novel += self.last_novel
                s[1:] = shrunk
        return novel


# ---------------------------------------------------------------------------- several simplexes
class MultiSimplex(Technique):
    """Several simplex techniques in round robin, recycled like OpenTuner's RecyclingMetaTechnique.

    Every ``window`` proposals, the member whose own best result is the worst is replaced by a
    fresh one (from the same factory) seeded with the global best configuration, provided the
    global best beats that member's best.  Each member also restarts itself on convergence.
    Every member sees every result; members are named ``<name>.R<i>`` under this technique's path.
    """

    description = "round robin of several simplex techniques, the worst recycled from the best"

    def __init__(self, factories: Sequence[Callable[[Optional[Config]], Technique]],
                 name: Optional[str] = None, window: int = 100) -> None:
        super().__init__(name)
        if not factories:
            raise ValueError("MultiSimplex needs at least one member factory")
        self.factories = list(factories)
        self.window = window

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self._renames = 0
        self._next = 0
        self._requests = 0
        self.members: List[Technique] = [self._spawn(f, None) for f in self.factories]
        self.member_best: List[float] = [math.inf] * len(self.members)

    def _spawn(self, factory: Callable[[Optional[Config]], Technique], seed: Optional[Config]) -> Technique:
        tech = factory(seed)
        tech.name = f"{tech.name}.R{self._renames}"
        self._renames += 1
        tech.bind(self.manipulator, random.Random(self.rng.getrandbits(64)), f"{self.path}/{tech.name}")
        return tech

    def propose(self) -> Optional[Proposal]:
        for _ in range(len(self.members)):
            i = self._next
            self._next = (self._next + 1) % len(self.members)
            proposal = self.members[i].propose()
            if proposal is not None:
                self._requests += 1
                if self._requests % self.window == 0:
                    self._recycle()
                return proposal
        return None

    def desired_configuration(self) -> Optional[Config]:  # pragma: no cover - propose() overrides
        proposal = self.propose()
        return None if proposal is None else proposal.config

    def _recycle(self) -> None:
        scored = [(b, i) for i, b in enumerate(self.member_best) if math.isfinite(b)]
        if not scored or self.best_config is None:
            return
        worst_value, i = max(scored)
        if self.best_value < worst_value:
            self.members[i] = self._spawn(self.factories[i], self.manipulator.copy(self.best_config))
            self.member_best[i] = math.inf

    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        for i, tech in enumerate(self.members):
            if feedback.ok and feedback.requestor == tech.path:
                self.member_best[i] = min(self.member_best[i], feedback.value)
            tech.observe(feedback)


# ---------------------------------------------------------------------------- registration
def _nm(initial: str) -> Callable[[Optional[Config]], Technique]:
    names = {"random": "RandomNelderMead", "right": "RightNelderMead", "regular": "RegularNelderMead"}
    return lambda seed=None: NelderMead(names[initial], initial=initial, seed_cfg=seed)


def multi_nelder_mead() -> MultiSimplex:
    """OpenTuner's MultiNelderMead: Right, Random and Regular Nelder–Mead, recycled every 100."""
    return MultiSimplex([_nm("right"), _nm("random"), _nm("regular")], name="MultiNelderMead")


def register(registry: TechniqueRegistry) -> None:
    """Register RandomNelderMead, RegularNelderMead, RightNelderMead and MultiNelderMead."""
    registry.register("RandomNelderMead", lambda: _nm("random")(None),
                      "Nelder-Mead simplex on numeric parameters, random initial simplex")
    registry.register("RegularNelderMead", lambda: _nm("regular")(None),
                      "Nelder-Mead simplex on numeric parameters, regular initial simplex (edge 0.1)")
    registry.register("RightNelderMead", lambda: _nm("right")(None),
                      "Nelder-Mead simplex on numeric parameters, right-angled initial simplex (edge 0.1)")
    registry.register("MultiNelderMead", multi_nelder_mead,
                      "round robin of Right/Random/Regular Nelder-Mead, worst recycled from the best")
