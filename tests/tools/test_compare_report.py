"""tools/compare.py's report: baselines of a problem are printed next to each technique's best."""
import io

from tools import compare
from tools.problems import Problem


def test_report_prints_best_over_each_baseline():
    calls = []

    def baselines():
        calls.append(1)
        return {"default": 10.0, "Adams2019": 2.0}

    problem = Problem("toy", lambda: None, lambda c: 0.0, None, [2], data={"baselines_fn": baselines})
    results = {("toy", "PureRandom"): [[5.0, 1.0, 3.0, -0.5], [4.0, 2.0, 1.5, -0.4]]}
    out = io.StringIO()
    compare.report(results, {"toy": problem}, [1, 2], out)
    compare.report(results, {"toy": problem}, [2], io.StringIO())
    text = out.getvalue()
    assert "baselines: default 10, Adams2019 2" in text
    # @1: bests 5.0 and 4.0 -> median 4.5; @2: 1.0 and 2.0 -> 1.5
    assert "PureRandom @1: median best / default 0.45, Adams2019 2.25" in text
    assert "PureRandom @2: median best / default 0.15, Adams2019 0.75" in text
    assert calls == [1]                     # timed once, then reused


def test_report_without_baselines_prints_none():
    problem = Problem("toy", lambda: None, lambda c: 0.0, 1.0, [2])
    out = io.StringIO()
    compare.report({("toy", "PureRandom"): [[2.0, 1.0]]}, {"toy": problem}, [2], out)
    assert "baselines" not in out.getvalue()


def test_a_timed_problem_states_its_unit_in_the_header_and_figures():
    """Replays and measured examples report seconds, and the report says so; a tour
    length has no unit to state."""
    timed = Problem("rise_toy", lambda: None, lambda c: 0.0, 0.002, [2], data={"expert_value": 0.004}, unit="s")
    tour = Problem("tour", lambda: None, lambda c: 0.0, 7542.0, [2])
    out = io.StringIO()
    compare.report({("rise_toy", "PureRandom"): [[0.003, 0.002]], ("tour", "PureRandom"): [[8000.0, 7542.0]]},
                   {"rise_toy": timed, "tour": tour}, [2], out)
    lines = out.getvalue().splitlines()
    assert "== rise_toy (optimum 0.002 s)" in lines and "== tour (optimum 7542)" in lines
    assert sum(line.startswith("technique (best, s) ") for line in lines) == 1
    assert sum(line.startswith("technique ") for line in lines) == 2
    assert "  expert configuration: 0.004 s (2.000x the optimum)" in lines
