"""One check of replay_result's three outcomes, shared by the core replay tests (an in-memory table) and
the recorded-benchmark tests (a Kernel Tuner cache file): both tables record x=2,y=1 as 7.0 (1 s of
simulated cost; seconds in memory, ms in the cache file, so ``seconds`` is what the table holds),
x=4,y=1 as failed with ``reason`` and lack x=8,y=0."""
import json

from tunerlib.replay import replay_result


def assert_replay_outcomes(bench, reason, seconds=7.0):
    ok = replay_result(bench, {"x": 2, "y": 1})
    assert ok.state == "OK" and ok.time == seconds and ok.extra == {"simulated_s": 1.0}
    failed = replay_result(bench, {"x": 4, "y": 1})
    assert failed.state == "INFEASIBLE" and failed.extra["reason"] == reason
    assert "not_measured" not in failed.extra and failed.extra["simulated_s"] == 1.0
    absent = replay_result(bench, {"x": 8, "y": 0})
    assert absent.state == "INFEASIBLE" and absent.extra["not_measured"] is True
    assert absent.extra["simulated_s"] == 0.0
    json.dumps(ok.extra), json.dumps(failed.extra), json.dumps(absent.extra)   # JSON-compatible


def run_through_ask_tell(interface, options):
    """Drive a replay interface to its test limit through the ask/tell API; returns the run's summary."""
    from tunerlib import TuningRunManager
    manager = TuningRunManager(interface, options)
    while (desired := manager.get_next_desired_result()) is not None:
        manager.report_result(desired, interface.run(desired, None, None))
    return manager.finish()
