"""Units: the objective's unit is printed after the best value in the summary and given
as ``unit`` by --summary-json (unitless objectives print as before), it is recorded with every new run,
and --resume refuses, with one line and without touching the database file, a run whose recorded unit
differs from the tuner's or was never recorded (runs from before units were recorded: replays then stored
milliseconds, now seconds)."""
import json
import sqlite3
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tunerlib import MeasurementInterface, MinimizeAttribute, MinimizeTime, Result
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.engine.progress import Summary


class _Tuner(MeasurementInterface):
    """x in 0..40; the metric is (x - 7)**2 + 1, as ``energy`` and ``extra["cost"]``, and 1e-4 times that as ``time``."""

    def program_name(self) -> str:
        return "units"

    def manipulator(self) -> ConfigurationManipulator:
        return ConfigurationManipulator([IntegerParameter("x", 0, 40)])

    def run(self, desired_result, input, limit) -> Result:
        v = (desired_result.configuration.data["x"] - 7) ** 2 + 1.0
        return Result(time=v * 1e-4, energy=v, extra={"cost": v})


class TimeTuner(_Tuner):
    """The default objective: minimize time, in seconds."""


class EnergyTuner(_Tuner):
    def objective(self) -> MinimizeAttribute:
        return MinimizeAttribute("energy", unit="J")


class CostTuner(_Tuner):
    def objective(self) -> MinimizeAttribute:
        return MinimizeAttribute("cost")


def _main(cls, tmp_path: Path, *extra: str, db: str = "u.db") -> Dict[str, Any]:
    js = tmp_path / "s.json"
    code = cls.main(["--test-limit", "12", "--seed", "3", "--database", str(tmp_path / db), "--quiet",
                     "--summary-json", str(js), *extra])
    return {"code": code, "json": json.loads(js.read_text()) if code == 0 else None}


def _summary_lines(out: str) -> List[str]:
    return [line for line in out.splitlines() if line.startswith("  best minimize ")]


def test_minimize_time_is_in_seconds_and_attributes_take_an_optional_unit():
    assert MinimizeTime().unit == "s"
    assert MinimizeAttribute("energy", unit="J").unit == "J" and MinimizeAttribute("cost").unit is None
    with pytest.raises(ValueError, match="unit"):
        MinimizeAttribute("energy", unit="")


@pytest.mark.parametrize("cls, unit", [(TimeTuner, "s"), (EnergyTuner, "J"), (CostTuner, None)])
def test_the_summary_and_its_json_state_the_unit(tmp_path, capsys, cls, unit):
    run = _main(cls, tmp_path)
    assert run["code"] == 0
    data = run["json"]
    assert data["unit"] == unit
    (best,) = _summary_lines(capsys.readouterr().out)
    value = f"{data['best_value']:.6g}"
    assert best.endswith(f": {value}" + ("" if unit is None else f" {unit}")), best


def test_the_re_timed_and_recorded_values_carry_the_unit_too():
    s = Summary(program="p", run_uuid="u", objective="minimize time", best_value=2e-4, best_configuration={},
                tests=3, states={"OK": 3}, duplicates=0, elapsed_seconds=1.0, stopped_because="test limit",
                technique="t", seed=1, database="d.db", recorded_value=1.5e-4, unit="s",
                retimed={"how": "re-timed", "search_best_value": 1e-4, "search_best_was_another_configuration": True})
    text = s.render()
    assert "best minimize time: 0.0002 s (re-timed; recorded during the search: 0.00015 s)" in text
    assert "the search's recorded best, 0.0001 s, was another configuration" in text
    s.signal = "SIGINT"
    assert "best minimize time so far 0.0002 s;" in s.interrupted_line()


def _recorded_args(db: Path) -> Dict[str, Any]:
    with sqlite3.connect(db) as con:
        (args,) = con.execute("SELECT args FROM tuning_run").fetchone()
    return json.loads(args)


def _set_recorded_unit(db: Path, unit: Any, drop: bool = False) -> None:
    """Make the run look recorded in ``unit`` (or, with ``drop``, by a version that recorded no unit)."""
    args = _recorded_args(db)
    args.pop("objective_unit") if drop else args.update(objective_unit=unit)
    con = sqlite3.connect(db)
    con.execute("UPDATE tuning_run SET args = ?", (json.dumps(args),))
    con.commit()
    con.close()


def _snapshot(db: Path) -> list:
    con = sqlite3.connect(db)
    rows = [con.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()
            for t in ("tuning_run", "result", "desired_result", "configuration")]
    con.close()
    return rows


def test_a_new_run_records_its_unit_and_resumes_in_the_same_unit(tmp_path):
    assert _main(TimeTuner, tmp_path)["code"] == 0
    assert _recorded_args(tmp_path / "u.db")["objective_unit"] == "s"
    resumed = _main(TimeTuner, tmp_path, "--resume", "--test-limit", "20")
    assert resumed["code"] == 0 and resumed["json"]["tests"] == 20


@pytest.mark.parametrize("recorded, drop, says", [
    ("ms", False, "recorded 'minimize time' in ms, this tuner reports it in s"),
    (None, False, "recorded 'minimize time' without a unit, this tuner reports it in s"),
    (None, True, "did not record the unit of 'minimize time'"),
])
def test_resume_refuses_another_or_an_unknown_unit_and_changes_nothing(tmp_path, capsys, recorded, drop, says):
    db = tmp_path / "u.db"
    assert _main(TimeTuner, tmp_path)["code"] == 0
    _set_recorded_unit(db, recorded, drop)
    before = _snapshot(db)
    capsys.readouterr()
    assert _main(TimeTuner, tmp_path, "--resume", "--test-limit", "20")["code"] == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and says in err, err
    assert "would mix the two" in err and "drop --resume to start a new run" in err
    assert f"the run's 12 results stay in {db}" in err
    assert _snapshot(db) == before


def test_a_unitless_objective_resumes_a_run_that_recorded_no_unit(tmp_path):
    assert _main(CostTuner, tmp_path)["code"] == 0
    assert _recorded_args(tmp_path / "u.db")["objective_unit"] is None
    _set_recorded_unit(tmp_path / "u.db", None, drop=True)
    assert _main(CostTuner, tmp_path, "--resume", "--test-limit", "20")["json"]["tests"] == 20


def test_the_report_states_the_unit_each_run_recorded(tmp_path):
    from tunerlib.report.data import load_runs
    assert _main(TimeTuner, tmp_path)["code"] == 0
    assert _main(CostTuner, tmp_path)["code"] == 0
    assert [r.unit_text for r in load_runs(str(tmp_path / "u.db"))] == ["in s", "unitless"]
    _set_recorded_unit(tmp_path / "u.db", None, drop=True)
    assert {r.unit_text for r in load_runs(str(tmp_path / "u.db"))} == {"unit not recorded"}


def _compare_header(tmp_path: Path, db: str = "u.db") -> List[str]:
    from tunerlib.report.data import load_runs
    from tunerlib.report.render import compare_table
    return compare_table(load_runs(str(tmp_path / db)))


def test_the_reports_compare_table_names_the_unit_in_its_header(tmp_path):
    assert _main(TimeTuner, tmp_path, "--label", "a")["code"] == 0
    assert _main(TimeTuner, tmp_path, "--label", "b", "--seed", "4")["code"] == 0
    header, body = _compare_header(tmp_path)
    assert "best of all runs (s)" in header and all(h.endswith("(s)") for h in header if h.startswith("best @"))
    assert "unit" not in header and len(body) == 2
    from tunerlib.cli import main
    assert main(["report", str(tmp_path / "u.db"), "-o", str(tmp_path / "r.md")]) == 0
    assert "| best of all runs (s) |" in (tmp_path / "r.md").read_text()
    _set_recorded_unit(tmp_path / "u.db", None, drop=True)          # runs from before units were recorded
    header, _ = _compare_header(tmp_path)
    assert "best of all runs (unit not recorded)" in header


def test_a_unitless_objective_has_no_unit_in_the_header(tmp_path):
    assert _main(CostTuner, tmp_path)["code"] == 0
    header, _ = _compare_header(tmp_path)
    assert "best of all runs" in header and "unit" not in header


def test_runs_in_different_units_get_a_unit_column(tmp_path):
    assert _main(TimeTuner, tmp_path, "--label", "time")["code"] == 0
    assert _main(EnergyTuner, tmp_path, "--label", "energy")["code"] == 0
    assert _main(CostTuner, tmp_path, "--label", "cost")["code"] == 0
    header, body = _compare_header(tmp_path)
    assert "best of all runs" in header and header[2] == "unit"
    assert {row[0]: row[2] for row in body} == {"time": "s", "energy": "J", "cost": "unitless"}
    assert _main(EnergyTuner, tmp_path, "--label", "time", "--seed", "5")["code"] == 0
    assert {row[0]: row[2] for row in _compare_header(tmp_path)[1]}["time"] == "mixed: s, J"
