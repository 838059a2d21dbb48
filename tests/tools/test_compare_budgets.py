"""tools/compare.py without ``--budgets``: each problem runs to its own largest default budget (its test
limit) and is reported at its own default budgets, also when problems with other budgets run beside it."""
import dataclasses
import json

from tools import compare
from tools.problems import default_problems


def _two_problems(monkeypatch):
    base = default_problems(["rosenbrock4d"])["rosenbrock4d"]
    short, long = dataclasses.replace(base, name="short", budgets=[3, 5]), dataclasses.replace(base, name="long", budgets=[8])
    monkeypatch.setattr(compare, "default_problems", lambda *a, **k: {"short": short, "long": long})


def test_each_problem_runs_to_its_own_largest_budget(tmp_path, monkeypatch, capsys):
    _two_problems(monkeypatch)
    saved = tmp_path / "runs.json"
    assert compare.main(["--techniques", "PureRandom", "--seeds", "1", "--jobs", "1", "--json", str(saved)]) == 0
    runs = json.loads(saved.read_text())
    assert [len(r) - 1 for r in runs["short|PureRandom"]] == [5]        # the last entry is the run's CPU time
    assert [len(r) - 1 for r in runs["long|PureRandom"]] == [8]
    short_block, long_block = capsys.readouterr().out.split("== long")
    assert "@3" in short_block and "@5" in short_block and "@8" not in short_block
    assert "@8" in long_block and "@3" not in long_block and "@5" not in long_block


def test_saved_runs_are_reported_at_each_problem_s_own_budgets(tmp_path, monkeypatch, capsys):
    _two_problems(monkeypatch)
    saved = tmp_path / "runs.json"
    assert compare.main(["--techniques", "PureRandom", "--seeds", "1", "--jobs", "1", "--json", str(saved)]) == 0
    capsys.readouterr()
    assert compare.main(["--from-json", str(saved)]) == 0
    short_block, long_block = capsys.readouterr().out.split("== long")
    assert "@8" not in short_block and "@5" in short_block and "@3" not in long_block
