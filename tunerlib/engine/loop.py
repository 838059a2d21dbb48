"""The run loops: the serial loop (this process measures each request between ``ask`` and ``tell``)
and the parallel loop (an executor measures: local worker processes, ``tunerlib worker`` processes,
a Dask cluster), and the choice of executor.  Called by ``TuningRun.run``.
"""
from __future__ import annotations

from typing import Any, List, Optional

from ..errors import TunerScriptError
from ..executors.base import Completion, Executor, hand_over, store_completions
from ..executors.leases import RemoteCoordinator
from ..executors.measurement import MeasurementDriver
from ..executors.orphans import OrphanGuard
from ..executors.pool import WorkerPool
from ..interrupts import Interrupts
from .progress import StatusLine

__all__ = ["parallel_loop", "serial_loop"]


def serial_loop(run: Any, status: StatusLine, interrupts: Interrupts) -> str:
    measure = OrphanGuard(MeasurementDriver(run.db, run.run_id, run.pv_id, run.interface,
                                            run.interface.input_manager(), run.machine_id,
                                            interrupts=interrupts, cap=run.options.measurement_timeout),
                          run.orphans)
    while (desired := run.ask()) is not None:
        result, record = measure.measure(desired)
        run.tell(desired, result, record)
        if measure.contract_error:
            raise TunerScriptError(measure.contract_error)
    return run.stop_reason


def parallel_loop(run: Any, status: StatusLine, interrupts: Interrupts) -> str:
    """--parallelism N > 1: N local worker processes; --distributed: `tunerlib worker` processes
    anywhere (and the local ones, if any); --executor dask: the workers of a Dask cluster. This
    process only proposes, hands requests over (Dask) and stores and collects results."""
    opts = run.options
    executor = make_executor(run, interrupts)
    local = opts.parallelism if opts.parallelism > 1 else 0
    remote = RemoteCoordinator(run.db, run.run_id, opts.queue_per_worker, local) if opts.distributed else None
    idle = 0.001
    listener = None
    try:
        if executor is not None:
            executor.start()
        listener = run.db.listen(run.run_id) if remote is not None else None
        while True:
            interrupts.check()
            reason = run.stop_check() or run.top_up(remote.target() if remote else executor.capacity())
            if reason:
                return reason
            if executor is not None and not executor.pulls_requests:
                hand_over(executor, run.db, run.run_id, run.options.executor)
            if run.collect():
                idle = 0.001
                continue
            if remote is not None and remote.maintain():
                continue
            if listener is not None:  # woken by the next result, or after 0.25 s to sweep leases
                if executor is not None and store_measured(run, executor.poll(0)):
                    continue
                with interrupts.measuring():
                    listener.wait(0.25)
            elif executor is not None:
                if store_measured(run, executor.poll(idle)):
                    idle = 0.001
                    continue
                idle = min(idle * 2, 0.02)
            else:
                interrupts.sleep(idle)
                idle = min(idle * 2, 0.02)
            status.update(run.search.progress.tests, run.best_display(), run.search.progress.outstanding)
    finally:
        interrupts.ignore_signals()
        try:
            if executor is not None:
                executor.cancel()
                executor.shutdown()
        finally:
            if listener is not None:
                listener.close()
            run.collect()


def make_executor(run: Any, interrupts: Interrupts) -> Optional[Executor]:
    """What measures in the parallel loop: the Dask executor (``--executor dask``; Dask is imported
    only then), the local process pool (``--parallelism N > 1``), or None when only ``tunerlib
    worker`` processes measure (``--distributed`` alone)."""
    opts = run.options
    if opts.executor == "dask":
        from ..executors.dask import DaskExecutor
        return DaskExecutor(run, interrupts)
    if opts.parallelism <= 1:
        return None
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
