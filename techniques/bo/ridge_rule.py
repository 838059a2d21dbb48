"""The ``ridge_channels`` value ``"auto"``: the sum channels when the known test limit gives each kernel
channel enough results.

Every distance channel of the GP's kernel has its own lengthscale, fitted on the results so far; the
pair channels of :mod:`.ridges` add one per pair of eligible parameters, more than the per-parameter
channels on spaces of 5 or more such parameters.  Fitted on few results per lengthscale, the extra
channels make the first fits less reliable; fitted on many, they let the GP follow ridges along
diagonals (docs/benchmarks/default-technique.md, "Distance channels along diagonals of pairs of
parameters").  ``"auto"`` therefore turns the sum channels on only when the run's known test limit
(``--test-limit``, :func:`.budget.known_test_limit`) is at least :data:`RESULTS_PER_CHANNEL` times the
number of kernel channels with them (per-parameter, Hamming and sum channels); with a deadline alone
or no limit it leaves them off.
"""
from __future__ import annotations

from typing import Dict, Optional

from ...parameters import ConfigurationManipulator
from ..base import SearchContext
from .budget import known_test_limit
from .distances import SpaceEncoder
from .ridges import RidgeChannels

#: the fewest results per kernel channel (with the sum channels) the test limit must give for ``"auto"``
#: to add the sum channels: 1.5, the largest value under which a 10-parameter space's 65 channels are
#: on at 100 evaluations and above which a 4-parameter space's 14 are off at 20 (the development figures)
RESULTS_PER_CHANNEL = 1.5


def auto_ridge_kind(base_channels: int, sum_channels: int, test_limit: Optional[int]) -> str:
    """``"sum"`` when ``test_limit`` is known and at least :data:`RESULTS_PER_CHANNEL` x
    (``base_channels`` + ``sum_channels``) and there is a pair, else ``"none"``."""
    if test_limit is None or sum_channels == 0:
        return "none"
    return "sum" if test_limit >= RESULTS_PER_CHANNEL * (base_channels + sum_channels) else "none"


def space_encoder(manipulator: ConfigurationManipulator, permutation_distance: str,
                  per_parameter: Dict[str, str], ordinal_hamming: bool, ridge_channels: str,
                  context: SearchContext) -> SpaceEncoder:
    """The technique's :class:`.distances.SpaceEncoder`, with ``"auto"`` resolved by the run's
    ``context``; called when the technique checks its space (raises ValueError as the encoder does)."""
    kind = ridge_channels
    encoder = SpaceEncoder(manipulator, permutation_distance, per_parameter, ordinal_hamming,
                           "none" if kind == "auto" else kind)
    if kind == "auto":
        sums = len(RidgeChannels(manipulator.parameters, "sum"))
        kind = auto_ridge_kind(len(encoder), sums, known_test_limit(context))
        if kind != "none":
            encoder = SpaceEncoder(manipulator, permutation_distance, per_parameter, ordinal_hamming, kind)
    return encoder
