"""One best: a save_final_config that re-times finalists returns a RetimedBest, and every output of the
run (summary, --summary-json, --final-config, the database's best read by ``tunerlib report``) names
that configuration, with its re-timed and its recorded value."""
import json

import pytest

from tunerlib import MeasurementInterface, Result, RetimedBest, TuningOptions, TuningRun
from tunerlib.engine.final_config import FINAL_BEST, final_best
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.report.data import load_runs
from tunerlib.report.render import markdown_report


class Line(MeasurementInterface):
    """x in 0..9, recorded time x + 1; at the end the second best recorded (x=1) re-times fastest."""

    retime = "second"

    def manipulator(self):
        return ConfigurationManipulator([IntegerParameter("x", 0, 9)])

    def run(self, desired_result, input, limit):
        self.seen = getattr(self, "seen", set()) | {desired_result.configuration.data["x"]}
        return Result(time=float(desired_result.configuration.data["x"] + 1))

    def save_final_config(self, config):
        print(f"recorded best x={config['x']}")
        if self.retime == "second":
            chosen = {"x": 1}
            super().save_final_config(chosen)
            return RetimedBest(chosen, 1.5, "min of 3 interleaved rounds")
        if self.retime == "same":
            super().save_final_config(config)
            return RetimedBest(config, 1.25, "min of 3 interleaved rounds")
        if self.retime == "unmeasured":
            return RetimedBest({"x": min(set(range(10)) - self.seen)}, 0.5)
        if self.retime == "outside":
            return RetimedBest({"x": 99}, 0.5)
        if self.retime == "junk":
            return 42
        super().save_final_config(config)
        return None


def _run(tmp_path, retime, name="r", **kw):
    opts = TuningOptions(database=str(tmp_path / "r.db"), quiet=True, seed=1, technique=["PureRandom"], **kw,
                         summary_json=str(tmp_path / f"{name}.json"), final_config=str(tmp_path / f"{name}f.json"))
    interface = Line(opts)
    interface.retime = retime
    run = TuningRun(interface, opts)
    summary = run.run()
    summary.write_json(opts.summary_json)
    return run, summary


def test_the_retimed_best_is_the_best_everywhere(tmp_path):
    run, summary = _run(tmp_path, "second")
    assert run.search.progress.best.config == {"x": 0}                       # the search recorded x=0 as best
    assert summary.best_configuration == {"x": 1} and summary.best_value == 1.5
    assert summary.recorded_value == 2.0                          # x=1's value recorded during the search
    assert summary.retimed == {"how": "min of 3 interleaved rounds", "search_best_value": 1.0,
                               "search_best_was_another_configuration": True}
    text = summary.render()
    assert 'best configuration: {"x": 1}' in text and "recorded during the search: 2" in text
    assert "another configuration" in text
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["best_configuration"] == {"x": 1} and data["best_value"] == 1.5 and data["recorded_value"] == 2.0
    assert json.loads((tmp_path / "rf.json").read_text()) == {"x": 1}
    stored = final_best(run.db.load_run_artifact(run.run_id, FINAL_BEST))
    assert stored["configuration"] == {"x": 1} and stored["value"] == 1.5 and stored["recorded_value"] == 2.0
    assert stored["search_best"]["value"] == 1.0 and stored["search_best"]["hash"] != stored["hash"]
    (data,) = load_runs(str(tmp_path / "r.db"))
    best = data.best_point()
    assert best.config == {"x": 1} and best.value == 2.0 and best.result_id == stored["result_id"]
    assert data.retimed_value == 1.5
    assert "1.5 re-timed at the end (min of 3 interleaved rounds); recorded 2" in markdown_report([data], [], "r.db", str(tmp_path / "r.md"))


def test_retiming_the_recorded_best_keeps_it(tmp_path):
    run, summary = _run(tmp_path, "same")
    assert summary.best_configuration == {"x": 0} and summary.best_value == 1.25 and summary.recorded_value == 1.0
    assert summary.retimed["search_best_was_another_configuration"] is False
    assert "another configuration" not in summary.render()


def test_without_retiming_nothing_changes(tmp_path):
    run, summary = _run(tmp_path, None)
    assert summary.best_configuration == {"x": 0} and summary.best_value == 1.0 == summary.recorded_value
    assert summary.retimed is None
    assert run.db.load_run_artifact(run.run_id, FINAL_BEST) is None
    (data,) = load_runs(str(tmp_path / "r.db"))
    assert data.best_point().config == {"x": 0} and data.retimed_value is None


@pytest.mark.parametrize("retime, why", [("unmeasured", "has no OK result in this run"),
                                         ("outside", "not one of the space: parameter 'x': illegal value 99"),
                                         ("junk", "returned int, expected None or tunerlib.RetimedBest")])
def test_a_bad_return_value_is_reported_and_ignored(tmp_path, capsys, retime, why):
    run, summary = _run(tmp_path, retime, test_limit=4)
    assert why in capsys.readouterr().err
    assert summary.best_configuration == run.search.progress.best.config and summary.retimed is None
    assert summary.best_value == summary.recorded_value == run.search.progress.best.value
    assert run.db.load_run_artifact(run.run_id, FINAL_BEST) is None


def test_a_bad_value_is_named():
    assert "finite number" in RetimedBest({"x": 1}, float("nan")).problem()
    assert RetimedBest({"x": 1}, 2.0).problem() is None
