"""tools/trace_extremes.py: what MultiObjectiveBO's extreme turns spend and gain, traced without
changing the run."""
import pytest

from tools.bench_pareto import hypervolume_ratio, load, run
from tools.trace_extremes import front_share, main, traced_run

from other_machine import SHARED, needs_rise


def test_the_share_a_result_adds_is_measured_against_the_front_with_it():
    front = [(1.0, 4.0), (2.0, 2.0), (4.0, 1.0)]
    assert front_share([], (3.0, 3.0)) == 1.0
    assert front_share(front, (3.0, 3.0)) == 0.0                    # dominated
    # reference 1.1 x the nadir (4, 4): (4.4, 4.4); the front covers 1 x 0.4 + 2 x 2.4 + 0.4 x 3.4
    assert front_share(front, (1.5, 2.5)) == pytest.approx(0.75 / (0.75 + 1 * 0.4 + 2 * 2.4 + 0.4 * 3.4))
    # faster than the whole front, beyond its nadir in the other metric: the reference moves with it
    assert 0 < front_share(front, (0.5, 8.0)) < 0.1


@needs_rise
def test_a_traced_run_is_the_untraced_run_with_every_evaluation_labelled(capsys):
    problem = load(str(SHARED), "rise_kmeans")
    technique = "MultiObjectiveBO;extreme_every,2;initial_samples,4"
    traced = traced_run(problem, technique, 0, 16)
    plain = run(problem, technique, 0, 16)
    assert traced["final"] == pytest.approx(hypervolume_ratio(problem, [v for v in plain if v is not None]))
    assert sum(traced["count"].values()) == 16
    assert sum(traced["added"].values()) == pytest.approx(traced["final"])
    assert traced["count"].get("x0", 0) + traced["count"].get("x1", 0) == sum(traced["turns"].values()) > 0
    assert all(len(traced["gains"][j]) <= traced["turns"][j] for j in (0, 1))
    assert main(["--shared", str(SHARED), "--problems", "rise_kmeans", "--seeds", "1", "--budget", "8",
                 "--technique", technique]) == 0
    assert "rise_kmeans over 1 seeds: " in capsys.readouterr().out


def test_agreement_is_the_rank_correlation_where_the_other_metric_is_good():
    import math

    from tools.trace_extremes import agreement

    # the time falls with s; the second metric rises with s up to 14, then falls with the time
    found = [(30.0 - s, 1.0 + s if s <= 14 else 15.0 - 0.5 * (s - 14)) for s in range(29)]
    assert agreement(found, 1) == pytest.approx(1.0)      # among the fastest half, both fall together
    assert agreement(found, 0) < 0                         # among the most frugal half, they trade
    assert math.isnan(agreement(found[:9], 1))             # too few results
    assert math.isnan(agreement([(float(s), 1.0) for s in range(20)], 0))


@needs_rise
def test_landing_tells_where_each_kind_of_proposal_lands_and_the_tables_figures(capsys):
    technique = "MultiObjectiveBO;extreme_every,2;initial_samples,4"
    assert main(["--shared", str(SHARED), "--problems", "rise_kmeans", "--seeds", "1", "--budget", "16",
                 "--technique", technique, "--landing"]) == 0
    out = capsys.readouterr().out
    assert "rise_kmeans table: " in out and "x the fastest time" in out
    assert "rise_kmeans x0: " in out and "inside the reference box" in out
