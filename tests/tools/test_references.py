"""tools/references.py: peer figures printed under compare.py's tables."""
import pytest

from tools.references import REFERENCES, best_over_opt, reference_lines


def test_every_reference_has_a_known_convention_and_a_plausible_figure():
    for problem, refs in REFERENCES.items():
        for who, budget, fig, conv in refs:
            assert conv in ("opt/best", "best/opt"), (problem, who)
            assert budget > 0
            b = best_over_opt(fig, conv)
            assert b >= 1.0, (problem, who, fig)   # nobody beats the table optimum


def test_lines_show_both_conventions_and_no_withdrawn_target():
    lines = reference_lines("pnpoly_rtxtitan")
    bo = next(line for line in lines if "Kernel Tuner bayes_opt" in line)
    assert "best/opt 1.143x" in bo and "opt/best 0.875" in bo
    assert not any("0.95" in line and "target" in line for line in lines)   # no longer a target


def test_unknown_problem_prints_nothing_and_the_bo_targets_stay():
    assert reference_lines("no_such_problem") == []
    assert reference_lines("rise_kmeans")[-1].strip().startswith("target: median <= 1.01")


@pytest.mark.parametrize("fig,conv,expected", [(0.8, "opt/best", 1.25), (1.25, "best/opt", 1.25)])
def test_best_over_opt(fig, conv, expected):
    assert best_over_opt(fig, conv) == pytest.approx(expected)


def test_an_installed_copy_without_examples_says_what_to_do(monkeypatch, tmp_path):
    """Installed tools never put examples/ on sys.path: a problem that needs an example's reader
    loads it from --examples DIR (default: examples/ beside a checkout) and exits with one line
    saying to pass it when there is none; the shared folder is asked for by name."""
    import sys

    from tools import example_problems, problems, replay_problems
    path_before = list(sys.path)
    with pytest.raises(SystemExit, match=r"compare: .*tsp/tsplib.py is missing; pass --examples DIR"):
        problems.random_tsp_problem(10, examples=tmp_path)
    with pytest.raises(SystemExit, match=r"--examples .*: no such folder"):
        problems.random_tsp_problem(10, examples=tmp_path / "nowhere")
    monkeypatch.setattr(example_problems, "CHECKOUT_EXAMPLES", tmp_path / "nowhere")
    with pytest.raises(SystemExit, match=r"no examples folder beside this installed copy; pass --examples DIR"):
        problems.random_tsp_problem(10)
    monkeypatch.undo()
    assert problems.random_tsp_problem(6).data["n"] == 6      # the checkout's examples/, loaded by path
    assert sys.path == path_before
    monkeypatch.delenv("TUNERLIB_SHARED_DIR")
    with pytest.raises(FileNotFoundError, match=r"pass --shared DIR or set \$TUNERLIB_SHARED_DIR"):
        replay_problems.shared_data_dir()
    assert not problems.shared_root().exists()
    with pytest.raises(SystemExit, match=r"unknown problem\(s\) \['att48'\].*pass --shared DIR or set"):
        problems.default_problems(["att48"])


def test_randomatsp_names_a_random_asymmetric_tour_problem():
    import numpy as np

    from tools import problems
    prob = problems.default_problems(["randomatsp12"])["randomatsp12"]
    M = np.asarray(prob.data["matrix"])
    assert M.shape == (12, 12) and not np.array_equal(M, M.T)
    assert prob.optimum is not None and prob.evaluate({"tour": list(range(12))}) >= prob.optimum


def test_the_default_techniques_table_targets_are_printed_under_their_table_problems():
    assert reference_lines("rise_mm@table") == ["  target: median <= 1.02 best/opt at 100 (auto)"]
    assert "every seed within 1% at 20 (auto)" in reference_lines("rise_kmeans")[-1]
