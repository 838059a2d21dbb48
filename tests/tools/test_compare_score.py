"""tools/compare.py --score: the score per problem, its mean over problems, the runs within 5 % of the
optimum and the Kernel Tuner reference lines."""
import io
import json

import pytest

from tools import compare
from tools.problems import SHARED, Problem
from tools.references import published_scores, score_reference_lines
from tools.score import make_population

KT_CACHE = SHARED / "data" / "gpu_cache" / "kerneltuner_hub" / "convolution_milo" / "MI250X.trimmed.json.gz"


def test_report_scores_a_synthetic_table():
    problem = Problem("toy", lambda: None, lambda c: 0.0, 1.0, [2],
                      data={"population": make_population([1.0, 2.0, 3.0, 4.0, None])})
    results = {("toy", "Lucky"): [[1.0, 4.0, -0.1]] * 2, ("toy", "Unlucky"): [[float("inf"), 4.0, -0.1]]}
    out = io.StringIO()
    compare.report(results, {"toy": problem}, [1, 2], out, score=True)
    text = out.getvalue()
    assert "runs within 5% of the optimum: @1 2/2, @2 2/2" in text
    lucky = next(line for line in text.splitlines() if line.strip().startswith("Lucky") and "sd over runs" in line)
    assert " 1.000 (sd over runs 0.000, n=2)" in lucky
    unlucky = next(line for line in text.splitlines() if line.strip().startswith("Unlucky") and "sd" in line)
    assert float(unlucky.split()[1]) < 0
    assert "== autotuning-methodology score per space" in text
    assert "target: BayesianOptimization >= 0.6" in text


def test_report_without_a_table_says_why():
    problem = Problem("fn", lambda: None, lambda c: 0.0, 0.0, [2])
    out = io.StringIO()
    compare.report({("fn", "PureRandom"): [[2.0, 1.0]]}, {"fn": problem}, [2], out, score=True)
    assert "score: needs an exhaustively recorded space" in out.getvalue()
    assert "== autotuning-methodology score" not in out.getvalue()


def test_published_scores_are_the_best_per_strategy(tmp_path):
    cache = {"a,1": {"score": 0.2}, "b,2": {"score": 0.5}, "c,3": {"score": "InvalidConfig"}}
    (tmp_path / "kt_hyperparamtuning_scores_pso.json").write_text(json.dumps({"cache": cache}))
    assert published_scores(tmp_path) == [("pso", 0.5, "b,2")]
    lines = score_reference_lines(tmp_path)
    assert any("published Kernel Tuner pso" in line and "0.500" in line and "not directly comparable" in line
               for line in lines)
    assert any("simulated_annealing" in line and "0.344" in line for line in lines)
    assert published_scores(tmp_path / "absent") == []


@pytest.mark.skipif(not KT_CACHE.exists(), reason=f"Kernel Tuner cache not found: {KT_CACHE}")
def test_compare_score_end_to_end_on_a_kernel_tuner_cache(tmp_path, capsys):
    saved = tmp_path / "runs.json"
    argv = ["--problems", "conv_mi250x", "--techniques", "PureRandom", "--seeds", "2", "--budgets", "5", "20",
            "--jobs", "1", "--score"]
    assert compare.main(argv + ["--json", str(saved)]) == 0
    first = capsys.readouterr().out
    assert "runs within 5% of the optimum: @5" in first
    line = next(x for x in first.splitlines() if x.strip().startswith("PureRandom") and "sd over runs" in x)
    assert "time-based" in line and "median-rank" in line and "n=2" in line
    assert "mean over evaluations 2..20" in first
    values = json.loads(saved.read_text())
    assert set(values) == {"conv_mi250x|PureRandom", "conv_mi250x|PureRandom|simulated_s", "@units"}
    assert values["@units"] == {"conv_mi250x": "s"}
    assert compare.main(argv + ["--from-json", str(saved)]) == 0     # the saved costs give the same scores
    again = capsys.readouterr().out
    assert line in again
    # without --budgets the saved runs are scored over the evaluations they were scored over when made
    assert compare.main([a for a in argv if a not in ("--budgets", "5", "20")] + ["--from-json", str(saved)]) == 0
    assert line in capsys.readouterr().out
    # a file saved before replayed times were seconds holds ms and no units: read as ms, the same report
    old = {k: ([[1000 * v if v >= 0 else v for v in run] for run in runs] if k == "conv_mi250x|PureRandom" else runs)
           for k, runs in values.items() if k != "@units"}
    saved.write_text(json.dumps(old))
    assert compare.main(argv + ["--from-json", str(saved)]) == 0
    assert capsys.readouterr().out == again
