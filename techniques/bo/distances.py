"""Per-parameter distances for the GP kernel, computed in bulk.

Each parameter gets a :class:`ParamEncoder` that turns a column of values (one per configuration)
into a numeric array, and computes the matrix of *squared* per-parameter distances ``d_i(x, x')**2``
between two such arrays, every entry in ``[0, 1]``.  The kernel then uses
``r**2 = sum_i d_i**2 / l_i**2`` (BaCO §3.2, eq. 2).

Distances per type (BaCO §4.1), on normalised values:

* int, float, log_int, log_float, pow2, ordinal: ``|u - u'|`` on the parameter's unit value
  (``get_unit_value``), so log-scaled and power-of-two parameters are compared on their log scale;
* bool, switch, enum: Hamming (0 when equal, 1 otherwise);
* permutation and schedule: Spearman (default), Kendall or Hamming, selectable per parameter,
  each normalised to ``[0, 1]`` by its maximum over all pairs of permutations:

  - Spearman ``sum_k (pos_k - pos'_k)**2 / (n (n**2 - 1) / 3)``,
  - Kendall ``#discordant item pairs / (n (n - 1) / 2)``,
  - Hamming ``#positions holding different items / n``;

  as in BaCO's implementation these semimetrics play the role of ``d_i**2`` (each is the squared
  Euclidean distance of an embedding: positions, pairwise order signs, position one-hots), so the
  Matérn kernel over the sum stays positive semi-definite;
* arrays: the mean per-element squared distance (``d_i**2 = mean_k (u_k - u'_k)**2`` on unit values
  for int/float arrays; the fraction of differing elements for boolean arrays), again a squared
  Euclidean embedding distance;
* selector: the mean of the Spearman distance of its order and the mean squared distance of its
  cutoffs on their log scale.

With ``ordinal_hamming`` a numeric parameter with 3-64 legal values also gets an
:class:`EqualityEncoder` channel (Hamming on its values) after the per-parameter channels;
:attr:`SpaceEncoder.param_index` maps every encoded channel to its parameter.  With ``ridge_channels``
the stack ends with the pair channels of :mod:`.ridges` (sums and differences of two parameters'
unit values), computed from the encoded arrays.

Hamming-type distances come from :func:`scipy.spatial.distance.cdist` (``"hamming"``), the others
from squared Euclidean distances of scaled embeddings, so no Python loop runs per pair.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Hashable, List, Optional, Sequence

import numpy as np
from scipy.spatial.distance import cdist

from ...parameters import (ArrayParameter, ConfigurationManipulator, Parameter, PermutationParameter,
                           PrimitiveParameter, SelectorParameter)
from ...parameters.value_keys import value_key as vkey  # the BO modules import vkey from here
from .ridges import RidgeChannels

PERMUTATION_DISTANCES = ("spearman", "kendall", "hamming")
_PLAIN = (int, float, str)


# ---- encoders --------------------------------------------------------------------------------
class ParamEncoder:
    """Encodes one parameter's values; :meth:`sqdist` returns squared distances in ``[0, 1]``."""

    metric = "sqeuclidean"

    def __init__(self, param: Parameter) -> None:
        self.param = param
        self.name = param.name

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        """A 2-D float array, one row per value (called for training and candidate sets)."""
        raise NotImplementedError

    def sqdist(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``(len(a), len(b))`` matrix of squared distances, clipped to ``[0, 1]``."""
        if a.shape[1] == 0:
            return np.zeros((a.shape[0], b.shape[0]))
        d = cdist(a, b, self.metric)
        return np.clip(d, 0.0, 1.0, out=d)


class UnitEncoder(ParamEncoder):
    """Primitive parameters: the unit value (vectorised for float kinds, cached per value otherwise)."""

    param: PrimitiveParameter
    _lo: float  # the float kinds' bounds (logarithms for log_float)
    _hi: float

    def __init__(self, param: PrimitiveParameter) -> None:
        super().__init__(param)
        self._cache: Dict[Hashable, float] = {}
        self._log: Optional[bool] = None
        if param.kind in ("float", "log_float"):
            lo, hi = param.legal_range()
            self._log = param.kind == "log_float"
            self._lo, self._hi = (math.log(lo), math.log(hi)) if self._log else (lo, hi)

    def unit(self, value: Any) -> float:
        """The unit value of one value (primitive values are never bools, so they key the cache)."""
        u = self._cache.get(value)
        if u is None:
            u = float(self.param.get_unit_value({self.name: value}))
            if len(self._cache) < 100000:
                self._cache[value] = u
        return u

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        if self._log is not None:
            x = np.asarray(values, dtype=float)
            if self._log:
                x = np.log(x)
            width = self._hi - self._lo
            u = np.clip((x - self._lo) / width, 0.0, 1.0) if width > 0 else np.full(len(values), 0.5)
            return u.reshape(-1, 1)
        return np.fromiter((self.unit(v) for v in values), float, len(values)).reshape(-1, 1)


class EqualityEncoder(UnitEncoder):
    """An extra Hamming channel for a numeric parameter with a small finite domain: 0 when two
    values are equal, 1 otherwise.  Beside the parameter's smooth distance it lets the GP learn
    effects of individual values (e.g. a block size that is good for hardware reasons while its
    neighbours are not); with a long fitted lengthscale the channel is effectively off."""

    metric = "hamming"


#: most values a categorical parameter may have
CATEGORY_LIMIT = 10 ** 7
#: numeric parameters with 3..this many legal values get an :class:`EqualityEncoder` channel when
#: the space encoder is built with ``ordinal_hamming``
EQUALITY_MAX_VALUES = 64


def _small_domain(param: Parameter) -> bool:
    if param.encoding != "unit" or param.kind in ("float", "log_float"):
        return False
    values = getattr(param, "values", None)
    if values is not None:
        return 3 <= len(values) <= EQUALITY_MAX_VALUES
    try:
        lo, hi = param.legal_range()  # type: ignore[attr-defined]  # a probe: a kind without one is not small
    except (AttributeError, TypeError, ValueError):
        return False
    return 3 <= hi - lo + 1 <= EQUALITY_MAX_VALUES


class CategoryEncoder(ParamEncoder):
    """Categorical kinds (bool, switch, enum): the index in the parameter's domain; Hamming distance."""

    metric = "hamming"

    def __init__(self, param: Parameter) -> None:
        super().__init__(param)
        options = param.domain(CATEGORY_LIMIT)
        if options is None:
            raise ValueError(f"BayesianOptimization cannot list the values of parameter {param.name!r} "
                             f"of kind {param.kind!r}; give it at most {CATEGORY_LIMIT} values")
        self._index = {vkey(v): i for i, v in enumerate(options)}
        self.options = options

    def index(self, value: Any) -> int:
        i = self._index.get(vkey(value))
        if i is None:
            i = self._index[vkey(self.param.normalize_value(value))]
        return i

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        return np.fromiter((self.index(v) for v in values), float, len(values)).reshape(-1, 1)


class PermutationEncoder(ParamEncoder):
    """Permutations and schedules with the Spearman, Kendall or Hamming semimetric."""

    def __init__(self, param: PermutationParameter, kind: str = "spearman") -> None:
        super().__init__(param)
        if kind not in PERMUTATION_DISTANCES:
            raise ValueError(f"permutation distance {kind!r} for {param.name!r} is unknown; "
                             f"use one of {PERMUTATION_DISTANCES}")
        self.kind = kind
        self.items = list(param.items)
        self.n = len(self.items)
        self._item_index = {vkey(v): i for i, v in enumerate(self.items)}
        plain = all(type(v) in _PLAIN for v in self.items)
        self._raw_index = {v: i for i, v in enumerate(self.items)} if plain else None
        self.metric = "hamming" if kind in ("kendall", "hamming") else "sqeuclidean"
        n = self.n
        self._scale = 1.0 / math.sqrt(n * (n * n - 1) / 3.0) if n > 1 else 0.0
        self._iu = np.triu_indices(n, 1)

    def item_indices(self, values: Sequence[Any]) -> np.ndarray:
        """``idx[r, k]`` = index (in ``items``) of the item at position ``k`` of value ``r``."""
        if self._raw_index is not None:
            get = self._raw_index.__getitem__
            flat = [get(x) for v in values for x in v]
        else:
            flat = [self._item_index[vkey(x)] for v in values for x in v]
        return np.array(flat, dtype=np.int64).reshape(len(values), self.n)

    def positions(self, values: Sequence[Any]) -> np.ndarray:
        """``pos[r, i]`` = position of item ``i`` in value ``r``."""
        idx = self.item_indices(values)
        pos = np.empty_like(idx)
        rows = np.arange(len(values))[:, None]
        pos[rows, idx] = np.arange(self.n)[None, :]
        return pos

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        if self.n < 2:
            return np.zeros((len(values), 0))
        if self.kind == "hamming":   # item index at each position
            return self.item_indices(values).astype(float)
        pos = self.positions(values)
        if self.kind == "spearman":
            return pos.astype(float) * self._scale
        i, j = self._iu                # kendall: order sign of every item pair
        return (pos[:, i] < pos[:, j]).astype(float)


class ArrayEncoder(ParamEncoder):
    """Arrays: mean per-element squared distance (unit values; booleans: fraction differing)."""

    def __init__(self, param: ArrayParameter) -> None:
        super().__init__(param)
        self.count = param.count
        self.metric = "hamming" if param.element_type == "BooleanParameter" else "sqeuclidean"
        self._unit = param.element_unit

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        arr = np.array([[self._unit(x) for x in v] for v in values], dtype=float)
        arr = arr.reshape(len(values), self.count)
        if self.metric == "sqeuclidean":
            arr *= 1.0 / math.sqrt(self.count)
        return arr


class SelectorEncoder(ParamEncoder):
    """Selector: mean of the order's Spearman distance and the cutoffs' mean squared distance."""

    def __init__(self, param: SelectorParameter) -> None:
        super().__init__(param)
        self.order = PermutationEncoder(PermutationParameter(param.name + "/order", param.choices))
        self.k = len(param.choices) - 1
        self._log_max = math.log1p(param.max_cutoff) or 1.0

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        order = self.order.encode([v["order"] for v in values]) / math.sqrt(2.0)
        cuts = np.array([[math.log1p(c) / self._log_max for c in v["cutoffs"]] for v in values],
                        dtype=float).reshape(len(values), self.k)
        if self.k:
            cuts /= math.sqrt(2.0 * self.k)
        return np.hstack([order, cuts])


#: the encoder of each ``Parameter.encoding``
ENCODERS = {"unit": UnitEncoder, "category": CategoryEncoder, "permutation": PermutationEncoder,
            "array": ArrayEncoder, "selector": SelectorEncoder}


def make_encoder(param: Parameter, permutation_distance: str = "spearman") -> ParamEncoder:
    """The encoder for ``param``'s ``encoding`` (a kind without one raises ValueError naming it)."""
    cls = ENCODERS.get(param.encoding)
    if cls is PermutationEncoder:
        return PermutationEncoder(param, permutation_distance)  # type: ignore[arg-type]
    if cls is not None:
        return cls(param)
    raise ValueError(f"BayesianOptimization has no distance for parameter {param.name!r} of kind "
                     f"{param.kind!r}; use a built-in parameter kind")


class SpaceEncoder:
    """All parameters of a space: encodes configurations and builds ``(P, na, nb)`` distance stacks."""

    def __init__(self, manipulator: ConfigurationManipulator, permutation_distance: str = "spearman",
                 per_parameter: Optional[Dict[str, str]] = None, ordinal_hamming: bool = False,
                 ridge_channels: str = "none") -> None:
        per = dict(per_parameter or {})
        unknown = [n for n in per if n not in manipulator]
        if unknown:
            raise ValueError(f"permutation_distances names unknown parameter(s) {unknown}; "
                             f"use names from the search space")
        self.names = manipulator.names
        self.encoders = [make_encoder(p, per.get(p.name, permutation_distance))
                         for p in manipulator.parameters]
        #: index of the parameter each distance channel reads (one channel per parameter first)
        self.param_index = list(range(len(self.encoders)))
        if ordinal_hamming:
            for i, p in enumerate(manipulator.parameters):
                if _small_domain(p):
                    self.encoders.append(EqualityEncoder(p))  # type: ignore[arg-type]
                    self.param_index.append(i)
        #: the pair channels after the encoders' (:mod:`.ridges`; none by default)
        self.ridges = RidgeChannels(manipulator.parameters, ridge_channels)

    def __len__(self) -> int:
        """The number of distance channels (the depth of :meth:`sqdists`' stack)."""
        return len(self.encoders) + len(self.ridges)

    def encode(self, configs: Sequence[Dict[str, Any]]) -> List[np.ndarray]:
        """One array per parameter for the given configurations."""
        return [e.encode([c[e.name] for c in configs]) for e in self.encoders]

    def sqdists(self, a: List[np.ndarray], b: List[np.ndarray]) -> np.ndarray:
        """Stack of squared per-channel distances, shape ``(len(self), len(a rows), len(b rows))``."""
        na = a[0].shape[0] if a else 0
        nb = b[0].shape[0] if b else 0
        out = np.empty((len(self), na, nb))
        for i, e in enumerate(self.encoders):
            out[i] = e.sqdist(a[i], b[i])
        if len(self.ridges):
            self.ridges.fill(a, b, out[len(self.encoders):])
        return out

    @staticmethod
    def take(encoded: List[np.ndarray], rows: Any) -> List[np.ndarray]:
        """The encoded arrays restricted to ``rows`` (an index array or slice)."""
        return [arr[rows] for arr in encoded]


class ConfigKey:
    """Fast hashable identity of a legal configuration of one space (a tuple, one entry per parameter).

    Values compare as the parameter compares them: scalars as they are (a parameter's legal values
    never mix ``True`` and ``1`` except in enums, which use :func:`vkey`), lists as tuples.
    """

    def __init__(self, manipulator: ConfigurationManipulator) -> None:
        self.names = manipulator.names
        styles = {"plain": 0, "tuple": 1, "key": 2}
        self.mode: List[int] = [styles[p.key_style] for p in manipulator.parameters]  # 0 as is, 1 tuple, 2 vkey
        self._tuple = [i for i, m in enumerate(self.mode) if m == 1]
        self._vkey = [i for i, m in enumerate(self.mode) if m == 2]

    def __call__(self, config: Dict[str, Any]) -> tuple:
        vals = [config[n] for n in self.names]
        for i in self._tuple:
            vals[i] = tuple(vals[i])
        for i in self._vkey:
            vals[i] = vkey(vals[i])
        return tuple(vals)

    def part(self, index: int, value: Any) -> Hashable:
        """The key entry of ``value`` for parameter number ``index``."""
        m = self.mode[index]
        return value if m == 0 else tuple(value) if m == 1 else vkey(value)
