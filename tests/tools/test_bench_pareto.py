"""tools/bench_pareto.py: the hypervolume ratio of a found front against a table's true front."""
import numpy as np
import pytest

from tools.bench_pareto import (ParetoProblem, hypervolume_ratio, load, main, normalised_hypervolume_ratio,
                                ratios_at, reference_point)
from tunerlib.techniques import dominates

from other_machine import SHARED, needs_kt, needs_rise


def _problem(front):
    pts = np.asarray(front, dtype=float)
    return ParetoProblem("hand", lambda: None, lambda cfg: ("failed", None), pts, pts.min(axis=0), pts.max(axis=0))


#: true front (1, 4), (2, 2): nadir (2, 4), reference 1.1 x nadir = (2.2, 4.4); its hypervolume is
#: 1.2 x 0.4 (below (1, 4)) + 0.2 x 2.4 (below (2, 2)) - 0.2 x 0.4 (counted twice) = 0.88
TWO = _problem([(1.0, 4.0), (2.0, 2.0)])


def test_reference_is_one_point_one_times_the_true_nadir():
    assert reference_point(np.array([2.0, 4.0])) == pytest.approx([2.2, 4.4])
    assert reference_point(np.array([-2.0, 0.0])) == pytest.approx([-1.8, 0.1])   # 10 % beyond, also there


def test_two_point_front_by_hand():
    assert hypervolume_ratio(TWO, [(1.0, 4.0), (2.0, 2.0)]) == pytest.approx(1.0)
    assert hypervolume_ratio(TWO, [(2.0, 2.0)]) == pytest.approx(0.2 * 2.4 / 0.88)      # 6/11
    assert hypervolume_ratio(TWO, [(1.0, 4.0)]) == pytest.approx(1.2 * 0.4 / 0.88)      # 6/11
    assert hypervolume_ratio(TWO, [(2.1, 4.2)]) == pytest.approx(0.1 * 0.2 / 0.88)      # dominated, still counts
    assert hypervolume_ratio(TWO, [(2.3, 1.0)]) == 0.0                                  # beyond the reference
    assert hypervolume_ratio(TWO, []) == 0.0


def test_normalised_ratio_is_the_second_stricter_figure():
    # normalised: (0, 1), (1, 0), reference (1.1, 1.1): 1.1 x 0.1 + 0.1 x 1.1 - 0.1 x 0.1 = 0.21
    assert normalised_hypervolume_ratio(TWO, [(2.0, 2.0)]) == pytest.approx(0.1 * 1.1 / 0.21)   # 11/21
    assert normalised_hypervolume_ratio(TWO, [(2.0, 2.0)]) < hypervolume_ratio(TWO, [(2.0, 2.0)])


def test_ratios_at_counts_failed_evaluations_as_spent():
    vectors = [None, (2.0, 2.0), None, (1.0, 4.0)]
    assert ratios_at(TWO, vectors, [1, 2, 4]) == pytest.approx([0.0, 6 / 11, 1.0])
    assert ratios_at(TWO, vectors, [2], normalised_hypervolume_ratio) == pytest.approx([11 / 21])


@needs_rise
def test_cli_prints_both_figures(capsys):
    assert main(["--shared", str(SHARED), "--problems", "rise_kmeans", "--seeds", "1", "--budgets", "3,5",
                 "--techniques", "PureRandom", "--normalised"]) == 0
    out = capsys.readouterr().out
    assert "rise_kmeans: true front" in out
    assert "PureRandom [normalised]" in out
    header = next(line for line in out.splitlines() if line.startswith("technique"))
    assert header.split()[-2:] == ["cpu", "s/eval"]            # processor seconds per evaluation
    row = next(line for line in out.splitlines() if line.startswith("PureRandom "))
    assert float(row.split()[-1]) >= 0.0


def test_cli_unknown_problem_is_a_one_line_error(capsys):
    assert main(["--problems", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown problem 'nosuch'" in err[0]


@needs_kt
@pytest.mark.parametrize("name", ["conv_a4000", "conv_mi250x", "dedisp_a4000", "dedisp_mi250x"])
def test_other_gpus_caches_load_with_their_compile_time(name):
    problem = load(str(SHARED), name)
    assert len(problem.front) > 0 and len(problem.points) > len(problem.front)
    assert (problem.ideal > 0).all() and (problem.nadir >= problem.ideal).all()
    assert not any(dominates(a, b) for a in problem.front for b in problem.front)     # non-dominated
    assert not any(dominates(p, f) for p in problem.points for f in problem.front)   # nothing in the table beats it
    assert hypervolume_ratio(problem, problem.front) == pytest.approx(1.0)


def test_without_problems_only_the_development_tables_run(monkeypatch, capsys):
    loaded = []
    monkeypatch.setattr("tools.bench_pareto.load", lambda shared, name: loaded.append(name) or _problem([(1.0, 1.0)]))
    assert main(["--techniques", "NoSuchTechnique", "--seeds", "1"]) == 0
    assert loaded == ["rise_kmeans", "rise_stencil", "conv_a100", "dedisp_a100"]
    loaded.clear()
    assert main(["--problems", "conv_mi250x", "--techniques", "NoSuchTechnique", "--seeds", "1"]) == 0
    assert loaded == ["conv_mi250x"]
    assert "NoSuchTechnique is not registered here" in capsys.readouterr().err
