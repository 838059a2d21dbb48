"""A configuration a replayed table has no row for (``Result.extra["not_measured"]``) reaches the techniques
as ``Feedback.unmeasured``; BayesianOptimization never proposes it again but does not train its
feasibility model on it (a gap in a recording is no evidence of a hidden constraint)."""
import math
import random

from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib import Result
from tunerlib.techniques import register, registry
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.simple import PureRandom

SEEN = []


class RecordingRandom(PureRandom):
    """PureRandom that keeps every Feedback it observes (in :data:`SEEN`)."""

    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        SEEN.append(feedback)


def space():
    return ConfigurationManipulator([IntegerParameter("a", 0, 9), IntegerParameter("b", 0, 9)])


def answer(c):
    """A table with holes (a + b odd) and real failures (a == 9)."""
    if (c["a"] + c["b"]) % 2:
        return Result(state="ERROR", extra={"not_measured": True})
    return None if c["a"] == 9 else float(c["a"] + c["b"])


def test_tune_function_reports_a_returned_result_and_techniques_see_unmeasured():
    if "test-recording-random" not in registry():
        register("test-recording-random", RecordingRandom, "test variant of PureRandom")
    SEEN.clear()
    run = tune_function(space(), answer, test_limit=40, technique=["test-recording-random"], seed=3)
    assert len(run.values) == 40 and run.summary.tests == 40
    for fb in SEEN:
        hole = (fb.config["a"] + fb.config["b"]) % 2 == 1
        assert fb.unmeasured == hole and (fb.state == "error") == (hole or fb.config["a"] == 9)
    measured = [fb for fb in SEEN if not fb.duplicate]       # one per measurement, in order
    assert [math.inf if fb.state != "ok" else fb.config["a"] + fb.config["b"] for fb in measured] == run.values
    assert any(f.unmeasured for f in SEEN) and any(f.state == "error" and not f.unmeasured for f in SEEN)


def _bound_bo():
    bo = BayesianOptimization(initial_samples=2)
    bo.bind(space(), random.Random(0))
    return bo


def _feedback(bo, config, value, state, unmeasured=False):
    return Feedback(config, bo.manipulator.hash_config(config), value, state, "x", False, unmeasured=unmeasured)


def test_bo_excludes_unmeasured_configurations_but_does_not_learn_from_them():
    results = [({"a": 0, "b": 0}, 0.0, "ok"), ({"a": 2, "b": 2}, 4.0, "ok"), ({"a": 1, "b": 0}, math.inf, "error")]
    for unmeasured, trained in ((True, False), (False, True)):
        bo = _bound_bo()
        for cfg, value, state in results:
            bo.observe(_feedback(bo, cfg, value, state, unmeasured=unmeasured and state != "ok"))
        assert (bo._fit_feasibility() is not None) == trained
        assert bo.key({"a": 1, "b": 0}) in bo._excluded
        proposals = [bo.desired_configuration() for _ in range(5)]
        assert {"a": 1, "b": 0} not in proposals and None not in proposals
