"""tools/compare.py --database-dir: every run is recorded in DIR/<problem>.db labelled with its technique,
and ``tunerlib plot`` / ``tunerlib report`` read the comparison from there."""
import json

from tunerlib.cli import main
from tunerlib.db import ResultsDB
from tools import compare


def test_runs_are_recorded_per_problem_with_their_technique(tmp_path, capsys):
    folder = tmp_path / "runs"
    saved = tmp_path / "values.json"
    assert compare.main(["--problems", "rosenbrock4d", "--techniques", "PureRandom", "AUCBanditMetaTechniqueA",
                         "--seeds", "2", "--budgets", "30", "--jobs", "1", "--database-dir", str(folder),
                         "--json", str(saved)]) == 0
    assert f"recording runs in {folder}/<problem>.db" in capsys.readouterr().out
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".db") == ["rosenbrock4d.db"]
    values = json.loads(saved.read_text())
    with ResultsDB(str(folder / "rosenbrock4d.db")) as db:
        runs = db.list_runs()
        assert sorted((r["label"], r["seed"], r["tests"]) for r in runs) == [
            ("AUCBanditMetaTechniqueA", 0, 30), ("AUCBanditMetaTechniqueA", 1, 30),
            ("PureRandom", 0, 30), ("PureRandom", 1, 30)]
        for run in runs:        # the database holds exactly the values compare reported
            recorded = [r.extra["value"] for r in db.run_results(run["id"])]
            assert recorded in [v[:-1] for v in values[f"rosenbrock4d|{run['label']}"]]
    db_path = str(folder / "rosenbrock4d.db")
    assert main(["plot", db_path, "-o", str(tmp_path / "h.png")]) == 0
    assert main(["report", db_path, "-o", str(tmp_path / "r.md")]) == 0
    report = (tmp_path / "r.md").read_text()
    assert "| AUCBanditMetaTechniqueA | 2 | 30 |" in report and "| PureRandom | 2 | 30 |" in report


def test_without_the_option_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(compare._RECORD, "database_dir", str(tmp_path / "stale"))   # an earlier call's
    assert compare.main(["--problems", "rosenbrock4d", "--techniques", "PureRandom", "--seeds", "1",
                         "--budgets", "10", "--jobs", "1"]) == 0
    assert list(tmp_path.iterdir()) == []
