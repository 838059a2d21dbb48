"""Replaying a run into snapshots: checkpoints, credit per technique, new bests, improvement."""
import math

import pytest

from tunerlib.store.performance import Event, Replay, Tally, checkpoints, improvement, technique_of


def test_checkpoints():
    assert checkpoints(0) == []
    assert checkpoints(7) == [7]
    assert checkpoints(10) == [10]
    assert checkpoints(3000) == [10, 20, 50, 100, 200, 500, 1000, 2000, 3000]


@pytest.mark.parametrize("requestor,bandit,expected", [
    ("AUCBandit/ga-OX1", True, "ga-OX1"), ("AUCBandit/GGA/inner", True, "GGA"), ("PureRandom", False, "PureRandom"),
    ("seed", True, None), ("api", False, None), ("", True, None), ("AUCBandit", True, None)])
def test_technique_of(requestor, bandit, expected):
    assert technique_of(requestor, bandit) == expected


def test_improvement_is_relative_and_capped():
    assert improvement(None, 5.0) == 0.0
    assert improvement(10.0, 8.0) == pytest.approx(0.2)
    assert improvement(-10.0, -12.0) == pytest.approx(0.2)
    assert improvement(0.0, -1.0) == 1.0
    assert improvement(10.0, -100.0) == 1.0


def test_replay_credits_requestors_and_counts_requests():
    requestors = ["a", "b", "a", None, "b", "a"]
    values = [10.0, 12.0, 8.0, 7.0, math.inf, 6.0]
    events = [Event(r, float(i), v, i) for i, (r, v) in enumerate(zip(requestors, values))]
    snaps = Replay(requestors).snapshots(events)
    final = {s.technique: s for s in snaps if s.tests == 6}
    assert (final["a"].requests, final["a"].new_bests, final["a"].best_value) == (3, 3, 6.0)
    assert (final["b"].requests, final["b"].new_bests, final["b"].best_value) == (2, 0, 12.0)
    assert final[None].new_bests == 4 and final[None].requests == 6
    # a: 10 (first: no gain), 8 (+0.2), 6 (6 after the seed's 7: +1/7)
    assert final["a"].improvement == pytest.approx(0.2 + 1 / 7)
    assert (Tally(final["a"].requests, final["a"].new_bests, 0.0).affinity("new-bests"),
            Tally(final["b"].requests, final["b"].new_bests, 0.0).affinity("new-bests")) == (1.0, 0.0)


def test_flagged_events_count_new_bests_without_improvement():
    events = [Event("a", 0.0, math.inf, 0, flagged=True), Event("a", 1.0, math.inf, 1, flagged=False)]
    [snap, _] = Replay(["a", "a"]).snapshots(events)
    assert (snap.new_bests, snap.improvement, snap.requests) == (1, 0.0, 2)


def test_tally_affinity_metrics():
    tally = Tally(requests=10, new_bests=2, improvement=0.5)
    assert tally.affinity("new-bests") == 0.2
    assert tally.affinity("improvement") == 0.05
    assert Tally().affinity("new-bests") == 0.0
