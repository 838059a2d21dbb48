"""tools/compare.py ``--json FILE``: the runs are written after they are made, so a file in a folder that
does not exist yet must not lose them."""
import dataclasses
import json

from tools import compare
from tools.problems import default_problems


def test_saved_runs_go_to_a_folder_that_does_not_exist_yet(tmp_path, monkeypatch, capsys):
    base = default_problems(["rosenbrock4d"])["rosenbrock4d"]
    tiny = dataclasses.replace(base, name="tiny", budgets=[3])
    monkeypatch.setattr(compare, "default_problems", lambda *a, **k: {"tiny": tiny})
    saved = tmp_path / "new" / "folder" / "runs.json"
    assert compare.main(["--techniques", "PureRandom", "--seeds", "1", "--jobs", "1", "--json", str(saved)]) == 0
    runs = json.loads(saved.read_text())
    assert [len(r) - 1 for r in runs["tiny|PureRandom"]] == [3]       # the last entry is the run's CPU time
