"""The views added to ``tunerlib plot`` and the report: slice and contour, units on every value axis,
labelled category/ordinal/objective values in parallel coordinates, the compare table's caption, and
resumed runs and runs of one label from two script versions marked (never pooled silently). Each figure
is rendered to a real PNG through the CLI (Agg) and read back through its matplotlib objects."""
import importlib.util
import sqlite3

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                reason="the [plot] extra (matplotlib) is not installed")

from tunerlib import MinimizeAttribute, Result, TuningRunManager  # noqa: E402
from tunerlib.cli import main  # noqa: E402
from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, FloatParameter,  # noqa: E402
                                 LogIntegerParameter, OrdinalParameter)
from tunerlib.report.data import by_label, load_runs  # noqa: E402
from tunerlib.report.figures import draw  # noqa: E402

LAYOUTS = ["row", "col", "tiled"]
LEVELS = ["low", "mid", "high"]


def _space():
    return ConfigurationManipulator([LogIntegerParameter("tile", 1, 256), OrdinalParameter("unroll", [1, 2, 4, 8]),
                                     EnumParameter("layout", LAYOUTS), OrdinalParameter("level", LEVELS),
                                     FloatParameter("alpha", 0.0, 1.0)])


def _cost(cfg):
    return (abs(np.log2(cfg["tile"]) - 5) + 0.3 * LAYOUTS.index(cfg["layout"]) + 0.1 * cfg["unroll"]
            + 0.05 * LEVELS.index(cfg["level"]) + 2 * (cfg["alpha"] - 0.4) ** 2 + 1.0)


def _tune(db, label, seed, limit, **options):
    manager = TuningRunManager.for_space(_space(), MinimizeAttribute("cost", unit="ms"), program_name="kernel",
                                         database=db, seed=seed, test_limit=limit, technique=["PureRandom"],
                                         label=label, quiet=True, **options)
    while (desired := manager.get_next_desired_result()) is not None:
        manager.report_result(desired, Result(extra={"cost": _cost(desired.configuration.data)}))
    return manager.finish()


@pytest.fixture(scope="module")
def unit_db(tmp_path_factory):
    """Two runs labelled ``random`` of a space with log, ordinal, enum and float parameters, objective
    ``cost`` in ms; the second run stopped after 15 results and resumed to 30."""
    db = str(tmp_path_factory.mktemp("views") / "kernel.db")
    _tune(db, "random", 1, 30)
    _tune(db, "random", 2, 15)
    _tune(db, "random", 2, 30, resume=True)
    return db


def _gid(fig, gid):
    return [a for a in fig.findobj() if a.get_gid() == gid]


def _png(db, kind, tmp_path, *extra):
    out = tmp_path / f"{kind}.png"
    assert main(["plot", db, "--kind", kind, "-o", str(out), *extra]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000
    return out


def test_slice_plots_the_objective_against_each_parameter(unit_db, tmp_path):
    _png(unit_db, "slice", tmp_path)
    runs = load_runs(unit_db)
    fig = draw("slice", runs)
    ok = [p for r in runs for p in r.points if p.value is not None]
    panels = {ax.get_xlabel(): ax for ax in fig.axes if ax.get_visible() and ax.get_xlabel()}
    assert set(panels) == {"tile (log scale)", "unroll", "layout", "level", "alpha"}
    assert panels["tile (log scale)"].get_xscale() == "log"
    assert [t.get_text() for t in panels["layout"].get_xticklabels()] == LAYOUTS
    assert [t.get_text() for t in panels["level"].get_xticklabels()] == LEVELS
    assert [t.get_text() for t in panels["unroll"].get_xticklabels()] == ["1", "2", "4", "8"]   # ordinal values
    assert [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel() and ax.get_ylabel() != "evaluation"][0] == "cost (ms)"
    for name in ("tile", "unroll", "layout", "level", "alpha"):
        [points] = _gid(fig, f"slice:{name}")
        assert sorted(points.get_offsets()[:, 1]) == pytest.approx(sorted(p.value for p in ok))
        [best] = _gid(fig, f"best:{name}")
        assert best.get_offsets()[0, 1] == pytest.approx(min(p.value for p in ok))
    only = draw("slice", runs, params=["alpha"])
    assert [ax.get_xlabel() for ax in only.axes if ax.get_visible() and ax.get_xlabel()] == ["alpha"]


def test_contour_over_two_parameters(unit_db, tmp_path):
    _png(unit_db, "contour", tmp_path, "--params", "layout,alpha")
    runs = load_runs(unit_db)
    fig = draw("contour", runs, params=["layout", "alpha"])
    ax = fig.axes[0]
    assert ax.get_xlabel() == "layout" and ax.get_ylabel() == "alpha"
    assert [t.get_text() for t in ax.get_xticklabels()] == LAYOUTS
    assert fig.axes[1].get_ylabel() == "predicted cost (ms)"                     # the colorbar
    [mesh] = _gid(fig, "contour")
    z = mesh.get_array().reshape(-1)
    assert z.min() > 0 and np.isfinite(z).all()
    [points] = _gid(fig, "points")
    assert len(points.get_offsets()) == sum(p.value is not None for r in runs for p in r.points)
    default = draw("contour", runs)                    # the two most important: tile and layout here
    assert {default.axes[0].get_xlabel(), default.axes[0].get_ylabel()} == {"tile (log scale)", "layout"}


@pytest.mark.parametrize("args, message", [
    (["--kind", "contour", "--params", "layout,nope"], "--params: no parameter 'nope' to plot; parameters: "),
    (["--kind", "contour", "--params", "layout,alpha,tile"], "the contour view shows two parameters, got 3"),
    (["--kind", "history", "--params", "layout"], "--params chooses the parameters of --kind slice or contour"),
])
def test_bad_params_are_one_line(unit_db, tmp_path, capsys, args, message):
    assert main(["plot", unit_db, "-o", str(tmp_path / "x.png"), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and not (tmp_path / "x.png").exists()


def test_every_value_axis_names_the_unit(unit_db, tmp_path):
    runs = load_runs(unit_db)
    history = draw("history", runs)
    assert [ax.get_ylabel() for ax in history.axes[:2]] == ["best cost (ms)", "best cost (ms)"]
    techniques = draw("techniques", runs)
    assert techniques.axes[0].get_ylabel() == "cost (ms)"
    params = draw("params", runs)
    assert params.axes[1].get_ylabel() == "cost (ms)"                            # the colorbar
    assert params.axes[0].get_xticklabels()[-1].get_text() == "cost (ms)"
    _png(unit_db, "history", tmp_path)


def test_parallel_coordinates_label_inner_values_and_the_objective(unit_db):
    runs = load_runs(unit_db)
    fig = draw("params", runs)
    texts = lambda name: [t.get_text() for t in _gid(fig, f"tick:{name}")]  # noqa: E731
    ok = [p for r in runs for p in r.points if p.value is not None]
    assert texts("layout") == [c for c in LAYOUTS if c in {p.config["layout"] for p in ok}]
    assert texts("level") == [c for c in LEVELS if c in {p.config["level"] for p in ok}]
    assert texts("unroll") == [str(v) for v in sorted({p.config["unroll"] for p in ok})]   # every ordinal value
    objective = [float(t) for t in texts("objective")]
    assert len(objective) == 5 and objective[0] == pytest.approx(min(p.value for p in ok), rel=1e-3)
    assert objective[-1] == pytest.approx(max(p.value for p in ok), rel=1e-3)
    assert "tile (log)" in [t.get_text() for t in fig.axes[0].get_xticklabels()]


def test_a_resumed_run_is_marked(unit_db, tmp_path):
    runs = load_runs(unit_db)
    resumed = [r for r in runs if r.resumes]
    assert len(resumed) == 1 and resumed[0].resumes[0]["after_tests"] == 15
    fig = draw("history", runs)
    [line] = _gid(fig, f"resume:random:{resumed[0].uuid}:evals")
    assert line.get_xdata()[0] == 15.5
    assert "1 resumed" in fig.axes[0].get_legend().get_texts()[0].get_text()
    out = tmp_path / "r.html"
    assert main(["report", unit_db, "-o", str(out)]) == 0
    text = out.read_text()
    assert "<td>2 (1 resumed)</td>" in text and "<th>resumed</th><td>after 15 results, at " in text
    assert "Resumed runs were stopped and continued with --resume" in text


def test_budgets_are_explained_under_the_compare_table(unit_db, tmp_path):
    out = tmp_path / "r.md"
    assert main(["report", unit_db, "-o", str(out)]) == 0
    text = out.read_text()
    assert "best @7 median \\[p20, p80\\] (ms)" in text
    assert ("the budgets @7, @15, @30 are a quarter, half and all of the shortest run's 30 evaluations"
            in text.replace("\\", ""))


def test_runs_of_one_label_from_two_script_versions_are_kept_apart(tmp_path):
    db = str(tmp_path / "two.db")
    for seed in (1, 2, 3):
        _tune(db, "mine", seed, 12)
    with sqlite3.connect(db) as conn:                  # the third run measured by an edited script
        conn.execute("UPDATE tuning_run SET script_version = 'edited' WHERE id = 3")
    runs = load_runs(db)
    groups = by_label(runs)
    assert [len(g) for g in groups.values()] == [2, 1]
    assert list(groups)[1] == "mine [script version edited]"
    fig = draw("history", runs)
    assert len(_gid(fig, "median:mine [script version edited]:evals")) == 1
    out = tmp_path / "r.html"
    assert main(["report", db, "-o", str(out)]) == 0
    text = out.read_text()
    assert "<td>mine [script version edited]</td><td>1</td>" in text
    assert "not pooled: each version has its own row" in text
