"""tunerlib.measure.repeat: re-timing passes, the noise between them, median and range over seeds."""
import pytest

from tunerlib.measure import Spread, pass_noise, retime_passes, spread


def test_retime_passes_keeps_each_configurations_minimum_of_every_pass():
    passes = iter([{"best": 1.0, "expert": 2.0, "broken": None}, {"best": 1.1, "expert": 1.8, "broken": None}])
    per_pass = retime_passes(lambda: next(passes), 2)
    assert per_pass == {"best": [1.0, 1.1], "expert": [2.0, 1.8]}          # never timed: left out
    assert pass_noise(per_pass) == pytest.approx({"best": 0.1, "expert": 2.0 / 1.8 - 1})


def test_one_pass_has_no_noise_and_zero_passes_is_an_error():
    assert pass_noise(retime_passes(lambda: {"a": 1.0}, 1)) == {}
    with pytest.raises(ValueError, match="passes must be >= 1, got 0"):
        retime_passes(lambda: {"a": 1.0}, 0)


def test_spread_is_median_and_range():
    assert spread([]) is None
    s = spread([1.5, 0.9, 1.2])
    assert s == Spread(1.2, 0.9, 1.5, 3) and s.text() == "1.20x (0.90-1.50x)"
    assert spread([1.234]).text() == "1.23x" and spread([2.0, 4.0]).median == 3.0
