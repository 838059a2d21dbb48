"""The measured local search of an accepted embedding: the incumbent's moves in turn, each change once.

Once :class:`~.identification.MetricBayesLinear` accepted an embedding, the technique
(:class:`~.metric.MetricStructuralSurrogate`) takes every suggestion while a list of
:class:`MeasuredMoves` has one: the :data:`MOVES` 2-opt / or-opt moves of the incumbent whose value
change the embedding plus a residual fitted to the results since the acceptance
(:meth:`~.identification.MetricBayesLinear.local_weights`) puts lowest, best first, the list renewed
at each new incumbent and each refit of the embedding.  The embedding's errors are largest on the
short steps that decide the best tour, so from a local optimum of the embedding these moves are where
its errors hide (ftv170: 8 of the 10 moves it ranks first from its searched tour shorten the tour,
none of the posterior mean's 10), and the measured tours, which differ in a few steps, pin those
errors down.  A tour's value is the sum of its steps, so a move's change (the steps it removes and
adds, :func:`steps_changed`) is measured once in a run: a move whose change was measured from an
earlier incumbent is skipped.  On a directed cost (:mod:`.direction`) the lists hold only moves that
keep every section's orientation (or-opt and longer section moves, :mod:`.segments`), each of which
changes three steps.

Called by :class:`~.metric.MetricStructuralSurrogate` when it proposes after the acceptance.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Callable, Deque, FrozenSet, List, Optional, Set, Tuple

import numpy as np

from ...parameters.features import PermutationFeatures
from ..base import Config
from .segments import ranked_directed_moves
from .tours import ranked_moves

#: moves of the incumbent, ranked by the accepted embedding and the residual, measured in turn (ftv170,
#: continued from an acceptance at 1,111 random results to 3,000: 64 moves, whose lists were often
#: spent, 1.390 x the optimum; 256 moves 1.261; 1,024, never spent, 1.257)
MOVES = 256

#: the steps (item to next item) a move removes and those it adds
Steps = Tuple[FrozenSet[Tuple[int, int]], FrozenSet[Tuple[int, int]]]

#: a move of one permutation: its parameter's name, the steps it removes and the steps it adds
Change = Tuple[str, Steps]


def steps_changed(t: np.ndarray, moved: np.ndarray) -> Steps:
    """The steps (item to next item, the last to the first) of ``t`` that ``moved`` lacks, and those
    it adds."""
    before = set(zip(t.tolist(), np.roll(t, -1).tolist()))
    after = set(zip(moved.tolist(), np.roll(moved, -1).tolist()))
    return frozenset(before - after), frozenset(after - before)


def set_tour(fmap: PermutationFeatures, cfg: Config, t: np.ndarray) -> None:
    """Set ``fmap``'s permutation in ``cfg`` to the item indices ``t``."""
    items = fmap.parameter.items
    fmap.parameter.set_value(cfg, fmap.parameter._repair([items[i] for i in t]))


class MeasuredMoves:
    """One run's list of the incumbent's moves still to propose and the record of the changes proposed
    so far (made at the technique's bind)."""

    def __init__(self) -> None:
        self.of: Optional[Tuple[str, int]] = None     # the incumbent and fit whose moves are listed
        self.queue: Deque[Tuple[Config, Change]] = deque()
        self.changes: Set[Change] = set()              # the changes of the moves proposed so far

    def renew(self, of: Tuple[str, int], manipulator: Any, incumbent: Config,
              embedded: List[Tuple[PermutationFeatures, np.ndarray]], directed: Optional[bool]) -> None:
        """Replace the list by the moves of ``incumbent`` (``of``: its key and the embedding's fits)
        under the cost matrices ``embedded`` (each embedded permutation's map and matrix): per
        permutation the :data:`MOVES` whose change the matrix puts lowest, lowest first
        (:func:`~.tours.ranked_moves`, or :func:`~.segments.ranked_directed_moves` without reversals
        when ``directed``).  Called when the incumbent or the embedding changed."""
        self.of, self.queue = of, deque()
        for fmap, C in embedded:
            t = np.asarray(fmap.positions(fmap.parameter.get_value(incumbent)))
            ranked = ranked_directed_moves(t, C, MOVES, False) if directed else ranked_moves(t, C, MOVES)
            for moved in ranked:
                cfg = manipulator.copy(incumbent)
                set_tour(fmap, cfg, moved)
                self.queue.append((cfg, (fmap.parameter.name, steps_changed(t, moved))))

    def next(self, manipulator: Any, known: Callable[[str], bool]) -> Optional[Tuple[Config, str]]:
        """The list's next move whose key (hashed by ``manipulator``) is not ``known`` (measured or
        awaited) and whose change was not proposed before, with its key; its change is recorded.  None
        once the list is spent."""
        while self.queue:
            cfg, change = self.queue.popleft()
            key = manipulator.hash_valid(cfg)
            if not known(key) and change not in self.changes:
                self.changes.add(change)
                return cfg, key
        return None
