"""Compound measured moves: several of the incumbent's ranked moves measured in one evaluation.

A tour's value is the sum of its steps.  Two moves of the incumbent that change no common step (their
changed positions are disjoint and not adjacent, cyclically) commute, and the change of the tour with
both applied is the sum of their changes; so one evaluation of the incumbent with ``k`` such moves
applied at once measures the sum of their ``k`` changes.  When the ranking's hit rate is high that
advances ``k`` moves per evaluation; when it is low most groups fail.  This is adaptive group testing:

* a *fresh* group takes the best-ranked move of the list and the next best-ranked moves that change
  none of its steps, up to :attr:`CompoundMoves.size` (looking no further than :data:`WINDOW` times
  that far down the list);
* a fresh group that shortens the tour doubles the size, one that does not halves it, within
  ``1 .. MAX_SIZE``;
* a group that does not shorten the tour is split into halves by rank, measured before any fresh
  group: the first half is measured, and the second half's sum is then known (the group's minus the
  first half's), so it is measured only when that sum shortens the tour, and otherwise split in turn
  without an evaluation; a single move whose change is known so is recorded as measured.

Bookkeeping: a group's result fixes the sum of its changes only, so its moves are not recorded as
measured one by one (a compound's own change, the union of its moves' steps, is); a move's change is
recorded when it is measured alone or known from a sum and a measured part.  A group stays valid for a
later incumbent as long as that incumbent has the same items at every position whose steps the
group's moves change (a half of a group whose other half became the incumbent); other groups are
dropped and their moves are ranked again from the new incumbent.

Called by :class:`~.measured.MeasuredMoves` (the measured local search of
:class:`~.metric.MetricStructuralSurrogate`) when it takes the next move from its list, and when the
technique observes a result.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import numpy as np

from ...parameters.features import PermutationFeatures
from ..base import Config

#: the largest group of moves measured at once
MAX_SIZE = 8

#: a fresh group looks this many times its size down the list for moves that change none of its steps
WINDOW = 4

#: the steps (item to next item) a move removes and those it adds
Steps = Tuple[FrozenSet[Tuple[int, int]], FrozenSet[Tuple[int, int]]]

#: a move of one permutation: its parameter's name, the steps it removes and the steps it adds
Change = Tuple[str, Steps]


@dataclass
class Move:
    """One ranked move of an incumbent tour ``source``: ``alone`` is the configuration the ranked list
    holds (``source`` with this move applied)."""

    alone: Config
    change: Change
    source: np.ndarray          # the incumbent's tour it was made from
    positions: np.ndarray       # the positions whose item it changes
    items: np.ndarray           # the items it puts there
    steps: FrozenSet[int]       # the positions p whose step (item at p to the next) it changes
    anchor: np.ndarray          # the positions those steps join

    @property
    def name(self) -> str:
        return self.change[0]


@dataclass
class Group:
    """Moves measured together; ``total`` the sum of their changes once measured or inferred."""

    moves: List[Move]
    fresh: bool = False                 # taken from the ranked list (not a half of a failed group)
    total: Optional[float] = None
    base: float = 0.0                   # the incumbent's value the group was applied to
    partner: Optional["Group"] = None   # the second half, whose sum this half's result fixes
    whole: Optional[float] = None       # the sum of this half and its partner
    proposed: bool = field(default=False)


def aligned(t: np.ndarray, moved: np.ndarray) -> np.ndarray:
    """``moved`` rotated so that the items a local move of ``t`` leaves in place keep their positions
    (the rotation most items agree on)."""
    n = t.size
    where = np.empty(n, dtype=np.intp)
    where[moved] = np.arange(n)
    shift = (where[t] - np.arange(n)) % n
    return np.roll(moved, -int(np.bincount(shift, minlength=n).argmax()))


def make_move(t: np.ndarray, moved: np.ndarray, alone: Config, change: Change) -> Move:
    """The :class:`Move` of incumbent tour ``t`` to ``moved`` (item indices)."""
    n = t.size
    after = aligned(t, moved)
    positions = np.flatnonzero(after != t)
    steps = np.union1d(positions, (positions - 1) % n)
    anchor = np.union1d(steps, (steps + 1) % n)
    return Move(alone, change, t, positions, after[positions], frozenset(steps.tolist()), anchor)


def compose(t: np.ndarray, moves: Sequence[Move]) -> np.ndarray:
    """``t`` with every one of ``moves`` (of ``t``'s permutation, no common step) applied."""
    out = t.copy()
    for move in moves:
        out[move.positions] = move.items
    return out


def disjoint(moves: Sequence[Move], move: Move) -> bool:
    """Whether ``move`` changes none of the steps of ``moves``."""
    return all(m.name != move.name or not (m.steps & move.steps) for m in moves)


def applies(move: Move, tours: Dict[str, np.ndarray]) -> bool:
    """Whether ``move`` changes the same steps of the incumbent ``tours`` as of its source: the
    incumbent has the source's items at every position those steps join."""
    t = tours.get(move.name)
    return t is not None and t.size == move.source.size and \
        bool(np.array_equal(t[move.anchor], move.source[move.anchor]))


def union(moves: Sequence[Move]) -> Change:
    """The change of ``moves`` applied together: the union of the steps each removes and adds."""
    removed: FrozenSet[Tuple[int, int]] = frozenset().union(*(m.change[1][0] for m in moves))
    added: FrozenSet[Tuple[int, int]] = frozenset().union(*(m.change[1][1] for m in moves))
    return moves[0].name, (removed, added)


def halves(group: Group, total: float) -> List[Group]:
    """``group``'s moves in two halves by rank, the first to be measured, the second's sum inferred
    from the first's and ``total``."""
    cut = (len(group.moves) + 1) // 2
    second = Group(group.moves[cut:])
    return [Group(group.moves[:cut], partner=second, whole=total), second]


def adapted(size: int, shortened: bool) -> int:
    """The group size after a fresh group of ``size`` shortened the tour (doubled) or did not
    (halved), within ``1 .. MAX_SIZE``."""
    return min(2 * size, MAX_SIZE) if shortened else max(size // 2, 1)


def _maps_by_name(maps: Sequence[Any]) -> Dict[str, PermutationFeatures]:
    return {m.parameter.name: m for m in maps if isinstance(m, PermutationFeatures)}


def _tour(fmap: PermutationFeatures, cfg: Config) -> np.ndarray:
    return np.asarray(fmap.positions(fmap.parameter.get_value(cfg)))


class CompoundMoves:
    """The groups of a measured local search: the adaptive size, the groups awaiting their result and
    the halves of failed groups waiting to be measured (see the module docstring)."""

    def __init__(self) -> None:
        self.size = 1
        self.retry: Deque[Group] = deque()
        self.flight: Dict[str, Group] = {}

    def next(self, moves: Deque[Tuple[Config, Change]], incumbent: Config, value: float, maps: Sequence[Any],
             manipulator: Any, unseen: Callable[[str], bool], measured: Set[Change]) -> Optional[Tuple[Config, str]]:
        """The next configuration of the measured local search and its hash, or None when the ranked
        list ``moves`` (configurations of the incumbent's moves and their changes, best first) and the
        waiting groups are spent: a waiting half, else a fresh group.  A move proposed alone on the
        incumbent it was ranked from is its ranked configuration; a group, the incumbent with its moves
        applied.  ``measured`` (the changes known) gains the proposal's change, and a waiting move's
        inferred one.  Called by the technique for each measured move it proposes."""
        by_name = _maps_by_name(maps)
        tours = {name: _tour(fmap, incumbent) for name, fmap in by_name.items()}
        self.retry = deque(g for g in self.retry if all(applies(m, tours) for m in g.moves))
        while True:
            group = self._waiting(measured)
            if group is None:
                chosen = self._fresh(moves, tours, by_name, measured)
                if not chosen:
                    return None
                group = Group(chosen, fresh=True)
            made = self._configure(group, incumbent, tours, by_name, manipulator, unseen, measured)
            if made is not None:
                group.base, group.proposed = value, True
                self.flight[made[1]] = group
                return made

    def _fresh(self, moves: Deque[Tuple[Config, Change]], tours: Dict[str, np.ndarray],
               by_name: Dict[str, PermutationFeatures], measured: Set[Change]) -> List[Move]:
        """Up to :attr:`size` moves of the ranked list ``moves`` (each of a change not measured and
        not waiting in a group), best-ranked first, of one permutation, no two changing a common step;
        taken moves leave the list, the others' stay unless measured or waiting."""
        chosen: List[Move] = []
        groups = list(self.retry) + list(self.flight.values())
        reserved = {m.change for g in groups for m in g.moves}
        i, looked = 0, 0
        while i < len(moves) and len(chosen) < self.size and looked < WINDOW * self.size:
            cfg, change = moves[i]
            if change in reserved or change in measured or change[0] not in tours:
                del moves[i]
                continue
            looked += 1
            if not chosen or change[0] == chosen[0].name:
                move = make_move(tours[change[0]], _tour(by_name[change[0]], cfg), cfg, change)
                if disjoint(chosen, move):
                    chosen.append(move)
                    del moves[i]
                    continue
            i += 1
        return chosen

    def _waiting(self, measured: Set[Change]) -> Optional[Group]:
        """The first waiting group to measure: one whose sum is known not to shorten the tour is split
        (or, a single move, its change recorded in ``measured``) without an evaluation."""
        while self.retry:
            group = self.retry.popleft()
            if group.total is None or group.total < 0:
                return group
            if len(group.moves) == 1:
                measured.add(group.moves[0].change)
            else:
                self.retry.extendleft(reversed(halves(group, group.total)))
        return None

    @staticmethod
    def _configure(group: Group, incumbent: Config, tours: Dict[str, np.ndarray],
                   by_name: Dict[str, PermutationFeatures], manipulator: Any,
                   unseen: Callable[[str], bool], measured: Set[Change]) -> Optional[Tuple[Config, str]]:
        """The configuration of ``group`` and its hash, ``measured`` gaining its change; None when it
        was measured or is awaited."""
        first = group.moves[0]
        if len(group.moves) == 1 and np.array_equal(tours[first.name], first.source):
            cfg = first.alone
        else:
            cfg = manipulator.copy(incumbent)
            fmap = by_name[first.name]
            items = fmap.parameter.items
            fmap.parameter.set_value(cfg, [items[i] for i in compose(tours[first.name], group.moves)])
        key = manipulator.hash_valid(cfg)
        change = first.change if len(group.moves) == 1 else union(group.moves)
        if not unseen(key) or change in measured:
            return None
        measured.add(change)
        return cfg, key

    def observe(self, key: str, ok: bool, value: float) -> None:
        """Note the result of the proposal hashed ``key`` when it is a group's: adapt the size (a fresh
        group), fix the partner half's sum (a first half), and queue a failed group's halves.  Called
        by the technique for each result."""
        group = self.flight.pop(key, None)
        if group is None:
            return
        total = value - group.base if ok and np.isfinite(value) else None
        if group.fresh:
            self.size = adapted(self.size, total is not None and total < 0)
        if group.partner is not None and group.whole is not None and total is not None \
                and not group.partner.proposed:
            group.partner.total = group.whole - total
        group.total = total
        if total is not None and total >= 0 and len(group.moves) > 1:
            self.retry.extendleft(reversed(halves(group, total)))

    def state_dict(self) -> Dict[str, Any]:
        """The group size (the waiting groups are rebuilt: their moves are ranked again on resume)."""
        return {"size": self.size}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.size = min(max(int(state.get("size", 1)), 1), MAX_SIZE)
