"""``ridge_channels`` "auto": the sum channels only when the known test limit gives every kernel
channel enough results (:mod:`tunerlib.techniques.bo.ridge_rule`)."""
import math

import pytest

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, FloatParameter, OrdinalParameter
from tunerlib.techniques.base import SearchContext
from tunerlib.techniques.bo.distances import SpaceEncoder
from tunerlib.techniques.bo.ridge_rule import RESULTS_PER_CHANNEL, auto_ridge_kind
from tunerlib.techniques.bo.technique import BayesianOptimization

SIZES = [1, 2, 4, 8, 16, 32, 64]


def space(n_sizes: int = 4) -> ConfigurationManipulator:
    return ConfigurationManipulator([OrdinalParameter(f"s{i}", SIZES) for i in range(n_sizes)]
                                    + [EnumParameter("m", ["x", "y"]), FloatParameter("f", 0.0, 1.0)])


def channels_with_sums(m: ConfigurationManipulator) -> int:
    return len(SpaceEncoder(m, ordinal_hamming=True, ridge_channels="sum"))


def bound(m: ConfigurationManipulator, context: SearchContext) -> BayesianOptimization:
    bo = BayesianOptimization(ridge_channels="auto")
    bo.set_context(context)
    bo.check_space(m)
    return bo


@pytest.mark.parametrize("n_sizes", [2, 4, 7])
def test_sum_channels_from_the_smallest_test_limit_with_enough_results_per_channel(n_sizes):
    m = space(n_sizes)
    pairs = (n_sizes + 1) * n_sizes // 2          # the sizes and the float pair up
    threshold = math.ceil(RESULTS_PER_CHANNEL * channels_with_sums(m))
    above = bound(m, SearchContext(test_limit=threshold, budget_kind="tests"))
    below = bound(m, SearchContext(test_limit=threshold - 1, budget_kind="tests"))
    assert len(above.encoder.ridges) == pairs and {s for _, _, s in above.encoder.ridges.channels} == {1.0}
    assert len(above.encoder) == channels_with_sums(m)
    assert len(below.encoder.ridges) == 0
    assert len(below.encoder) == len(SpaceEncoder(m, ordinal_hamming=True))


def test_off_without_a_known_test_limit():
    m = space()
    for context in (SearchContext(), SearchContext(budget_kind="time", stop_after=60.0),
                    SearchContext(test_limit=10_000, budget_kind="default")):
        assert len(bound(m, context).encoder.ridges) == 0


def test_rule_reads_channels_per_result_not_the_space():
    assert auto_ridge_kind(20, 45, 100) == "sum"        # 65 channels, 1.54 results each
    assert auto_ridge_kind(8, 6, 20) == "none"          # 14 channels, 1.43 results each
    assert auto_ridge_kind(8, 0, 10_000) == "none"      # no pair to add
    assert auto_ridge_kind(8, 6, None) == "none"
