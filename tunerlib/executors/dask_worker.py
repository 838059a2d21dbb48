"""The Dask worker side of ``--executor dask``: the named job a worker builds its tuner script from
(:class:`DaskJob`), the task it runs per request (:func:`measure_on_worker`) and what it sends back
(:class:`WorkerReply`).  Imports nothing from Dask: the task is a plain function a Dask worker calls.
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import socket
import threading
from dataclasses import asdict, dataclass
from typing import Dict, Optional, Tuple

from ..errors import UsageError
from ..interrupts import Interrupts
from ..result import DesiredResult, Input, Result
from .contracts import RunContext
from .measurement import MeasurementDriver
from .remote import load_interface, run_options

__all__ = ["DaskJob", "WorkerReply", "interface_job", "measure_on_worker"]


@dataclass(frozen=True)
class DaskJob:
    """What a Dask worker needs to build the run's interface (sent with every task, a few hundred bytes)."""

    module: Optional[str]  #: importable module of the interface class (None: load ``file``)
    file: Optional[str]  #: absolute path of the file that defines it (tried when the module is not importable)
    class_name: str
    args: str  #: the run's options, JSON
    script_version: str  #: the run's tuner script version; a worker whose own differs refuses
    machine_class: Optional[str] = None
    cap: Optional[float] = None  #: --measurement-timeout


@dataclass
class WorkerReply:
    """What :func:`measure_on_worker` returns: the measurement, or why the worker refused (``refused``)."""

    result: Optional[Result]
    input: Optional[Input]
    cost: float
    host: str
    cpus: Optional[int]
    worker: str  #: ``host:pid:dask``, recorded with the result
    contract_error: Optional[str] = None
    refused: Optional[str] = None


_CLASSES: Dict[Tuple, type] = {}
_CLASSES_LOCK = threading.Lock()
_PER_THREAD = threading.local()


def _interface_class(job: DaskJob) -> type:
    """The interface class, imported once per worker process and tuner script version (by module, else
    from the file): a worker that served a run of an older version of the script loads it anew."""
    key = (job.module, job.file, job.class_name, job.script_version)
    with _CLASSES_LOCK:
        cls = _CLASSES.get(key)
        if cls is None:
            loaded = sys.modules.get(job.module) if job.module else None
            if loaded is not None and any(k[0] == job.module for k in _CLASSES):
                importlib.reload(loaded)  # loaded for another version's run: read the file again
            specs = [f"{source}:{job.class_name}" for source in (job.module, job.file) if source]
            for i, spec in enumerate(specs):
                try:
                    cls = load_interface(spec)
                    break
                except UsageError:
                    if i == len(specs) - 1:
                        raise
            assert cls is not None  # a job names its module or its file
            _CLASSES[key] = cls
    return cls


def _driver(job: DaskJob, worker: str) -> MeasurementDriver:
    """This thread's measurement driver for the job's interface (built on first use, then kept);
    UsageError when the interface cannot be built or its script version differs from the run's."""
    drivers = getattr(_PER_THREAD, "drivers", None)
    if drivers is None:
        drivers = _PER_THREAD.drivers = {}
    driver = drivers.get(job)
    if driver is None:
        cls = _interface_class(job)
        interface = cls(run_options(cls, json.loads(job.args), job.machine_class))
        mine = interface.script_version()
        if mine != job.script_version:
            raise UsageError(f"tuner script version {mine} differs from {job.script_version} of the run: "
                             f"give the Dask workers the same tuner script as the run "
                             f"({job.file or job.module})")
        driver = MeasurementDriver(None, 0, 0, interface, interface.input_manager(), None, worker=worker,
                                   interrupts=Interrupts(), cap=job.cap)
        drivers[job] = driver
    return driver


def measure_on_worker(job: DaskJob, desired: DesiredResult) -> WorkerReply:
    """The Dask task: measure ``desired`` with the job's interface on this worker (no database)."""
    host, cpus = socket.gethostname(), os.cpu_count()
    worker = f"{host}:{os.getpid()}:dask"
    try:
        driver = _driver(job, worker)
    except UsageError as exc:
        return WorkerReply(None, None, 0.0, host, cpus, worker, refused=f"Dask worker on {host}: {exc}")
    driver.contract_error = None
    result, inp, cost = driver.measure_only(desired)
    return WorkerReply(result, inp, cost, host, cpus, worker, contract_error=driver.contract_error)


def interface_job(run: RunContext) -> DaskJob:
    """The :class:`DaskJob` of a run (UsageError when its interface class cannot be named for workers)."""
    cls = type(run.interface)
    if "." in cls.__qualname__:
        raise UsageError(f"--executor dask: {cls.__qualname__} is defined inside a function or class; define "
                         "it at the top level of the tuner script, so that Dask workers can import it")
    module = sys.modules.get(cls.__module__)
    name: Optional[str] = cls.__module__
    if name == "__main__":  # `python -m pkg.tuner` has an importable name; `python tuner.py` has none
        spec = getattr(module, "__spec__", None)
        name = spec.name if spec is not None else None
    path = getattr(module, "__file__", None)
    if name is None and path is None:
        raise UsageError(f"--executor dask: {cls.__name__} has no module or file Dask workers could import; "
                         "put it in a tuner script file")
    opts = run.options
    return DaskJob(name, os.path.abspath(path) if path else None, cls.__name__,
                   json.dumps(asdict(opts), default=str), run.interface.script_version(),
                   opts.machine_class, opts.measurement_timeout)
