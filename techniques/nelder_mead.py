"""The Nelder–Mead simplex family (OpenTuner's Random/Regular/Right/MultiNelderMead).

:class:`SimplexTechnique` holds what Nelder–Mead and Torczon share (initial simplexes, restarts,
complex parameters, repair of infeasible points).  MultiNelderMead is OpenTuner's recycling of
several simplexes (:class:`~.meta.RecyclingMetaTechnique`; OpenTuner 0.8.8's crashes after 100
requests, this one runs).  The local-search building blocks (unit-cube view, batch generator
technique, parameter mutation) live in :mod:`.pattern_search`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Generator, List, Optional, Sequence

from .base import Config, Technique
from .meta import RecyclingMetaTechnique
from .pattern_search import BatchGen, BatchSequentialTechnique, Vec, mutate_param


# ---------------------------------------------------------------------------- simplex base
def flatness(points: Sequence[Sequence[float]]) -> float:
    """Shape of a simplex: ``|det(edges)| / prod(|edge|)`` for the edges from ``points[0]``, in
    [0, 1]; 1 when the edges are orthogonal, 0 when the simplex is degenerate (Gram-Schmidt)."""
    basis: List[Vec] = []
    shape = 1.0
    for p in points[1:]:
        edge = [a - b for a, b in zip(p, points[0])]
        norm0 = math.sqrt(sum(x * x for x in edge))
        if norm0 == 0.0:
            return 0.0
        for b in basis:
            d = sum(x * y for x, y in zip(edge, b))
            edge = [x - d * y for x, y in zip(edge, b)]
        norm = math.sqrt(sum(x * x for x in edge))
        if norm <= 1e-300:
            return 0.0
        shape *= norm / norm0
        basis.append([x / norm for x in edge])
    return shape


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
    * The random initial simplex is the best-shaped of ``random_draws`` random draws (see
      :func:`flatness`): a thin simplex crawls (Torczon never changes its shape).
    * Restart (so a run never stalls): when every vertex rounds to the same configuration, the
      simplex is smaller than ``min_size`` or flatter than ``min_flatness`` (degenerate, e.g.
      squashed against the cube's border; checked up to 30 dimensions), or ``3 (d + 1) + 1``
      steps in a row requested nothing new (OpenTuner's criterion).  Restarts alternate between
      the best configuration (with a randomised edge length) and a random one.
    """

    def __init__(self, name: Optional[str] = None, initial: str = "random", edge: float = 0.1,
                 complex_rate: float = 0.2, seed_cfg: Optional[Config] = None, repairs: int = 4,
                 min_size: float = 1e-9, min_flatness: float = 1e-8, random_draws: int = 8) -> None:
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
        self.min_flatness = min_flatness
        self.random_draws = random_draws
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
        """Run the method from an evaluated simplex: sort it and take :meth:`step` after step until
        :meth:`converged` (a step that requested no new point counts as stale); then return."""
        stale = 0
        while True:
            self.sort(simplex)
            if self.converged(simplex, stale):
                return
            novel = yield from self.step(simplex)
            stale = 0 if novel else stale + 1

    def step(self, s: List[Vertex]) -> Generator[List[Config], List[float], int]:
        """One step of the method on the sorted simplex ``s`` (changed in place); returns how many of
        the points it requested were new.  Implemented by each simplex method."""
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
            return [first] + self._random_vertices(base)
        offsets = self._right_offsets(base, edge) if self.initial == "right" \
            else self._regular_offsets(base, edge)
        simplex = [first]
        for vec in offsets:
            v, cfg = space.feasible(vec, base, [seed], self.repairs)
            assert self.manipulator is not None
            if not self.manipulator.is_feasible(cfg):
                cfg = self._random()
                v = space.vector(cfg)
            simplex.append(Vertex(v, cfg))
        return simplex

    def _random_vertices(self, base: Vec) -> List[Vertex]:
        """d random configurations: the best-shaped (largest :func:`flatness`) of a few draws,
        because a thin simplex stays thin (Torczon keeps its shape) and crawls."""
        draws = self.random_draws if self.space.dim <= 30 else 1
        best: List[Vertex] = []
        best_shape = -1.0
        for _ in range(draws):
            cfgs = [self._random() for _ in range(self.space.dim)]
            vertices = [Vertex(self.space.vector(c), c) for c in cfgs]
            shape = flatness([base] + [v.vec for v in vertices])
            if shape > best_shape:
                best, best_shape = vertices, shape
        return best

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
            assert self.manipulator is not None
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
        """True when the simplex collapsed, became tiny or flat, or ``stale`` steps requested nothing."""
        if stale > 3 * len(simplex) + 1:
            return True
        if all(v.cfg == simplex[0].cfg for v in simplex[1:]):
            return True
        base = simplex[0].vec
        size = max(abs(a - b) for v in simplex[1:] for a, b in zip(v.vec, base))
        if size < self.min_size:
            return True
        return len(base) <= 30 and flatness([v.vec for v in simplex]) < self.min_flatness

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


# ---------------------------------------------------------------------------- registration
_NAMES = {"random": "RandomNelderMead", "right": "RightNelderMead", "regular": "RegularNelderMead"}


def _nm(initial: str) -> Callable[[], Technique]:
    return lambda: NelderMead(_NAMES[initial], initial=initial)


def multi_nelder_mead() -> RecyclingMetaTechnique:
    """OpenTuner's MultiNelderMead: Right, Random and Regular Nelder–Mead in round robin, the
    worst restarted from the global best every 100 requests."""
    return RecyclingMetaTechnique([_nm("right"), _nm("random"), _nm("regular")], name="MultiNelderMead")


def register(registry: Any) -> None:
    """Register RandomNelderMead, RegularNelderMead, RightNelderMead and MultiNelderMead."""
    from .builtin import add_module
    add_module(registry, "nelder_mead")
