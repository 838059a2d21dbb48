"""tunerlib.measure timing: min-of-k statistics and adaptive stopping with a fake clock, interleaving."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.measure import (OVER_LIMIT, Timing, TimingError, TimingPolicy, check_run_limit, fixed_rounds,
                              interleaving_order, over_limit, sample_interleaved, sample_min_of_k,
                              time_after_check, time_interleaved, time_min_of_k)
from tunerlib.measure.timing import COLD_LIMIT_FACTOR


class FakeClock:
    """A clock whose calls alternate start/stop; each timed call lasts the next duration."""

    def __init__(self, durations):
        self.durations, self.now, self.started = list(durations), 0.0, False

    def __call__(self):
        if self.started:
            self.now += self.durations.pop(0)
        self.started = not self.started
        return self.now


class SelfTimedClock:
    """A clock that advances by whatever the last called function declared as its duration."""

    def __init__(self):
        self.now, self.pending = 0.0, 0.0

    def __call__(self):
        self.now += self.pending
        self.pending = 0.0
        return self.now

    def fn(self, durations, calls, name=None, log=None):
        def run():
            calls.append(1)
            if log is not None:
                log.append(name)
            self.pending = durations.pop(0) if durations else 1.0
        return run


def test_timing_stops_when_the_minimum_is_stable():
    clock = FakeClock([5.0, 1.0, 1.0, 1.0, 1.0, 1.0] + [0.5] * 50)   # warm-up 5.0 then stable
    t = time_min_of_k(lambda: None, TimingPolicy(warmup=1, budget_s=100), clock)
    assert t.best == 1.0 and t.runs == 4 and t.stopped_because == "stable"
    assert t.median == 1.0 and t.spread == 0.0


def test_min_of_k_reports_the_minimum_not_the_mean():
    t = time_min_of_k(lambda: None, TimingPolicy(warmup=0, min_runs=5, max_runs=5, budget_s=100),
                      FakeClock([3.0, 2.0, 9.0, 2.5, 4.0]))
    assert t.samples == [3.0, 2.0, 9.0, 2.5, 4.0] and t.best == 2.0 and t.median == 3.0
    assert t.spread == pytest.approx(0.5)


def test_timing_keeps_going_while_the_minimum_drops_then_caps():
    durations = [1.0] + [1.0 / (i + 2) for i in range(100)]
    t = time_min_of_k(lambda: None, TimingPolicy(max_runs=12, budget_s=100), FakeClock(durations))
    assert t.runs == 12 and t.stopped_because == "max_runs" and t.best == pytest.approx(1 / 13)


def test_noise_needs_more_runs_than_quiet():
    policy = TimingPolicy(warmup=0, min_runs=3, max_runs=30, patience=3, budget_s=100)
    quiet = time_min_of_k(lambda: None, policy, FakeClock([1.0] * 30))
    noisy = time_min_of_k(lambda: None, policy, FakeClock([2.0, 1.8, 1.5, 1.3, 1.1, 1.0] + [1.2] * 30))
    assert quiet.runs == 4 and noisy.runs == 9 and noisy.best == 1.0


def test_timing_stops_at_the_budget():
    t = time_min_of_k(lambda: None, TimingPolicy(warmup=0, budget_s=1.0), FakeClock([0.5, 0.4, 0.3, 0.25] * 5))
    assert t.stopped_because == "budget" and t.runs == 3   # 0.5 + 0.4 + 0.3 >= 1.0


def test_timing_slow_warmup_is_the_only_sample():
    t = time_min_of_k(lambda: None, TimingPolicy(budget_s=0.5), FakeClock([0.7]))
    assert t.samples == [0.7] and t.stopped_because == "slow warm-up"


def test_self_timed_samples_and_the_check_run():
    samples = iter([0.3, 0.2, 0.2, 0.2, 0.2, 9.0])
    t = time_after_check(lambda: next(samples), 0.1, TimingPolicy(warmup=5, budget_s=100))
    assert t.samples == [0.3, 0.2, 0.2, 0.2, 0.2] and t.stopped_because == "stable"   # no warm-up after a check
    slow = time_after_check(lambda: pytest.fail("not repeated"), 2.0, TimingPolicy(budget_s=1.0))
    assert slow.samples == [2.0] and slow.stopped_because == "slow check run"
    assert sample_min_of_k(iter([0.5, 0.1, 0.1, 0.1, 0.1]).__next__, TimingPolicy(warmup=1, budget_s=9)).best == 0.1


def test_the_time_limit_is_judged_on_warm_runs_as_the_best_time_was():
    """A millisecond kernel's cold check run (thread start-up, first touch of memory) may pass twice
    the best warm time; up to three warm runs then decide.  Only a check run past check_run_limit, or a warm
    run past the limit, makes the configuration slower than the limit (TIMEOUT)."""
    policy = TimingPolicy(budget_s=100)
    cold = iter([0.0009, 0.0008, 0.0008, 0.0008, 0.0008])
    ok = time_after_check(lambda: next(cold), 0.005, policy, limit=0.002)   # cold 5 ms, warm 0.9 ms
    assert ok.stopped_because == "stable" and ok.best == 0.0008
    noisy = iter([0.006, 0.0009, 0.0008, 0.0008, 0.0008, 0.0008])          # one warm run hit by load
    assert time_after_check(lambda: next(noisy), 0.005, policy, limit=0.002).best == 0.0008
    slow = iter([0.003, 0.004, 0.0025, 9.0])
    over = time_after_check(lambda: next(slow), 0.005, policy, limit=0.002)
    assert over.stopped_because == OVER_LIMIT and over.samples == [0.003, 0.004, 0.0025]
    hopeless = time_after_check(lambda: pytest.fail("not run again"), 0.0201, policy, limit=0.002)
    assert hopeless.stopped_because == OVER_LIMIT and hopeless.samples == [0.0201]
    assert check_run_limit(0.002) == pytest.approx(COLD_LIMIT_FACTOR * 0.002) and check_run_limit(None) is None
    within = iter([0.0019, 0.0018, 0.0018, 0.0018, 0.0018])
    assert time_after_check(lambda: next(within), 0.0019, policy, limit=0.002).stopped_because == "stable"
    result = over_limit(over.best, 0.002, runs=over.runs)
    assert result.state == "TIMEOUT" and result.time == 0.0025 and "over the time limit of 0.002 s" in result.extra["error"]


@pytest.mark.parametrize("field, value", [("min_runs", 0), ("max_runs", 0), ("patience", 0), ("warmup", -1),
                                          ("rel_tol", math.nan), ("budget_s", 0.0)])
def test_bad_policy_names_the_field(field, value):
    with pytest.raises(TimingError, match=field):
        TimingPolicy(**{field: value}).check()
    with pytest.raises(TimingError, match="raise max_runs"):
        TimingPolicy(min_runs=5, max_runs=2).check()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0.001, 1.0), min_size=60, max_size=60), st.integers(1, 5), st.integers(5, 20))
def test_timing_properties(durations, min_runs, max_runs):
    policy = TimingPolicy(warmup=0, min_runs=min_runs, max_runs=max_runs, budget_s=1e9)
    t = time_min_of_k(lambda: None, policy, FakeClock(durations))
    assert min_runs <= t.runs <= max_runs
    assert t.samples == pytest.approx(durations[:t.runs]) and t.best == min(t.samples)


def test_interleaving_order_rotates():
    names = ["best", "default", "expert"]
    assert [interleaving_order(names, r) for r in range(4)] == [
        ["best", "default", "expert"], ["default", "expert", "best"], ["expert", "best", "default"],
        ["best", "default", "expert"]]
    assert interleaving_order([], 3) == []


def test_time_interleaved_rotates_and_keeps_each_minimum():
    clock, calls_a, calls_b, log = SelfTimedClock(), [], [], []
    a = clock.fn([9.0, 3.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], calls_a, "a", log)    # warm-up + timed per round
    b = clock.fn([9.0, 5.0] * 8, calls_b, "b", log)
    policy = TimingPolicy(warmup=1, min_runs=3, max_runs=8, patience=2, budget_s=1e9)
    out = time_interleaved({"a": a, "b": b}, policy, clock)
    assert out["a"].runs == out["b"].runs and len(calls_a) == 2 * out["a"].runs
    assert out["a"].best == pytest.approx(2.0) and out["b"].best == pytest.approx(5.0)
    # each round: warm-up then timed run of one callable, then the other; the first one alternates
    assert log[:8] == ["a", "a", "b", "b", "b", "b", "a", "a"]


def test_time_interleaved_fixed_rounds_and_dropped_callables():
    calls = []

    def broken():
        calls.append("x")
        if len(calls) > 2:
            raise OSError("launch failed\nmore detail")
    policy = TimingPolicy(warmup=1, min_runs=4, max_runs=4, budget_s=1e9)
    out = time_interleaved({"ok": lambda: None, "broken": broken}, policy, errors=(OSError,))
    assert out["ok"].runs == 4 and out["ok"].stopped_because == "max_runs"
    assert out["broken"].runs == 1 and out["broken"].error == "OSError: launch failed"
    assert math.isinf(Timing().best)
    with pytest.raises(ZeroDivisionError):
        time_interleaved({"z": lambda: 1 / 0}, policy, errors=(OSError,))


def test_fixed_rounds_and_self_timed_interleaving():
    values = {"a": iter([5.0, 3.0, 4.0]), "b": iter([1.0, 2.0, 0.5])}
    order = []

    def sampler(name):
        def run():
            order.append(name)
            return next(values[name])
        return run
    out = sample_interleaved({"a": sampler("a"), "b": sampler("b")}, fixed_rounds(3, warmup=0))
    assert out["a"].samples == [5.0, 3.0, 4.0] and out["b"].best == 0.5
    assert order == ["a", "b", "b", "a", "a", "b"] and out["a"].stopped_because == "max_runs"
