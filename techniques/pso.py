"""Particle swarm optimisation over mixed spaces (OpenTuner's ``pso-*`` techniques).

Registered: ``pso-OX1``, ``pso-OX3``, ``pso-PMX``, ``pso-PX`` and ``pso-CX`` -- the suffix names
the crossover that moves a permutation toward the global or personal best.
"""
from __future__ import annotations

import math
import random
from typing import Any, Dict, List, Optional

from ..parameters import ConfigurationManipulator, Parameter
from .base import Config, Feedback
from .genetic import PERMUTATION_CROSSOVERS, EvolutionaryTechnique, is_permutation, mutate_param

#: velocities are clipped to this magnitude (unit space) so particles cannot fly off for ever
VMAX = 1.0


def _clip_velocity(v: Any) -> Any:
    """Clip a velocity (number or list of numbers) to ``[-VMAX, VMAX]``; non-finite becomes 0."""
    if isinstance(v, list):
        return [_clip_velocity(x) for x in v]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return 0.0 if not math.isfinite(v) else max(-VMAX, min(VMAX, float(v)))
    return 0.0


class Particle:
    """One particle: position (a configuration), per-parameter velocities, personal best."""

    def __init__(self, position: Config, key: str) -> None:
        self.position = position
        self.key = key
        self.velocity: Dict[str, Any] = {}
        self.best: Config = position
        self.best_value = math.inf
        self.pending: Optional[str] = None  # key of the position in flight


class PSO(EvolutionaryTechnique):
    """Hybrid PSO: ``op3_swarm`` per parameter, velocity state per particle and parameter.

    The first ``n_particles`` requests are the particles' random starting positions.  Then the
    next particle (round robin) whose last position has been measured moves: for every parameter
    ``velocity = param.op3_swarm(position, global_best, personal_best, c=omega, c1=phi_g,
    c2=phi_l, velocity=velocity)`` (OpenTuner's call; the global best is the best result of any
    technique).  Numeric and ordinal parameters move in unit space with the classic update
    ``v' = omega v + r1 phi_g (g - x) + r2 phi_l (p - x)`` (clipped to +-1); booleans use the
    sigmoid rule; enums keep or copy a best's value; numeric/boolean arrays use
    ``op3_swarm_parallel`` (one velocity per element); permutations keep their order or cross
    toward a best with the technique's crossover (``xchoice``, a section of a third of the items).
    Improvement over OpenTuner: a move that leaves a permutation unchanged, or a particle on an
    already-seen configuration, gets "turbulence" -- local mutations (inversion / or-opt / swap for
    permutations, a kind-aware mutation otherwise) -- so a converged swarm keeps searching around the
    bests instead of re-proposing them.  A particle whose move is infeasible after retries restarts
    at a random feasible position.  Several particles may be in flight; results arrive in any order.
    """

    def __init__(self, name: Optional[str] = None, crossover: str = "OX1", n_particles: int = 30,
                 omega: float = 0.5, phi_l: float = 0.5, phi_g: float = 0.5,
                 strength: float = 1.0 / 3.0, turbulence: float = 0.3) -> None:
        super().__init__(name)
        crossover = crossover[len("op3_cross_"):] if crossover.startswith("op3_cross_") else crossover
        if crossover not in PERMUTATION_CROSSOVERS:
            raise ValueError(f"unknown crossover {crossover!r}; choose one of {PERMUTATION_CROSSOVERS}")
        self.crossover = crossover
        self.n_particles = max(1, int(n_particles))
        self.omega, self.phi_l, self.phi_g = omega, phi_l, phi_g
        self.strength = strength
        self.turbulence = turbulence

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        """Called once before the first proposal; starts an empty swarm."""
        super().bind(manipulator, rng, path)
        self.particles: List[Particle] = []
        self.turn = 0

    def desired_configuration(self) -> Optional[Config]:
        """A new particle while the swarm fills, then the next free particle's move; None when
        every particle's position is still being measured."""
        if len(self.particles) < self.n_particles:
            cfg = self.finish(self.random_config, tries=5, mutate_duplicates=False)
            particle = Particle(cfg, self.key(cfg))
            particle.pending = particle.key
            self.particles.append(particle)
            return cfg
        for step in range(len(self.particles)):
            particle = self.particles[(self.turn + step) % len(self.particles)]
            if particle.pending is None:
                self.turn = (self.turn + step + 1) % len(self.particles)
                return self.move(particle)
        return None

    def move(self, particle: Particle) -> Config:
        """Move ``particle`` (updating its velocities) and return its new position."""
        m = self.manipulator
        assert m is not None
        velocity: Dict[str, Any] = dict(particle.velocity)
        new: Optional[Config] = None
        for _ in range(self.max_tries):
            velocity = dict(particle.velocity)
            cand = self.swarm_step(particle, velocity)
            if not m.is_feasible(cand):
                continue
            if not self.is_new(self.key(cand)) or self.rng.random() < self.turbulence:
                cand = self._turbulence(cand)
            new = cand
            if self.is_new(self.key(cand)):
                break
        if new is None:  # no feasible move: restart the particle
            new, velocity = self.random_config(), {}
        particle.velocity = velocity
        particle.position = new
        particle.key = particle.pending = self.key(new)
        return new

    def swarm_step(self, particle: Particle, velocity: Dict[str, Any]) -> Config:
        """One swarm update of every parameter of a copy of the position (velocities updated)."""
        m = self.manipulator
        assert m is not None
        gbest = self.best_config if self.best_config is not None else particle.best
        cand = m.copy(particle.position)
        for param in m.parameters:
            velocity[param.name] = self._param_step(param, cand, gbest, particle.best,
                                                    velocity.get(param.name, 0.0))
        return cand

    def _param_step(self, param: Parameter, cand: Config, gbest: Config, pbest: Config, v: Any) -> Any:
        ops = param.operators()
        rng = self.rng
        kw = dict(c=self.omega, c1=self.phi_g, c2=self.phi_l)
        if is_permutation(param):
            param.op3_swarm(cand, gbest, pbest, rng=rng, xchoice=self.crossover,
                            strength=self.strength, **kw)
            return 0.0
        if "op3_swarm_parallel" in ops:
            if not isinstance(v, list):
                v = 0.0
            return _clip_velocity(param.op3_swarm_parallel(cand, gbest, pbest, rng=rng, velocity=v, **kw))
        if "op3_swarm" in ops:
            if isinstance(v, list):
                v = 0.0
            return _clip_velocity(param.op3_swarm(cand, gbest, pbest, rng=rng, velocity=v, **kw))
        # a kind without a swarm operator: copy a best's value or keep, with odds omega:phi_g:phi_l
        src = rng.choices((None, gbest, pbest), weights=(self.omega, self.phi_g, self.phi_l))[0]
        if src is not None:
            param.set_value(cand, param.copy_value(param.get_value(src)))
        return 0.0

    def _turbulence(self, cand: Config) -> Config:
        """Local mutations of one or two parameters of ``cand`` (permutations preferred)."""
        m = self.manipulator
        assert m is not None
        params = m.parameters
        perms = [p for p in params if is_permutation(p)]
        for _ in range(self.rng.choice((1, 1, 2))):
            param = self.rng.choice(perms) if perms and self.rng.random() < 0.5 else self.rng.choice(params)
            mutate_param(param, cand, self.rng, normal=True, sigma=0.05)
        return cand

    def on_own_result(self, feedback: Feedback) -> None:
        """A particle's position was measured: free it and update its personal best."""
        for particle in self.particles:
            if particle.pending == feedback.key:
                particle.pending = None
                if feedback.value < particle.best_value:
                    particle.best, particle.best_value = particle.position, feedback.value
                return


def register(registry: Any) -> None:
    """Register pso-OX1, pso-OX3, pso-PMX, pso-PX and pso-CX."""
    for xc in ("OX1", "OX3", "PMX", "PX", "CX"):
        registry.register(f"pso-{xc}", lambda xc=xc: PSO(crossover=xc),
                          f"particle swarm (30 particles; permutations cross toward the bests with {xc})")
