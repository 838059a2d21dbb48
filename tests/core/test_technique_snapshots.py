"""The technique-state snapshots: every 25 results, at most one per second of the run's clock."""
from types import SimpleNamespace

from tunerlib.engine.callbacks import TechniqueSnapshots


def test_snapshots_come_every_n_results_and_at_most_once_per_interval():
    now, saved = [0.0], []
    snaps = TechniqueSnapshots(lambda: saved.append(now[0]), every=25, seconds=1.0, clock=lambda: now[0])
    for tests in range(1, 201):  # microsecond measurements: 200 results within 0.2 s
        now[0] = tests * 0.001
        snaps(None, SimpleNamespace(tests=tests))
    assert saved == [0.025]
    for tests in range(201, 301):  # one second per result: every 25th result is saved
        now[0] += 1.0
        snaps(None, SimpleNamespace(tests=tests))
    assert [round(t, 3) for t in saved[1:]] == [round(0.2 + k - 200, 3) for k in (225, 250, 275, 300)]
