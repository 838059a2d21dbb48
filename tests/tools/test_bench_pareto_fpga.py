"""tools/bench_pareto_fpga.py: a short run's HPVM2FPGA front against random search's."""
import re

import numpy as np
import pytest

from tools.bench_pareto_fpga import compare, coverage, fpga_problem, front_of, main


def test_coverage_counts_weakly_dominated_points():
    a = np.array([[1.0, 3.0], [2.0, 1.0]])
    b = np.array([[1.0, 3.0], [3.0, 2.0], [0.5, 5.0]])
    assert coverage(a, b) == pytest.approx(2 / 3)      # (1, 3) by itself, (3, 2) by (2, 1); not (0.5, 5)
    assert coverage(b, a) == pytest.approx(1 / 2)
    assert coverage(a, np.zeros((0, 2))) == 1.0 and coverage(np.zeros((0, 2)), a) == 0.0


def test_a_front_dominates_only_when_it_covers_all_and_is_not_covered():
    better = np.array([[1.0, 2.0], [2.0, 1.0]])
    worse = np.array([[1.5, 2.5], [2.0, 1.0]])
    assert compare(better, worse)["dominates"] == 1.0
    assert compare(worse, better)["dominates"] == 0.0
    assert compare(better, better)["dominates"] == 0.0          # equal fronts: neither dominates
    c = compare(better, worse)
    assert c["hv"] == 1.0 and 0 < c["hv_random"] < 1.0


def test_front_of_skips_failed_and_repeated_points():
    front = front_of([None, (2.0, 1.0), (1.0, 3.0), (2.0, 1.0), (3.0, 3.0), None])
    assert front.tolist() == [[1.0, 3.0], [2.0, 1.0]]


def test_the_model_problem_measures_latency_and_total_share():
    problem = fpga_problem()
    unoptimised = {p.name: min(p.values) for p in problem.manipulator().parameters}   # flags 0, factors 1
    state, vec = problem.measure(unoptimised)
    assert state == "ok" and vec[0] > 0 and 0 < vec[1] < 4


def test_cli_compares_every_pair(capsys):
    assert main(["--technique", "PureRandom", "--seeds", "2", "--budget", "5", "--random-budget", "20"]) == 0
    out = capsys.readouterr().out
    assert len(re.findall(r"^  \d vs \d: ", out, re.M)) == 4 and "of 4 pairs" in out


def test_cli_first_seed_names_the_seeds_run(capsys):
    assert main(["--technique", "PureRandom", "--seeds", "1", "--first-seed", "4", "--budget", "5",
                 "--random-budget", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("seed 4: ") and re.findall(r"^  (\d) vs (\d): ", out, re.M) == [("4", "4")]


def test_cli_bad_technique_is_a_one_line_error(capsys):
    assert main(["--technique", "NoSuchTechnique"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
