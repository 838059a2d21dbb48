"""python -m tools.history generate: random approaches drawn from the plan seed, uploaded, resumable."""
import sqlite3
import sys
from pathlib import Path

import zygote

from tunerlib.store import CrossSessionStore
from tools.history import CS, WINDOWS, approach

REPO = Path(__file__).resolve().parents[2]   # the checkout holding tools/


def history(tmp_path, problems, runs):
    return zygote.run([sys.executable, "-m", "tools.history", "generate", "--problems", *problems,
                       "--runs", str(runs), "--evaluations", "60", "--jobs", "2", "--seed", "3",
                       "--store", str(tmp_path / "s.db"), "--work-dir", str(tmp_path / "w")],
                      capture_output=True, text=True, timeout=300, cwd=REPO)


def test_plan_depends_on_its_arguments_only():
    assert approach(1, "att48", 0) == approach(1, "att48", 0) != approach(1, "att48", 1)
    draws = {approach(1, "p", i)[1:] for i in range(200)}
    assert {w for w, _ in draws} == set(WINDOWS) and {c for _, c in draws} == set(CS)


def test_generate_uploads_runs_and_a_longer_plan_measures_only_the_new_runs(tmp_path):
    done = history(tmp_path, ["rosenbrock4d", "nosuchproblem"], 1)
    assert done.returncode == 2 and "unknown problem" in done.stderr
    done = history(tmp_path, ["rosenbrock4d", "rosenbrock8d"], 1)
    assert done.returncode == 0, done.stderr
    assert "2 runs of 2 problems" in done.stdout and "2 added" in done.stdout
    con = sqlite3.connect(tmp_path / "s.db")
    metas = {name for (name,) in con.execute("SELECT name FROM meta_technique")}
    assert metas and all(n.startswith("GeneratedBandit;C,") and ";window," in n for n in metas)
    assert con.execute("SELECT count(*) FROM tuning_run_technique").fetchone()[0] >= 2
    con.close()
    done = history(tmp_path, ["rosenbrock4d", "rosenbrock8d"], 2)
    assert done.returncode == 0, done.stderr
    assert "2 added, 2 unchanged" in done.stdout
    with CrossSessionStore(str(tmp_path / "s.db")) as store:
        assert store.counts()["runs"] == 4 and store.counts()["representations"] == 2
