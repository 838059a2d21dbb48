"""tools/bench_priors.py: a prior's centre is the centre of the fastest / slowest share of the
recorded configurations, parameter by parameter, not one recorded configuration (the optimum's
coordinates are not handed to the prior)."""
import math
import statistics

from other_machine import RISE_BACO, needs_rise
from tools import bench_priors
from tools.replay_problems import replay_problems


@needs_rise
def test_the_centres_are_per_parameter_medians_of_the_region():
    problem = replay_problems(RISE_BACO.parents[2], ["rise_kmeans"])["rise_kmeans"]
    space = problem.manipulator()
    assert bench_priors.prior_centre(problem, "none") is None
    table = problem.benchmark.table
    ranked = sorted((rec.value, sorted(table.config_of(key).items())) for key, rec in table.items()
                    if rec.ok and space.is_feasible(table.config_of(key)))
    size = math.ceil(0.1 * len(ranked))
    for kind, region in (("good", ranked[:size]), ("bad", ranked[-size:])):
        centre = bench_priors.prior_centre(problem, kind, 0.1)
        assert space.is_feasible(centre)
        for name in space.names:                               # powers of two: the median of the logs
            assert centre[name] == statistics.median_low(dict(c)[name] for _, c in region)
    good = problem.evaluate(bench_priors.prior_centre(problem, "good", 0.05))
    assert problem.optimum < good < 2 * problem.optimum         # a good region's centre, not the optimum
