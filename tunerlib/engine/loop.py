"""The run loop: one loop over an :class:`~tunerlib.executors.base.Executor`, whatever measures.

The run keeps as many requests in flight as the executor takes, hands them to a pushing executor (it
claims them here, or writes them already claimed for the in-process executor, and the executor measures
them: in this process, or on a Dask cluster), stores what an executor gives back, and feeds every new
result to the technique; a pulling executor's workers (local processes, ``tunerlib worker`` processes)
claim the requests and store the results themselves.  Called by ``TuningRun.run``; :func:`make_executor`
chooses the executor from the options.
"""
from __future__ import annotations

from typing import Any, List

from ..errors import TunerScriptError
from ..executors.base import Completion, Executor, hand_over, store_completions
from ..executors.leases import RemoteWorkers
from ..executors.measurement import MeasurementDriver
from ..executors.pool import WorkerPool
from ..executors.serial import SerialExecutor
from ..interrupts import Interrupts
from .progress import StatusLine

__all__ = ["make_executor", "run_loop"]

#: the loop's back-off while nothing happens: first and longest wait (seconds)
FIRST_WAIT, LONGEST_WAIT = 0.001, 0.02


def run_loop(run: Any, status: StatusLine, interrupts: Interrupts) -> str:
    """Tune until a stop (the reason); the executor is started first and always shut down."""
    executor = make_executor(run, interrupts)
    idle = FIRST_WAIT
    try:
        if executor.claims_when_requested:
            run.requests.claim_for = executor.name
        executor.start()
        while True:
            interrupts.check()
            reason = run.stop_check() or run.top_up(executor.capacity())
            if reason:
                return reason
            if not executor.pulls_requests:
                hand_over(executor, run.db, run.run_id, executor.name, run.requests.claimed)
            stored = store_measured(run, executor.poll(0))
            if run.collect() or stored:
                idle = FIRST_WAIT
                continue
            if store_measured(run, executor.poll(idle)):
                idle = FIRST_WAIT
                continue
            idle = min(idle * 2, LONGEST_WAIT)
            progress = run.search.progress
            status.update(progress.tests, run.best_display(), progress.outstanding)
    finally:
        run.requests.claim_for = None  # a claimed request not handed over is cancelled with the rest
        run.requests.claimed.clear()
        interrupts.ignore_signals()
        try:
            executor.cancel()
            executor.shutdown()
        finally:
            run.collect()


def make_executor(run: Any, interrupts: Interrupts) -> Executor:
    """What measures: the Dask executor (``--executor dask``; Dask is imported only then), ``tunerlib
    worker`` processes (``--distributed``, beside a local pool with ``--parallelism N > 1``), the local
    process pool (``--parallelism N > 1``), or this process."""
    opts = run.options
    if opts.executor == "dask":
        from ..executors.dask import DaskExecutor
        return DaskExecutor(run, interrupts)
    local = _local_pool(run, interrupts) if opts.parallelism > 1 else None
    if opts.distributed:
        return RemoteWorkers(run.db, run.run_id, opts.queue_per_worker, interrupts, local)
    if local is not None:
        return local
    return SerialExecutor(MeasurementDriver(run.db, run.run_id, run.pv_id, run.interface,
                                            run.interface.input_manager(), run.machine_id,
                                            interrupts=interrupts, cap=opts.measurement_timeout), run.orphans)


def _local_pool(run: Any, interrupts: Interrupts) -> WorkerPool:
    opts = run.options
    url = run.db.worker_url()
    run.db.dispose()  # forked workers must not share pooled connections
    return WorkerPool(opts.parallelism, url, run.run_id, run.pv_id, run.interface, run.machine_id,
                      interrupts.deadline, opts.measurement_timeout, store=run.db, interrupts=interrupts)


def store_measured(run: Any, completions: List[Completion]) -> int:
    """Store what an executor measured; a broken tuner script stops the run."""
    count, broken = store_completions(run.db, completions)
    if broken:
        raise TunerScriptError(broken)
    return count
