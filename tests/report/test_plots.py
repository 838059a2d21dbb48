"""``tunerlib plot``: every kind renders headless (Agg) to PNG, SVG and HTML, and what each figure shows is
checked against the results database read directly."""
import importlib.util
import json
import subprocess
import sys
import warnings
from collections import Counter

import numpy as np
import pytest

# a skip marker, not importorskip: collection (in every test process) need not import matplotlib
pytestmark = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                reason="the [plot] extra (matplotlib) is not installed")

from tunerlib.cli import main
from tunerlib.db import ResultsDB
from tunerlib.report.data import load_runs
from tunerlib.report.figures import KINDS, draw

from reportkit import RUNS_PER_LABEL, best_so_far, db_values

import zygote


def _runs_by_label(path):
    with ResultsDB(path) as db:
        runs = {}
        for info in db.list_runs():
            runs.setdefault(info["label"], []).append(info["id"])
        return runs


def _artists(fig, gid):
    return [a for a in fig.findobj() if a.get_gid() == gid]


#: "front" needs a run with several objectives: tests/report/test_pareto_report.py renders it
@pytest.mark.parametrize("kind", [k for k in KINDS if k != "front"])
@pytest.mark.parametrize("ext", ["png", "svg", "html"])
def test_every_kind_renders_to_every_format(results_db, tmp_path, capsys, kind, ext):
    out = tmp_path / f"{kind}.{ext}"
    assert main(["plot", results_db, "--kind", kind, "-o", str(out)]) == 0
    data = out.read_bytes()
    if ext == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    else:
        assert b"<svg" in data and b"</svg>" in data
    if ext == "html":
        assert data.startswith(b"<!DOCTYPE html>") and b"<script" not in data
    assert f"wrote {out}" in capsys.readouterr().out


def test_history_median_is_the_median_of_the_databases_best_so_far(results_db):
    fig = draw("history", load_runs(results_db))
    for label, ids in _runs_by_label(results_db).items():
        curves = np.array([best_so_far(db_values(results_db, i)) for i in ids])
        [line] = _artists(fig, f"median:{label}:evals")
        x, y = line.get_data()
        assert list(x) == list(range(1, curves.shape[1] + 1))
        np.testing.assert_allclose(y, np.nanmedian(curves, axis=0))
        assert _artists(fig, f"band:{label}:evals") and _artists(fig, f"band:{label}:time")
        assert f"median of {RUNS_PER_LABEL} runs" in line.get_label()


def test_history_vs_time_uses_the_recorded_times(results_db):
    fig = draw("history", load_runs(results_db))
    with ResultsDB(results_db) as db:
        infos = {i["id"]: i for i in db.list_runs()}
        rows = {i: db.run_results(i) for i in infos}
    for label, ids in _runs_by_label(results_db).items():
        [line] = _artists(fig, f"median:{label}:time")
        grid, y = line.get_data()
        expected = []
        for run_id in ids:
            start = infos[run_id]["start_date"]
            seen = [(r.collection_date - start, r.extra["value"] if r.state == "OK" else np.inf) for r in rows[run_id]]
            # a run that ended keeps its final best
            expected.append([min([v for s, v in seen if s <= t], default=np.inf) for t in grid])
        expected = np.where(np.isinf(expected), np.nan, expected)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)      # all-NaN columns before any result
            np.testing.assert_allclose(y, np.nanmedian(expected, axis=0))


def test_history_marks_every_failure_by_state(results_db):
    fig = draw("history", load_runs(results_db))
    for label, ids in _runs_by_label(results_db).items():
        expected = Counter()
        for run_id in ids:
            expected.update((state, i) for i, (state, _) in enumerate(db_values(results_db, run_id), 1)
                            if state != "OK")
        drawn = Counter()
        for state in ("ERROR", "TIMEOUT", "INFEASIBLE"):
            for artist in _artists(fig, f"fail:{state}:{label}:evals"):
                drawn.update((state, int(x)) for x, _ in artist.get_offsets())
        assert drawn == expected
    states = {s for ids in _runs_by_label(results_db).values() for i in ids for s, _ in db_values(results_db, i)}
    assert {"ERROR", "TIMEOUT", "INFEASIBLE", "OK"} <= states     # the fixture has every state


def test_log_scale(results_db):
    fig = draw("history", load_runs(results_db), log=True)
    assert fig.axes[0].get_yscale() == "log"


def test_new_bests_are_the_databases_new_bests_with_their_technique(results_db):
    fig = draw("techniques", load_runs(results_db))
    with ResultsDB(results_db) as db:
        for label, ids in _runs_by_label(results_db).items():
            expected = Counter()
            for run_id in ids:
                for index, row in enumerate(db.run_results(run_id), 1):
                    if row.was_new_best:
                        technique = row.requestor.split("/")[-1]
                        expected[(technique, index, round(row.extra["value"], 9))] += 1
            drawn = Counter()
            for artist in fig.findobj():
                gid = artist.get_gid() or ""
                if gid.startswith(f"newbest:{label}:"):
                    technique = gid.split(":", 2)[2]
                    drawn.update((technique, int(x), round(y, 9)) for x, y in artist.get_offsets())
            assert drawn == expected
    assert "seed" in {k[0] for k in expected} or label == "random"


def test_allocation_shares_follow_the_requests(results_db):
    runs = load_runs(results_db)
    fig = draw("techniques", runs)
    with ResultsDB(results_db) as db:
        for label, ids in _runs_by_label(results_db).items():
            requested = {r.requestor.split("/")[-1] for i in ids for r in db.desired_results(i)}
            polys = {a.get_gid().split(":", 2)[2]: a for a in fig.findobj()
                     if (a.get_gid() or "").startswith(f"alloc:{label}:")}
            assert set(polys) == requested
            tops = [max(v[1] for v in p.get_paths()[0].vertices) for p in polys.values()]
            assert max(tops) == pytest.approx(1.0)
    assert set(_alloc(fig, "random")) == {"PureRandom"}


def _alloc(fig, label):
    return [a.get_gid().split(":", 2)[2] for a in fig.findobj() if (a.get_gid() or "").startswith(f"alloc:{label}:")]


def test_parallel_coordinates_show_every_successful_result(results_db):
    fig = draw("params", load_runs(results_db))
    [lines] = _artists(fig, "configs")
    with ResultsDB(results_db) as db:
        ok = [r for info in db.list_runs() for r in db.run_results(info["id"]) if r.state == "OK"]
    segments = lines.get_segments()
    assert len(segments) == len(ok)
    best = min(ok, key=lambda r: r.extra["value"])
    [line] = _artists(fig, "best")
    x, y = line.get_data()
    xs = [r.config_data["x"] for r in ok]
    assert y[-1] == 0.0                                   # objective axis: the best value is lowest
    assert y[1] == pytest.approx((best.config_data["x"] - min(xs)) / (max(xs) - min(xs)))
    assert y[0] == ["a", "b", "c"].index(best.config_data["mode"]) / 2
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["mode", "x", "y", "objective"]


def test_importance_finds_the_parameter_that_matters(results_db):
    fig = draw("importance", load_runs(results_db))
    bars = _artists(fig, "importance")
    widths = {t.get_text(): p.get_width() for t, p in zip(fig.axes[0].get_yticklabels(), bars)}
    assert set(widths) == {"x", "y", "mode"}
    assert widths["x"] > 0.8 and widths["mode"] < 0.05 and sum(widths.values()) <= 1.02


def test_labels_select_runs(results_db, tmp_path):
    fig = draw("history", load_runs(results_db, ["random"]))
    assert _artists(fig, "median:random:evals") and not _artists(fig, "median:bandit:evals")


@pytest.mark.parametrize("args, message", [
    (["--label", "nope"], "no run labelled 'nope'"),
    (["-o", "out.jpg"], "must end in .png, .svg, .html"),
])
def test_bad_arguments_are_one_line_exit_2(results_db, tmp_path, capsys, args, message):
    args = [a if a != "out.jpg" else str(tmp_path / a) for a in args]
    assert main(["plot", results_db, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_databases_are_one_line_exit_2(tmp_path, empty_db, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 50)
    cases = {str(text): "cannot read", str(tmp_path / "missing.db"): "no results database at",
             empty_db: "have no results"}
    for path, message in cases.items():
        for command in (["plot", path], ["report", path, "-o", str(tmp_path / "r.html")],
                        ["export", path]):
            assert main(command) == 2, command
            err = capsys.readouterr().err
            assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "missing.db").exists()
    # the same through the installed entry point (a real process: exit status and stderr)
    proc = zygote.run([sys.executable, "-m", "tunerlib.cli", "report", str(text)], capture_output=True,
                      text=True, cwd=tmp_path)
    assert proc.returncode == 2 and "cannot read" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_a_database_of_another_program_is_refused(tmp_path):
    import sqlite3
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("create table t (a int)")
    assert main(["export", str(path)]) == 2


def test_importing_tunerlib_and_help_do_not_import_matplotlib():
    code = ("import sys, tunerlib, tunerlib.cli\n"
            "try:\n    tunerlib.cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "try:\n    tunerlib.cli.main(['plot', '--help'])\nexcept SystemExit:\n    pass\n"
            "import json; print(json.dumps(sorted(m for m in sys.modules if m.startswith(('matplotlib', 'sklearn.ensemble')))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_the_technique_credited_is_the_one_that_proposed():
    from tunerlib.report.data import credited_technique
    assert credited_technique("AUCBanditMetaTechniqueA/RandomNelderMead") == "RandomNelderMead"
    assert credited_technique("StructuralSurrogate/AUCBanditMetaTechniqueA/NormalGreedyMutation30") == \
        "NormalGreedyMutation30"
    assert credited_technique("StructuralSurrogate") == "StructuralSurrogate"
    assert (credited_technique("seed"), credited_technique(None)) == ("seed", "unknown")


def test_without_matplotlib_plot_names_the_extra(results_db, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["plot", results_db, "-o", str(tmp_path / "h.png")]) == 2
    assert capsys.readouterr().err == "tunerlib plot: error: plots need matplotlib: pip install 'tunerlib[plot]'\n"
