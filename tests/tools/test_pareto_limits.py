"""tools/pareto_limits.py: what a model can learn of a table's metrics, and what knowing the time ranking gives."""
import numpy as np
import pytest

from tools.bench_pareto import ParetoProblem
from tools.pareto_limits import cv_r2, main, oracle_median

from other_machine import SHARED, needs_rise


def test_oracle_draws_from_the_fastest_rows():
    front = np.array([(1.0, 4.0), (2.0, 2.0)])
    problem = ParetoProblem("hand", lambda: None, lambda cfg: ("failed", None), front, front.min(axis=0),
                            front.max(axis=0))
    V = np.array([(2.0, 2.0), (9.0, 9.0), (1.0, 4.0), (5.0, 5.0)])
    assert oracle_median(problem, V, m=2, k=2, draws=3) == pytest.approx(1.0)      # the two fastest: the front
    assert oracle_median(problem, V, m=1, k=1, draws=3) == pytest.approx(6 / 11)   # the fastest alone


def test_cv_r2_tells_a_learnable_metric_from_noise():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 3))
    assert cv_r2(X, 3 * X[:, 0] + X[:, 1]) > 0.8
    assert cv_r2(X, rng.normal(size=300)) < 0.2


@needs_rise
def test_cli_prints_both_figures(capsys):
    assert main(["--shared", str(SHARED), "--problems", "rise_kmeans", "--draws", "3", "--picks", "2",
                 "--fastest", "4"]) == 0
    out = capsys.readouterr().out
    assert "rise_kmeans:" in out and "fastest 10 %" in out and "m=4" in out and "k=2:" in out


def test_cli_unknown_problem_is_a_one_line_error(capsys):
    assert main(["--problems", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown problem 'nosuch'" in err[0]
