"""The measurement kit: what a tuner script needs to time real programs honestly.

* :mod:`~tunerlib.measure.timing` -- :class:`TimingPolicy` (min-of-k after warm-up, k adaptive to
  noise), :func:`time_min_of_k`, :func:`sample_min_of_k`, :func:`time_after_check` (which also
  judges the run's time limit on warm runs: :data:`OVER_LIMIT`, :func:`check_run_limit`) and
  :func:`time_interleaved` (re-timing finalists and baselines in rotating rounds);
* :mod:`~tunerlib.measure.worker` -- :class:`IsolatedWorker`, a worker process that builds and runs
  one configuration at a time with a wall-clock limit (start-up not counted);
* :mod:`~tunerlib.measure.states` -- the one rule mapping rejection / timeout / crash / wrong output
  to :class:`~tunerlib.Result` states;
* :mod:`~tunerlib.measure.report` -- the best-vs-baselines table (times in seconds) and the
  speed-up over the stronger form of each baseline (as given or mapped to this machine);
* :mod:`~tunerlib.measure.repeat` -- for benchmarks over several seeds: repeated re-timing passes
  and their noise, medians and ranges over seeds.
"""
from .report import BEST, Row, format_stronger, format_table, rows_from_timings, seconds_decimals, speedup, stronger
from .repeat import Spread, pass_noise, retime_passes, spread
from .states import crashed, death, failed, over_limit, rejected, timed_out, wrong_output
from .timing import (OVER_LIMIT, WARM_TRIES, Timing, TimingError, TimingPolicy, check_run_limit, clocked,
                     fixed_rounds, interleaving_order, sample_interleaved, sample_min_of_k, time_after_check,
                     time_interleaved, time_min_of_k)
from .worker import IsolatedWorker

__all__ = ["BEST", "Row", "format_stronger", "format_table", "rows_from_timings", "seconds_decimals", "speedup",
           "stronger", "Spread", "pass_noise", "retime_passes", "spread",
           "crashed", "death", "failed", "over_limit", "rejected", "timed_out", "wrong_output",
           "OVER_LIMIT", "WARM_TRIES", "Timing", "TimingError", "TimingPolicy", "check_run_limit", "clocked",
           "fixed_rounds", "interleaving_order",
           "sample_interleaved", "sample_min_of_k", "time_after_check", "time_interleaved", "time_min_of_k",
           "IsolatedWorker"]
