import time

import numpy as np

from tunerlib import MeasurementInterface, Result, RetimedBest
from tunerlib.measure import (BEST, OVER_LIMIT, IsolatedWorker, TimingPolicy, clocked, format_table, over_limit,
                              time_after_check, time_interleaved, wrong_output)
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter

POLICY = TimingPolicy(min_runs=3, max_runs=20, rel_tol=0.02, budget_s=0.5)


def blocked_sum(a, block):                  # the program being tuned
    return sum(a[i:i + block].sum() for i in range(0, len(a), block))


def setup(n):                               # in the worker, once: not charged to any limit
    a = np.random.default_rng(0).random(n)

    def measure(request):                   # in the worker, once per configuration
        cfg, limit = request
        start = time.perf_counter()
        got = blocked_sum(a, cfg["block"])  # the check run, which doubles as the warm-up
        first = time.perf_counter() - start
        if not np.isclose(got, a.sum()):
            return wrong_output(f"sum {got} differs from {a.sum()}")
        timing = time_after_check(clocked(lambda: blocked_sum(a, cfg["block"])), first, POLICY, limit)
        if timing.stopped_because == OVER_LIMIT:   # the limit is judged on the kernel's own times
            return over_limit(timing.best, limit)
        return Result(time=timing.best, extra={"runs": timing.runs, "median_s": timing.median})
    return measure


class BlockTuner(MeasurementInterface):
    def __init__(self, options=None):
        super().__init__(options)
        self.worker = IsolatedWorker(setup, 200_000)    # crash -> ERROR, hung -> TIMEOUT

    def manipulator(self):
        m = ConfigurationManipulator()
        m.add_parameter(IntegerParameter("block", 1, 100_000))
        return m

    def run(self, desired_result, input, limit):
        return self.worker.call((desired_result.configuration.data, limit), limit_s=60.0)

    def save_final_config(self, config):
        self.worker.close()
        a = np.random.default_rng(0).random(200_000)
        candidates = {"block 1000": 1000, "block 64": 64, BEST: config["block"]}
        timed = time_interleaved({name: (lambda b=b: blocked_sum(a, b)) for name, b in candidates.items()}, POLICY)
        print(format_table("best vs hand-picked blocks (min-of-k, interleaved rounds):",
                           [(name, t.best, t.error) for name, t in timed.items()]))
        super().save_final_config(config)
        return RetimedBest(config, timed[BEST].best, "min-of-k in interleaved rounds with 2 hand-picked blocks")


if __name__ == "__main__":
    raise SystemExit(BlockTuner.main())
