"""Ask/tell API, objectives, call_program."""
import math
import os
import sys

import pytest

from tunerlib import (MaximizeAccuracy, MaximizeAttribute, MinimizeAttribute, MinimizeTime, Result,
                      TuningRunManager)
from tunerlib.objectives import ObjectiveError
from tunerlib.parameters import ConfigurationManipulator, FloatParameter, IntegerParameter
from tunerlib.process import call_program


def test_ask_tell_loop(tmp_path):
    space = ConfigurationManipulator([IntegerParameter("a", 0, 100), FloatParameter("b", 0.0, 1.0)])
    manager = TuningRunManager.for_space(space, objective=MinimizeAttribute("loss"),
                                         database=str(tmp_path / "ask.db"), seed=3, test_limit=50)
    seen = 0
    while (desired := manager.get_next_desired_result()) is not None:
        cfg = desired.configuration.data
        manager.report_result(desired, Result(extra={"loss": (cfg["a"] - 42) ** 2 + cfg["b"]}))
        seen += 1
    assert seen == 50
    best = manager.get_best_configuration()
    assert abs(best["a"] - 42) <= 10
    summary = manager.finish()
    assert summary.tests == 50 and summary.best_value == manager.get_best_result().extra["loss"]


def test_callbacks_see_every_result_once_in_order(tmp_path):
    space = ConfigurationManipulator([IntegerParameter("a", 0, 100)])
    events = []
    manager = TuningRunManager.for_space(space, objective=MinimizeAttribute("loss"), seed=4, test_limit=30,
                                         database=str(tmp_path / "cb.db"),
                                         callbacks=[lambda run, event: events.append(event)])
    best = math.inf
    while (desired := manager.get_next_desired_result()) is not None:
        a = desired.configuration.data["a"]
        if a % 5 == 0:
            manager.report_result(desired, Result(state="ERROR"))
            continue
        manager.report_result(desired, Result(extra={"loss": float(abs(a - 30))}))
    assert [e.tests for e in events] == list(range(1, 31))
    assert len({e.result_id for e in events}) == 30
    for event in events:
        if event.state == "OK":
            assert event.new_best == (event.value < best)
            best = min(best, event.value)
        else:
            assert event.value is None and not event.new_best
        assert event.best == (None if best == math.inf else best)
    assert manager.finish().best_value == best == events[-1].best


def test_callbacks_get_a_read_only_view_of_the_run(tmp_path):
    space = ConfigurationManipulator([IntegerParameter("a", 0, 100)])
    seen = []

    def callback(view, event):
        seen.append((view.tests, dict(view.states), view.best.value if view.best else None, view.run_id))
        with pytest.raises(AttributeError):
            view.tests = 0                       # read-only
        assert not hasattr(view, "search") and not hasattr(view, "snapshot") and not hasattr(view, "finish")

    manager = TuningRunManager.for_space(space, objective=MinimizeAttribute("loss"), seed=2, test_limit=5,
                                         database=str(tmp_path / "view.db"), callbacks=[callback])
    while (desired := manager.get_next_desired_result()) is not None:
        manager.report_result(desired, Result(extra={"loss": float(desired.configuration.data["a"])}))
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5] and seen[-1][1] == {"OK": 5}
    assert {s[3] for s in seen} == {manager.run.run_id}
    manager.finish()


def test_tell_needs_a_result(tmp_path):
    from tunerlib.errors import TunerScriptError
    space = ConfigurationManipulator([IntegerParameter("a", 0, 100)])
    manager = TuningRunManager.for_space(space, seed=1, test_limit=3, database=str(tmp_path / "t.db"))
    desired = manager.run.ask()
    with pytest.raises(TunerScriptError, match="needs a tunerlib.Result"):
        manager.run.tell(desired, 1.5)
    manager.run.tell(desired, Result(time=1.5))
    assert manager.run.search.progress.tests == 1


def test_tell_needs_a_request_from_ask(tmp_path):
    from tunerlib.errors import TunerScriptError
    from tunerlib.result import DesiredResult
    space = ConfigurationManipulator([IntegerParameter("a", 0, 100)])
    manager = TuningRunManager.for_space(space, seed=1, test_limit=3, database=str(tmp_path / "t.db"))
    desired = manager.run.ask()
    with pytest.raises(TunerScriptError, match="a request that ask\\(\\) returned"):
        manager.run.tell(DesiredResult(desired.configuration), Result(time=1.5))
    manager.run.tell(desired, Result(time=1.5))
    assert manager.run.search.progress.tests == 1


def test_tune_function_measures_seed_configurations_first():
    from tunerlib import tune_function
    space = ConfigurationManipulator([IntegerParameter("a", 0, 100), FloatParameter("b", 0.0, 1.0)])
    seeds = [{"a": 42, "b": 0.0}, {"a": 7, "b": 0.5}]
    seen = []

    def fn(cfg):
        seen.append(dict(cfg))
        return (cfg["a"] - 42) ** 2 + cfg["b"]

    run = tune_function(space, fn, test_limit=10, technique=["PureRandom"], seed=1, seed_configurations=seeds)
    assert seen[:2] == seeds and len(seen) == 10
    assert run.best_at(1) == 0.0 and run.summary.best_value == 0.0


def test_objectives_do_not_assume_time():
    r = Result(extra={"q": 3.0}, accuracy=0.9)
    assert MinimizeAttribute("q").value(r) == 3.0
    assert MaximizeAttribute("q").value(r) == -3.0
    assert MaximizeAccuracy().value(r) == -0.9
    with pytest.raises(ObjectiveError, match="time"):
        MinimizeTime().value(r)
    assert MinimizeTime().value(Result(state="ERROR")) == math.inf
    assert MaximizeAttribute("q").display(-3.0) == 3.0


def test_result_rejects_unknown_state():
    with pytest.raises(ValueError, match="state"):
        Result(state="FINE")


def test_call_program_captures_output_and_kills_on_timeout(tmp_path):
    ok = call_program([sys.executable, "-c", "import sys; print('hi'); sys.exit(3)"])
    assert ok.returncode == 3 and ok.stdout.strip() == "hi" and not ok.timeout
    # the child spawns a grandchild: the whole process group must die on timeout
    marker = tmp_path / "alive"
    code = (f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
            f"'import time; time.sleep(1.5); open(r\"{marker}\", \"w\").write(\"x\")']); time.sleep(30)")
    slow = call_program([sys.executable, "-c", code], limit=0.5)
    assert slow.timeout and slow.returncode is None and slow.time < 10
    import time
    time.sleep(2.0)
    assert not marker.exists()


def test_captured_stderr_catches_writes_to_file_descriptor_2():
    from tunerlib.process import captured_stderr
    sink = []
    with captured_stderr(sink):
        os.write(2, b"  N warnings generated.\n")
    with captured_stderr(sink):
        pass
    assert sink == ["N warnings generated."]
