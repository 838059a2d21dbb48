"""The bookkeeping every population technique needs (:class:`EvolutionaryTechnique`) and its
population members (:class:`Member`, :func:`tournament` selection).

:class:`EvolutionaryTechnique` keeps the keys of every configuration seen (own and others' results),
its own requests in flight (several at once, results in any order), an optional elite of the best
results, and :meth:`EvolutionaryTechnique.finish`, which turns a child generator into a legal,
feasible and preferably new configuration.  Used by :mod:`.genetic`, :mod:`.global_ga`,
:mod:`.differential_evolution`, :mod:`.pso`, :mod:`.binary_ga` and :mod:`.nsga2`.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Set

from ..parameters import ConfigurationManipulator
from .base import Config, Feedback, Proposal, Technique
from .variation import mutate_param


class EvolutionaryTechnique(Technique):
    """Base of the population techniques: tracks what has been seen and what is in flight.

    Subclasses implement ``desired_configuration`` (called by :meth:`propose`) and
    :meth:`on_own_result` (called once per own completed request, in completion order, whatever
    order the requests were made in).  Every result -- own or another technique's -- updates
    ``best_config``/``best_value`` and the set of seen keys, and is passed to :meth:`on_result`.
    """

    #: how many of the best distinct OK results (any technique's) :attr:`elite` keeps
    elite_size: int = 0

    def __init__(self, name: Optional[str] = None, max_tries: int = 20) -> None:
        super().__init__(name)
        self.max_tries = max_tries

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        """Called once before the first proposal; resets all state."""
        super().bind(manipulator, rng, path)
        self.seen: Set[str] = set()
        self.pending: Dict[str, int] = {}
        self.elite: List[Member] = []

    # ---- keys -----------------------------------------------------------------------------
    def key(self, cfg: Config) -> str:
        """Stable hash of a legal configuration (equal to the driver's Feedback.key); the configuration
        :meth:`finish` has just returned is not hashed again."""
        made = self._made
        if made is not None and made[0] is cfg:
            return made[1]
        assert self.manipulator is not None
        return self.manipulator.hash_valid(cfg)

    def is_new(self, key: str) -> bool:
        """True when no result for ``key`` has been seen and none of ours is in flight."""
        return key not in self.seen and key not in self.pending

    @property
    def in_flight(self) -> int:
        """Own requests whose results have not arrived yet."""
        return sum(self.pending.values())

    def finish(self, make: Callable[[], Config], tries: Optional[int] = None,
               mutate_duplicates: bool = True) -> Config:
        """Call ``make()`` until it gives a feasible configuration not seen before.

        A feasible duplicate gets extra :func:`mutate_param` moves (when ``mutate_duplicates``);
        after ``tries`` attempts the last feasible candidate is returned (the driver answers a
        duplicate at once), and when none was feasible a random feasible configuration.
        """
        m = self.manipulator
        assert m is not None
        self._made = None  # a hash remembered earlier is of another proposal
        fallback: Optional[Config] = None
        for attempt in range(tries or self.max_tries):
            cfg = make()
            params = m.parameters
            if mutate_duplicates and attempt and params and m.is_feasible(cfg) \
                    and not self.is_new(self.key(cfg)):
                for _ in range(attempt):
                    mutate_param(self.rng.choice(params), cfg, self.rng)
            if not m.is_feasible(cfg):
                continue
            key = self.key(cfg)
            if self.is_new(key):
                self.remember_key(cfg, key)  # hashed once: the proposal carries it
                return cfg
            if fallback is None:
                fallback = cfg
        return fallback if fallback is not None else m.random(self.rng)

    # ---- protocol ---------------------------------------------------------------------------
    def propose(self) -> Optional[Proposal]:
        """Next configuration to measure (recorded as in flight), or None while waiting."""
        cfg = self.desired_configuration()
        if cfg is None:
            return None
        key = self.key(cfg)
        self.take_key(cfg)
        self.pending[key] = self.pending.get(key, 0) + 1
        return Proposal(cfg, self.path, key)

    def observe(self, feedback: Feedback) -> None:
        """Receive every completed result; own ones go to :meth:`on_own_result` too."""
        super().observe(feedback)
        self.seen.add(feedback.key)
        if self.elite_size > 0:
            self._update_elite(feedback)
        self.on_result(feedback)
        count = self.pending.get(feedback.key, 0)
        if self.is_own(feedback) and count:
            if count == 1:
                del self.pending[feedback.key]
            else:
                self.pending[feedback.key] = count - 1
            self.on_own_result(feedback)

    def _update_elite(self, feedback: Feedback) -> None:
        """Keep the ``elite_size`` best distinct OK configurations seen, best first."""
        if not feedback.ok:
            return
        if len(self.elite) >= self.elite_size and feedback.value >= member_value(self.elite[-1]):
            return  # checked before the scan for its key: most results are not better than the worst
        if any(mem.key == feedback.key for mem in self.elite):
            return
        assert self.manipulator is not None
        self.elite.append(Member(self.manipulator.copy(feedback.config), feedback.key, feedback.value))
        self.elite.sort(key=member_value)
        del self.elite[self.elite_size:]

    def on_result(self, feedback: Feedback) -> None:
        """Hook called for every result (own or not) before :meth:`on_own_result`."""

    def on_own_result(self, feedback: Feedback) -> None:
        """Hook called once for each own completed request."""

    def random_config(self) -> Config:
        """A random feasible configuration."""
        assert self.manipulator is not None
        return self.manipulator.random(self.rng)


@dataclass
class Member:
    """A population member: its configuration, key and value (None until its result arrives)."""

    config: Config
    key: str
    value: Optional[float] = None


def tournament(rng: random.Random, pool: Sequence[Member], size: int) -> Member:
    """The best of ``size`` members drawn with replacement from ``pool`` (unknown value = inf)."""
    best = rng.choice(pool)
    for _ in range(size - 1):
        other = rng.choice(pool)
        if member_value(other) < member_value(best):
            best = other
    return best


def member_value(member: Member) -> float:
    """The member's value, inf while its result has not arrived (for sorting and selection)."""
    return math.inf if member.value is None else member.value
