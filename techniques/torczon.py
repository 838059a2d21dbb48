"""Torczon's multi-directional search (OpenTuner's Random/Regular/Right/MultiTorczon).

OpenTuner 0.8.8's Torczon family crashes on Python 3 (``list.sort(cmp=...)``); this one runs.
"""
from __future__ import annotations

from typing import Any, Callable, Generator, List, Optional

from .base import Config, Technique
from .meta import RecyclingMetaTechnique
from .nelder_mead import SimplexTechnique, Vertex


class Torczon(SimplexTechnique):
    """Torczon multi-directional search on the unit cube of primitive parameters.

    Each step reflects every vertex through the best one (``x0 + alpha (x0 - xi)``), all in one
    batch.  If a reflected vertex beats the best, the expanded simplex (factor ``gamma``) is
    tried too and the better of the two is kept; otherwise the simplex contracts toward the best
    vertex by ``beta``.  Defaults alpha=1, gamma=2, beta=0.5 (OpenTuner's).  Infeasible points are
    repaired toward the best vertex.  See :class:`~.nelder_mead.SimplexTechnique` for initial
    simplexes, complex parameters (taken from the best vertex, mutated with small probability),
    the mutation fallback of spaces without primitive parameters, and restarts.
    """

    description = "Torczon multi-directional search on numeric parameters (random initial simplex)"

    def __init__(self, name: Optional[str] = None, initial: str = "random", alpha: float = 1.0,
                 gamma: float = 2.0, beta: float = 0.5, **kw: Any) -> None:
        super().__init__(name, initial=initial, **kw)
        self.alpha, self.gamma, self.beta = alpha, gamma, beta

    def scaled(self, s: List[Vertex], scale: float) -> List[Vertex]:
        """The simplex mapped by ``x0 + scale (x0 - xi)`` around the best vertex ``s[0]``."""
        best = s[0]
        return [best] + [self.point([b + scale * (b - x) for b, x in zip(best.vec, v.vec)],
                                    best.vec, best.cfg) for v in s[1:]]

    def step(self, s: List[Vertex]) -> Generator[List[Config], List[float], int]:
        """One step on the sorted simplex ``s`` (replaced in place); returns how many points were new."""
        best = s[0]
        reflected = self.scaled(s, self.alpha)
        yield from self.evaluate(reflected[1:])
        novel = self.last_novel
        self.sort(reflected)
        if reflected[0] is not best and reflected[0].value < best.value:
            expanded = self.scaled(s, self.gamma)
            yield from self.evaluate(expanded[1:])
            novel += self.last_novel
            self.sort(expanded)
            s[:] = expanded if expanded[0].value < reflected[0].value else reflected
        else:
            contracted = self.scaled(s, -self.beta)
            yield from self.evaluate(contracted[1:])
            novel += self.last_novel
            self.sort(contracted)
            s[:] = contracted
        return novel


_NAMES = {"random": "RandomTorczon", "right": "RightTorczon", "regular": "RegularTorczon"}


def _torczon(initial: str) -> Callable[[], Technique]:
    return lambda: Torczon(_NAMES[initial], initial=initial)


def multi_torczon() -> RecyclingMetaTechnique:
    """OpenTuner's MultiTorczon: Right, Random and Regular Torczon in round robin, the worst
    restarted from the global best every 100 requests."""
    return RecyclingMetaTechnique([_torczon("right"), _torczon("random"), _torczon("regular")],
                                  name="MultiTorczon")


def register(registry: Any) -> None:
    """Register RandomTorczon, RegularTorczon, RightTorczon and MultiTorczon."""
    from .builtin import add_module
    add_module(registry, "torczon")
