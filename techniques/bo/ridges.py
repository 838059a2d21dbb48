"""Distance channels along the diagonals of pairs of numeric parameters (``ridge_channels``).

The GP's kernel sums one squared distance per channel, each over its own lengthscale (ARD), so on
the per-parameter channels alone it is smooth or sharp along the axes only.  Good configurations
of tuning spaces often lie on a ridge along a diagonal instead: a product of two sizes (a work-group
size ``ls0 x ls1``) or a ratio (a global size over a local one) is what matters.  On unit values of
power-of-two or log-scaled parameters a product is a sum and a ratio a difference, so for every pair
``(i, j)`` of numeric parameters this module adds the channels

* ``((du_i + du_j) / 2)**2`` (``"sum"``: the pair's product), and
* ``((du_i - du_j) / 2)**2`` (``"difference"``: the pair's ratio),

where ``du`` is the difference of two configurations' unit values (:class:`.distances.UnitEncoder`).
Each is the squared Euclidean distance of a one-dimensional embedding (``(u_i +- u_j) / 2``), within
``[0, 1]``, so the Matérn kernel over the sum of channels stays positive semi-definite.  With the
pair's own channels at long lengthscales and a short one on the sum channel, the GP correlates
configurations along the ridge ``u_i + u_j = const`` and separates those across it.

The channels read the arrays the space encoder already made, so encoding a configuration (and the
acquisition's partial re-encoding of neighbours) is unchanged; only the distance stack grows.  Pairs
are formed among parameters with a smooth distance on at least 3 values (numeric and ordinal kinds;
continuous ones included); :data:`RIDGE_MAX_PARAMETERS` bounds the fit's cost.  The technique's
option ``ridge_after`` keeps the channels out of the kernel until the OK results number that many
initial designs, so the first fits, on a handful of results, have only the per-parameter lengthscales.
"""
from __future__ import annotations

from itertools import combinations
from typing import List, Sequence, Tuple

import numpy as np

from ...parameters import Parameter

#: the values of the option: no channels, the sums, the differences, or both per pair
RIDGE_KINDS = ("none", "sum", "difference", "both")
#: the most parameters whose pairs get channels (the first this many eligible ones, in space order)
RIDGE_MAX_PARAMETERS = 10


def ridge_eligible(param: Parameter) -> bool:
    """Whether ``param`` takes part in pairs: a unit-encoded parameter with at least 3 values."""
    if param.encoding != "unit":
        return False
    if param.kind in ("float", "log_float"):
        return True
    values = getattr(param, "values", None)
    if values is not None:
        return len(values) >= 3
    try:
        lo, hi = param.legal_range()  # type: ignore[attr-defined]  # a probe: a kind without one is not eligible
    except (AttributeError, TypeError, ValueError):
        return False
    return hi - lo + 1 >= 3


class RidgeChannels:
    """The pair channels of one space: built once per technique, called for every distance stack."""

    def __init__(self, parameters: Sequence[Parameter], kind: str) -> None:
        if kind not in RIDGE_KINDS:
            raise ValueError(f"ridge_channels {kind!r} is unknown; use one of {list(RIDGE_KINDS)}")
        eligible = [i for i, p in enumerate(parameters) if ridge_eligible(p)][:RIDGE_MAX_PARAMETERS]
        signs: Tuple[float, ...] = {"none": (), "sum": (1.0,), "difference": (-1.0,),
                                    "both": (1.0, -1.0)}[kind]
        #: (parameter index i, parameter index j, sign) of every channel, in stack order
        self.channels: List[Tuple[int, int, float]] = [
            (i, j, s) for i, j in combinations(eligible, 2) for s in signs] if signs else []
        self._indices = sorted({i for i, _, _ in self.channels} | {j for _, j, _ in self.channels})
        #: whether the channels are in the stack: the technique turns them on once it has enough
        #: results (``ridge_after``); the GP and the acquisition of one model see the same state
        self.active = True

    def __len__(self) -> int:
        """The number of channels in the stack: 0 while inactive."""
        return len(self.channels) if self.active else 0

    def fill(self, a: List[np.ndarray], b: List[np.ndarray], out: np.ndarray) -> None:
        """Write the squared pair distances between the encoded rows ``a`` and ``b`` (one array per
        parameter, as :meth:`.distances.SpaceEncoder.encode` makes them) into ``out``, shape
        ``(len(self), len(a rows), len(b rows))``; called by the space encoder's ``sqdists``."""
        diff = {i: a[i][:, 0][:, None] - b[i][:, 0][None, :] for i in self._indices}
        for k, (i, j, s) in enumerate(self.channels):
            np.multiply(diff[i] + s * diff[j], 0.5, out=out[k])
            np.square(out[k], out=out[k])
