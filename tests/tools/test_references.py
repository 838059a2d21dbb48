"""tools/references.py: peer figures printed under compare.py's tables."""
import pytest

from tunerlib.tools.references import REFERENCES, best_over_opt, reference_lines


def test_every_reference_has_a_known_convention_and_a_plausible_figure():
    for problem, refs in REFERENCES.items():
        for who, budget, fig, conv in refs:
            assert conv in ("opt/best", "best/opt"), (problem, who)
            assert budget > 0
            b = best_over_opt(fig, conv)
            assert b >= 1.0, (problem, who, fig)   # nobody beats the table optimum


def test_lines_show_both_conventions_and_the_kernel_tuner_target():
    lines = reference_lines("pnpoly_rtxtitan", exhaustive_kernel_tuner=True)
    bo = next(line for line in lines if "Kernel Tuner bayes_opt" in line)
    assert "best/opt 1.143x" in bo and "opt/best 0.875" in bo
    assert lines[-1].strip() == "target: median opt/best >= 0.95 at 100 evaluations"


def test_unknown_problem_prints_nothing_unless_it_is_an_exhaustive_kernel_tuner_space():
    assert reference_lines("no_such_problem", exhaustive_kernel_tuner=False) == []
    assert len(reference_lines("no_such_problem", exhaustive_kernel_tuner=True)) == 1


@pytest.mark.parametrize("fig,conv,expected", [(0.8, "opt/best", 1.25), (1.25, "best/opt", 1.25)])
def test_best_over_opt(fig, conv, expected):
    assert best_over_opt(fig, conv) == pytest.approx(expected)


def test_an_installed_copy_without_examples_says_what_to_do(monkeypatch, tmp_path):
    """Installed tools never put examples/ on sys.path: a problem that needs an example's reader
    exits with one line when the checkout is absent, and the shared folder is asked for by name."""
    from tunerlib.tools import problems, replay_problems
    monkeypatch.setattr(problems, "REPO", tmp_path)
    with pytest.raises(SystemExit, match="examples/tsp/tsplib.py .* run the benchmark tools from a source checkout"):
        problems.random_tsp_problem(10)
    monkeypatch.delenv("TUNERLIB_SHARED_DIR")
    monkeypatch.setattr(replay_problems, "__file__", str(tmp_path / "tools" / "replay_problems.py"))
    with pytest.raises(FileNotFoundError, match=r"pass --shared DIR .* or set \$TUNERLIB_SHARED_DIR"):
        replay_problems.shared_data_dir()
