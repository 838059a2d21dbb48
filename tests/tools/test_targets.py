"""tools/targets.py: the benchmark targets checked on compare.py's runs (met / missed per technique)."""
import io
import math

import pytest

from tunerlib.techniques import DEFAULT_TECHNIQUE
from tools import compare
from tools.problems import Problem
from tools.targets import problem_target, ratio_at, score_target_lines, target_lines

CACHE = {"replay": True, "family": "kerneltuner", "sparse": False, "table_space": False}
RISE = {"replay": True, "family": "rise", "sparse": False, "table_space": False}
TABLE = {"replay": True, "family": "taco", "sparse": False, "table_space": True}


def _runs(*finals, length=100):
    """One run per final value: 2.0 until the last evaluation, which finds ``final``."""
    return [[2.0] * (length - 1) + [f] for f in finals]


@pytest.mark.parametrize("data,statistic,budget,limit", [
    (CACHE, "median", 100, None), (RISE, "worst", 60, 1.05), (TABLE, "median", 100, 1.10),
    ({**RISE, "table_space": True}, "median", 100, 1.10)])
def test_the_target_follows_from_the_problem_data(data, statistic, budget, limit):
    target = problem_target("p", data)
    assert (target.statistic, target.budget, target.limit) == (statistic, budget, limit)


@pytest.mark.parametrize("data", [{**RISE, "sparse": True}, {**CACHE, "replay": False}, {"replay": True},
                                  {"real": True}])
def test_no_target_for_sparse_whole_spaces_and_non_replays(data):
    assert problem_target("p", data) is None
    assert target_lines("p", data, {"BO": _runs(1.0)}, 1.0, 100) == []


def test_ratio_at_median_and_worst_and_a_run_without_a_value():
    runs = [[3.0, 1.0], [2.0, 2.0], [math.inf, math.inf]]
    assert ratio_at(runs, 1, 1.0, "median") == 3.0
    assert ratio_at(runs, 2, 1.0, "median") == 2.0
    assert ratio_at(runs, 2, 1.0, "worst") == math.inf


def test_a_cache_compares_with_the_default_technique_of_the_same_run():
    runs = {DEFAULT_TECHNIQUE: _runs(1.02, 1.01, 1.03), "BO": _runs(1.0, 1.0, 1.5), "Worse": _runs(1.03, 1.03, 1.03)}
    lines = target_lines("gemm_rtxtitan", CACHE, runs, 1.0, 150)
    assert f"1.020x ({DEFAULT_TECHNIQUE} (this run))" in lines[0]
    assert lines[1].strip() == "BO: median 1.000x over 3 runs -- met"
    assert lines[2].strip() == "Worse: median 1.030x over 3 runs -- missed by 0.980 %"
    assert not any(line.strip().startswith(DEFAULT_TECHNIQUE + ":") for line in lines)


def test_a_cache_with_a_recorded_ga_figure_uses_the_better_of_both():
    """conv_a100's recorded Kernel Tuner GA figure is opt/best 0.88 (1.136x): a bandit at 1.2x
    leaves the GA's figure as the target, and without the bandit the GA's figure alone."""
    runs = {DEFAULT_TECHNIQUE: _runs(1.2), "BO": _runs(1.1)}
    lines = target_lines("conv_a100", CACHE, runs, 1.0, 100)
    assert "1.136x (Kernel Tuner GA (recorded))" in lines[0]
    assert lines[1].strip().endswith("-- met")
    alone = target_lines("conv_a100=/tmp/other.json.gz", CACHE, {"BO": _runs(1.2)}, 1.0, 100)
    assert "Kernel Tuner GA (recorded)" in alone[0] and "missed by 5.6 %" in alone[1]


def test_a_cache_without_anything_to_compare_with_says_what_to_run():
    lines = target_lines("gemm_rtx3090", CACHE, {"BO": _runs(1.0)}, 1.0, 100)
    assert len(lines) == 1 and f"not checked: run {DEFAULT_TECHNIQUE} beside it" in lines[0]


def test_rise_worst_seed_at_60_and_short_runs_are_not_checked():
    runs = {"BO": [[2.0] * 59 + [1.0], [2.0] * 60 + [1.0]]}      # the second run finds it at 61
    lines = target_lines("rise_kmeans", RISE, runs, 1.0, 100)
    assert lines[1].strip() == "BO: worst 2.000x over 2 runs -- missed by 90.5 %"
    short = target_lines("rise_kmeans", RISE, runs, 1.0, 50)
    assert len(short) == 1 and "not checked: the runs stop at 50 evaluations (pass --budgets ... 60)" in short[0]


def test_a_tiny_miss_shows_its_size():
    runs = {DEFAULT_TECHNIQUE: _runs(1.0030), "BO": _runs(1.0033)}
    assert target_lines("dedisp_a100", CACHE, runs, 1.0, 100)[1].strip().endswith("missed by 0.030 %")


def test_table_median_at_100():
    lines = target_lines("taco_spmm@table", TABLE, {"BO": _runs(1.1, 1.05, 1.3)}, 1.0, 100)
    assert lines[1].strip() == "BO: median 1.100x over 3 runs -- met"


def test_score_targets_are_checked_on_the_kernel_tuner_caches_only():
    scores = {"BayesianOptimization": {"c1": 0.5, "c2": 0.6, "rise_kmeans": -3.0}, DEFAULT_TECHNIQUE: {"c1": 0.47}}
    lines = score_target_lines(scores, ["c1", "c2"])
    assert lines[0].strip() == ("target: BayesianOptimization >= 0.6 on the Kernel Tuner caches: "
                                "0.550 over the 2 of this run -- missed")
    assert lines[1].strip().endswith("0.470 over the 1 of this run -- met")
    assert all("(not in this run)" in line for line in score_target_lines({}, ["c1"]))
    assert "(no Kernel Tuner cache in this run)" in score_target_lines(scores, [])[0]


def test_compare_report_prints_the_verdicts_under_the_problem():
    problem = Problem("rise_toy", lambda: None, lambda c: 0.0, 1.0, [60], data=dict(RISE))
    results = {("rise_toy", "Good"): _runs(1.0, 1.01, length=60), ("rise_toy", "Bad"): _runs(1.0, 1.2, length=60)}
    out = io.StringIO()
    compare.report(results, {"rise_toy": problem}, [20, 60], out)
    text = out.getvalue()
    assert "target: worst seed's best/opt at 60 evaluations <= 1.05" in text
    assert "Good: worst 1.010x over 2 runs -- met" in text
    assert "Bad: worst 1.200x over 2 runs -- missed by 14.3 %" in text


def test_auto_is_checked_against_the_best_other_technique_and_g_at_every_budget():
    from tools.targets import auto_lines
    runs = {"auto": _runs(1.010, 1.012, 1.011), "BayesianOptimization": _runs(1.000, 1.001, 1.002),
            "AUCBanditMetaTechniqueG": _runs(1.3, 1.2, 1.25), "Far": _runs(1.5, 1.5, 1.5)}
    lines = auto_lines(runs, [50, 100], 1.0)
    assert len(lines) == 2
    assert lines[0].startswith("  auto check @50: auto median 2x, best other AUCBanditMetaTechniqueG")
    assert "best other BayesianOptimization 1.001x" in lines[1] and lines[1].count("-- met") == 1
    assert "AUCBanditMetaTechniqueG 1.25x -- not worse" in lines[1]
    runs["auto"] = _runs(1.1, 1.1, 1.1)
    assert "-- missed" in auto_lines(runs, [100], 1.0)[0]
    assert auto_lines({"auto": _runs(1.0)}, [100], 1.0) == []


def test_the_auto_check_band_is_the_80th_percentile_the_report_prints():
    from tools.compare_report import report
    from tools.targets import auto_lines
    other = _runs(*(1.00 + i / 100 for i in range(10)))       # median 1.045, 8th best of 10: 1.07
    runs = {"auto": _runs(*[1.08] * 10), "Other": other}
    line = auto_lines(runs, [100], 1.0)[0]
    assert "best other Other 1.045x (80th percentile 1.07x) -- missed" in line
    out = io.StringIO()
    report({("p", t): r for t, r in runs.items()}, {"p": Problem("p", lambda: None, lambda c: 0.0, 1.0, [100])},
           [100], out)
    assert "1.045 [1.02, 1.07]" in out.getvalue()
    five = {"auto": _runs(*[1.35] * 5), "Other": _runs(1.0, 1.1, 1.2, 1.3, 1.4)}
    assert "(80th percentile 1.3x) -- missed" in auto_lines(five, [100], 1.0)[0]


def test_the_auto_check_gives_no_verdict_when_most_runs_found_no_value():
    from tools.targets import auto_lines
    none = [[math.inf] * 60] * 3
    runs = {"auto": none, "AUCBanditMetaTechniqueG": none, "Other": none}
    line = auto_lines(runs, [60], 1.0)[0]
    assert line.endswith("-- no verdict (most runs found no value); AUCBanditMetaTechniqueG infx -- "
                         "no verdict (most runs found no value)")
    runs["Other"] = [[math.inf] * 59 + [1.0]] * 2 + none[:1]             # median 1.0, 80th percentile inf
    assert "-- missed" in auto_lines(runs, [60], 1.0)[0]
    runs["auto"] = [[math.inf] * 59 + [1.5]] * 3
    assert auto_lines(runs, [60], 1.0)[0].endswith("-- met; AUCBanditMetaTechniqueG infx -- not worse")


def test_compare_prints_the_auto_check(monkeypatch):
    problem = Problem("p", lambda: None, lambda c: 0.0, 1.0, [10])
    results = {("p", "auto"): [[2.0] * 9 + [1.0] + [-0.1]], ("p", "PureRandom"): [[2.0] * 10 + [-0.1]]}
    out = io.StringIO()
    compare.report(results, {"p": problem}, [10], out=out)
    assert "auto check @10: auto median 1x, best other PureRandom 2x (80th percentile 2x) -- met" in out.getvalue()
