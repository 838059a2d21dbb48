"""A run started without ``--technique`` resumes with the default of the tunerlib that created it
(the root technique named by its requests), not with today's default."""
import json
import sqlite3

from tunerlib import MeasurementInterface, TuningOptions, TuningRun
from tunerlib.objectives import MinimizeAttribute
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.result import Result
from tunerlib.techniques import DEFAULT_TECHNIQUE

from dbrows import rows

OLD_DEFAULT = "AUCBanditMetaTechniqueG"


class _Sum(MeasurementInterface):
    def manipulator(self):
        return ConfigurationManipulator([IntegerParameter(f"x{i}", 0, 20) for i in range(3)])

    def objective(self):
        return MinimizeAttribute("v")

    def run(self, desired_result, input, limit):
        c = desired_result.configuration.data
        return Result(extra={"v": float(sum((c[f"x{i}"] - 7) ** 2 for i in range(3)))})


def _opts(db, **kw):
    return TuningOptions(database=str(db), quiet=True, seed=3, **kw)


def _as_written_before_auto(db):
    """Rewrite the run's stored arguments as a tunerlib whose default was G stored them when the user
    gave no --technique: an empty technique list (the requests still name their technique)."""
    con = sqlite3.connect(db)
    try:
        (run_id, args), = con.execute("select id, args from tuning_run").fetchall()
        args = json.loads(args)
        args["technique"] = []
        con.execute("update tuning_run set args = ? where id = ?", (json.dumps(args), run_id))
        con.commit()
    finally:
        con.close()


def _roots(db):
    return [r.split("/", 1)[0] for (r,) in rows(db, "select requestor from desired_result order by id")]


def test_a_run_from_before_auto_resumes_with_the_default_it_was_created_with(tmp_path):
    assert DEFAULT_TECHNIQUE != OLD_DEFAULT
    db = tmp_path / "old.db"
    TuningRun(_Sum(_opts(db, test_limit=30)), _opts(db, test_limit=30, technique=[OLD_DEFAULT])).run()
    _as_written_before_auto(db)
    resumed = _opts(db, test_limit=60, resume=True)
    summary = TuningRun(_Sum(resumed), resumed).run()
    assert summary.tests == 60
    assert set(_roots(db)) == {OLD_DEFAULT}


def test_a_run_of_todays_default_resumes_with_it(tmp_path):
    db = tmp_path / "new.db"
    TuningRun(_Sum(_opts(db, test_limit=20)), _opts(db, test_limit=20)).run()
    resumed = _opts(db, test_limit=40, resume=True)
    TuningRun(_Sum(resumed), resumed).run()
    assert set(_roots(db)) == {DEFAULT_TECHNIQUE}
