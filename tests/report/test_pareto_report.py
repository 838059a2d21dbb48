"""The front of a multi-objective run in ``tunerlib plot --kind front``, the report and ``export``."""
import csv
import io
import subprocess
import sys

import pytest

from tunerlib import Result, TuningRunManager
from tunerlib.multiobjective import MultiObjective
from tunerlib.objectives import MaximizeAttribute, MinimizeAttribute, MinimizeTime
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.report.data import load_runs
from tunerlib.report.pareto import front_members, hypervolume_curve, oriented, reference_point
from tunerlib.techniques.pareto import hypervolume, non_dominated

CLI = [sys.executable, "-c", "import sys; from tunerlib.cli import main; sys.exit(main(sys.argv[1:]))"]


def _run(path, objectives, n=40):
    m = ConfigurationManipulator([IntegerParameter("x", 0, 30), IntegerParameter("y", 0, 30)])
    manager = TuningRunManager.for_space(m, objectives, database=str(path), technique=["PureRandom"],
                                         test_limit=n, seed=2, quiet=True)
    while (desired := manager.get_next_desired_result()) is not None:
        c = desired.configuration.data
        if c["x"] % 5 == 3:
            manager.report_result(desired, Result(state="ERROR"))
            continue
        manager.report_result(desired, Result(time=1 + c["x"], extra={"q": c["y"] - c["x"] / 2, "z": c["y"] % 7}))
    manager.finish()


def test_front_and_hypervolume_curve_of_a_run(tmp_path):
    db = tmp_path / "r.db"
    _run(db, MultiObjective([MinimizeTime(), MaximizeAttribute("q")]))
    run = load_runs(str(db))[0]
    vectors = oriented(run)
    ok = [v for v in vectors if v is not None]
    assert len(ok) < len(vectors)                         # the ERROR results are left out
    assert {vectors[i] for i in front_members(run)} == {ok[i] for i in non_dominated(ok)}
    assert any(v[1] < 0 for v in ok)                      # q maximised: negated
    xs, ys = hypervolume_curve(run)
    assert ys == sorted(ys) and xs == sorted(xs)
    ref = reference_point(__import__("numpy").asarray([vectors[i] for i in front_members(run)]))
    assert ys[-1] == pytest.approx(hypervolume(ok, ref))
    for x, y in zip(xs, ys):   # each step is the hypervolume of the first x results
        first = [v for p, v in zip(run.points, vectors) if v is not None and p.index <= x]
        assert y == pytest.approx(hypervolume(first, ref))


def test_plot_report_and_export_through_the_cli(tmp_path):
    db = tmp_path / "r.db"
    _run(db, MultiObjective([MinimizeTime(), MaximizeAttribute("q"), MinimizeAttribute("z")]))
    cli = CLI
    out = subprocess.run(cli + ["plot", str(db), "--kind", "front", "-o", str(tmp_path / "f.svg")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    svg = (tmp_path / "f.svg").read_text()
    assert 'id="front' in svg and 'id="hypervolume:' in svg
    for ext in ("png", "html"):
        out = subprocess.run(cli + ["plot", str(db), "--kind", "front", "-o", str(tmp_path / f"f.{ext}")],
                             capture_output=True, text=True)
        assert out.returncode == 0 and (tmp_path / f"f.{ext}").stat().st_size > 1000
    out = subprocess.run(cli + ["report", str(db), "-o", str(tmp_path / "r.html")], capture_output=True, text=True)
    assert out.returncode == 0 and "Pareto front and hypervolume" in (tmp_path / "r.html").read_text()
    out = subprocess.run(cli + ["export", str(db)], capture_output=True, text=True)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    run = load_runs(str(db))[0]
    members = set(front_members(run))
    assert [r["on_pareto_front"] == "True" for r in rows] == [i in members for i in range(len(rows))]


def test_the_front_figure_needs_a_multi_objective_run(tmp_path):
    db = tmp_path / "s.db"
    _run(db, MinimizeTime(), n=5)
    out = subprocess.run(CLI + ["plot", str(db), "--kind", "front", "-o",
                          str(tmp_path / "f.png")], capture_output=True, text=True)
    assert out.returncode == 2 and "several objectives" in out.stderr
    rows = subprocess.run(CLI + ["export", str(db)], capture_output=True, text=True)
    assert "on_pareto_front" not in rows.stdout.splitlines()[0]
