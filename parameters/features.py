"""Structural feature maps: a configuration as a sparse vector of features a linear model can weigh.

Many objectives are close to additive over structural features of a configuration: a tour's length is
the sum over its adjacent pairs, a loop order's cost depends on which loop precedes which, a categorical
choice adds its own effect.  A :class:`FeatureMap` turns one parameter's value into the indices and
values of its active features; a :class:`FeatureLayout` places the maps of a whole space side by side
and groups the features (one group per kind and parameter) so that a model can give each group its own
prior scale.

Feature kinds per parameter type:

* permutations (and schedules): ``adjacency`` (the unordered pair of neighbours, the last element next to
  the first, so a closed tour's length is exactly additive over them), ``direction`` (the ordered pair:
  ``a`` directly before ``b``, for asymmetric costs) and ``precedence`` (``a`` anywhere before ``b``, for
  orders; by default only for permutations of at most :data:`PRECEDENCE_MAX_ITEMS` items);
* enums, switches and booleans: one-hot;
* numbers with a unit-cube mapping: ``v`` and ``v**2`` of the centred unit value ``v = 2 u - 1`` (a
  quadratic per parameter; :func:`centred`);
* arrays: their elements' features (booleans one per element, numbers ``v`` and ``v**2``);
* across numbers, on request (``interactions=True``): the products ``v_i v_j`` of every pair
  (``interaction``), so that with each number's ``v`` and ``v**2`` a model is a full quadratic response
  surface (second-order terms, as BOCS has).  Off by default: StructuralSurrogate measured no gain from
  them on 4-d Rosenbrock (100 seeds at 100 evaluations: median 10.5 with them, 10.3 without), losses
  on two recorded spaces fitting the raw values (rise_harris@table 1.29 against 1.15, taco_ttv@table
  4.29 against 4.18), and on the five TACO loop-order tables, fitting the logarithm, medians higher by
  more than 2 % in 4 of 15 (table, budget) cells and lower in 8; higher in 5 and lower in 6 with a
  quarter of the prior variance, higher in 8 and lower in 2 when chosen per run by which model
  predicts the recent results better; with the quarter prior and the products' weights at their
  posterior mean in the search's sample, higher in 3 and lower in 4 of the 9 cells of taco_sddmm,
  taco_mttkrp and taco_spmv (taco_spmv@table at 60 +14.8 %), and higher in 6 and lower in 2 with the
  numbers' minimum also limited to the range the results cover (docs/benchmarks/structural.md);
* anything else (selectors): no features; a model then ignores the parameter.

Called by model-based techniques (``StructuralSurrogate``) once per observed or candidate configuration.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .arrays import BooleanArray
from .base import Parameter, PrimitiveParameter
from .categorical import BooleanParameter, _IndexedChoice
from .numeric_arrays import _BoundedArray
from .permutation import PermutationParameter

#: precedence features by default only up to this many items (their count grows as n**2 / 2)
PRECEDENCE_MAX_ITEMS = 32

Active = Tuple[np.ndarray, np.ndarray]  # (feature indices, feature values), both 1-D


def centred(u: Any) -> Any:
    """A number's basis value ``v = 2 u - 1`` in ``[-1, 1]`` from its unit value ``u`` in ``[0, 1]``.

    Centred, ``v`` and ``v**2`` are nearly uncorrelated over the range (``u`` and ``u**2`` correlate at
    0.97), so a model's independent priors on their weights do not shrink a curvature that ``u`` and
    ``u**2`` could only express as the difference of two large weights (on 4-d Rosenbrock, given the
    default bandit's first 40 results, the posterior mean's minimum in a trust region beat the
    incumbent in 11 % of tries with ``u``, ``u**2`` and in 57 % with ``v``, ``v**2``)."""
    return 2.0 * u - 1.0


@dataclass(frozen=True)
class FeatureGroup:
    """A contiguous block ``[start, stop)`` of features of one kind of one parameter."""

    parameter: str
    kind: str
    start: int
    stop: int
    active: int  # features active in a typical configuration (scales the group's prior)

    @property
    def size(self) -> int:
        return self.stop - self.start


class FeatureMap:
    """Features of one parameter.  ``kinds`` lists ``(kind, size, active)`` blocks in order."""

    def __init__(self, parameter: Parameter, kinds: Sequence[Tuple[str, int, int]]) -> None:
        self.parameter = parameter
        self.kinds = list(kinds)
        self.size = sum(size for _, size, _ in self.kinds)

    def active(self, value: Any) -> Active:
        """Indices (relative to this map) and values of the features of ``value``."""
        raise NotImplementedError


def pair_index(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """Index of the unordered pair ``{a, b}`` (``a != b``) among the ``n*(n-1)/2`` pairs of ``n`` items."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return lo * n - lo * (lo + 1) // 2 + (hi - lo - 1)


class PermutationFeatures(FeatureMap):
    """Adjacency, direction and (optionally) precedence indicators of a permutation."""

    parameter: PermutationParameter

    def __init__(self, parameter: PermutationParameter, precedence: Optional[bool] = None) -> None:
        n = parameter.size
        pairs = n * (n - 1) // 2
        if precedence is None:
            precedence = n <= PRECEDENCE_MAX_ITEMS
        kinds = [("adjacency", pairs, n), ("direction", n * n, n)]
        if precedence:
            kinds.append(("precedence", pairs, pairs // 2 or 1))
        super().__init__(parameter, kinds)
        self.n = n
        self.pairs = pairs
        self.precedence = precedence
        self._index = {v: i for i, v in enumerate(parameter.items)}
        self._ones = np.ones(2 * n + (pairs if precedence else 0))
        if precedence:
            self._upper = np.triu_indices(n, 1)

    def positions(self, value: Sequence[Any]) -> np.ndarray:
        """The items of ``value`` as item indices (``0 .. n-1``)."""
        index = self._index
        return np.fromiter((index[v] for v in value), dtype=np.int64, count=self.n)

    def active(self, value: Any) -> Active:
        t = self.positions(value)
        nxt = np.roll(t, -1)
        parts = [pair_index(t, nxt, self.n), self.pairs + t * self.n + nxt]
        if self.precedence:
            i, j = self._upper  # positions i < j: item t[i] precedes t[j]
            a, b = t[i], t[j]
            before = a < b  # feature of pair {a, b} (a < b) is "a before b"
            parts.append(self.pairs + self.n * self.n + pair_index(a[before], b[before], self.n))
        idx = np.concatenate(parts)
        return idx, self._ones[:idx.size]


class OneHotFeatures(FeatureMap):
    """One indicator per option of an enum, switch or boolean."""

    parameter: BooleanParameter | _IndexedChoice

    def __init__(self, parameter: BooleanParameter | _IndexedChoice) -> None:
        self.count = 2 if isinstance(parameter, BooleanParameter) else parameter._count()
        super().__init__(parameter, [("one-hot", self.count, 1)])

    def option_index(self, value: Any) -> int:
        if isinstance(self.parameter, BooleanParameter):
            return int(bool(value))
        i = self.parameter._find(value, strict=False)
        return 0 if i is None else i

    def option(self, index: int) -> Any:
        """The value whose indicator is ``index`` (the inverse of :meth:`option_index`)."""
        if isinstance(self.parameter, BooleanParameter):
            return bool(index)
        return self.parameter._option(index)

    def active(self, value: Any) -> Active:
        return np.array([self.option_index(value)]), np.ones(1)


class UnitFeatures(FeatureMap):
    """``v`` and ``v**2`` of a number's centred unit-cube value (:func:`centred`)."""

    parameter: PrimitiveParameter

    def __init__(self, parameter: PrimitiveParameter) -> None:
        super().__init__(parameter, [("unit", 2, 2)])

    def active(self, value: Any) -> Active:
        v = centred(self.parameter.get_unit_value({self.parameter.name: value}))
        return np.array([0, 1]), np.array([v, v * v])


class ArrayFeatures(FeatureMap):
    """Per element: a boolean indicator, or ``v`` and ``v**2`` of a bounded number (:func:`centred`)."""

    parameter: BooleanArray | _BoundedArray

    def __init__(self, parameter: BooleanArray | _BoundedArray) -> None:
        self.width = 1 if isinstance(parameter, BooleanArray) else 2
        super().__init__(parameter, [("elements", parameter.count * self.width, parameter.count)])

    def active(self, value: Any) -> Active:
        p = self.parameter
        if isinstance(p, BooleanArray):  # width 1
            on = np.flatnonzero(np.asarray(value, dtype=bool))
            return on, np.ones(on.size)
        span = float(p.max_value) - float(p.min_value)
        v = centred((np.asarray(value, dtype=float) - float(p.min_value)) / (span or 1.0))
        idx = np.arange(2 * p.count)
        return idx, np.column_stack([v, v * v]).ravel()


class InteractionFeatures:
    """The products ``v_i v_j`` (``i < j``) of the centred unit values of the numbers in ``maps``.

    Not a map of one parameter: :class:`FeatureLayout` gives it the centred values of a configuration's
    numbers (the first feature of each :class:`UnitFeatures`)."""

    kind = "interaction"

    def __init__(self, maps: Sequence[UnitFeatures], offsets: Sequence[int]) -> None:
        self.maps = list(maps)
        self.offsets = list(offsets)  # each number's features in the layout (v, then v**2)
        self.first, self.second = np.triu_indices(len(self.maps), 1)
        self.size = int(self.first.size)

    def active(self, v: np.ndarray) -> Active:
        """Indices (relative to this block) and values of the products of the centred values ``v``."""
        return np.arange(self.size), v[self.first] * v[self.second]

    def coupling(self, w: np.ndarray) -> np.ndarray:
        """The symmetric matrix ``C`` (zero diagonal) with ``v' C v / 2`` the products weighed by ``w``:
        ``(C v)_k`` is what the products add to number ``k``'s linear weight at ``v``."""
        C = np.zeros((len(self.maps), len(self.maps)))
        C[self.first, self.second] = w
        return C + C.T


def feature_map(parameter: Parameter, precedence: Optional[bool] = None) -> Optional[FeatureMap]:
    """The feature map of ``parameter``'s type, or None for types without structural features."""
    if isinstance(parameter, PermutationParameter):
        return PermutationFeatures(parameter, precedence)
    if isinstance(parameter, (BooleanParameter, _IndexedChoice)):
        return OneHotFeatures(parameter)
    if isinstance(parameter, PrimitiveParameter):
        return UnitFeatures(parameter)
    if isinstance(parameter, (BooleanArray, _BoundedArray)):
        return ArrayFeatures(parameter)
    return None


class FeatureLayout:
    """The feature maps of a space, side by side: ``encode(config)`` gives the whole sparse vector."""

    def __init__(self, parameters: Sequence[Parameter], precedence: Optional[bool] = None,
                 interactions: bool = False) -> None:
        self.maps: List[FeatureMap] = []
        self.offsets: List[int] = []
        self.groups: List[FeatureGroup] = []
        self.unmodelled: List[str] = []
        size = 0
        for param in parameters:
            fmap = feature_map(param, precedence)
            if fmap is None:
                self.unmodelled.append(param.name)
                continue
            self.maps.append(fmap)
            self.offsets.append(size)
            for kind, width, active in fmap.kinds:
                self.groups.append(FeatureGroup(param.name, kind, size, size + width, active))
                size += width
        self.interaction: Optional[InteractionFeatures] = None
        self.size = self._add_interactions(size, interactions)

    def _add_interactions(self, size: int, interactions: bool) -> int:
        """Place the pairwise products of the numbers after the maps when ``interactions`` (and there
        are at least two numbers); returns the layout's size."""
        numbers = [k for k, fmap in enumerate(self.maps) if isinstance(fmap, UnitFeatures)]
        if not interactions or len(numbers) < 2:
            return size
        units = [fmap for fmap in self.maps if isinstance(fmap, UnitFeatures)]
        block = InteractionFeatures(units, [self.offsets[k] for k in numbers])
        self.interaction, self._numbers, self.interaction_offset = block, numbers, size
        self.groups.append(FeatureGroup("*", block.kind, size, size + block.size, block.size))
        return size + block.size

    def encode(self, config: Mapping[str, Any]) -> Active:
        """Indices and values of the active features of ``config`` (indices ascending per map)."""
        if not self.maps:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        idx, val = [], []
        for fmap, offset in zip(self.maps, self.offsets):
            i, v = fmap.active(config[fmap.parameter.name])
            idx.append(np.asarray(i, dtype=np.int64) + offset)
            val.append(np.asarray(v, dtype=float))
        if self.interaction is not None:
            centre = np.array([val[k][0] for k in self._numbers])
            i, v = self.interaction.active(centre)
            idx.append(i + self.interaction_offset)
            val.append(v)
        return np.concatenate(idx), np.concatenate(val)

    def dense(self, config: Mapping[str, Any]) -> np.ndarray:
        """The full feature vector of ``config`` (for tests and small spaces)."""
        out = np.zeros(self.size)
        idx, val = self.encode(config)
        np.add.at(out, idx, val)
        return out
