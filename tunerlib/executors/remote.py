"""``tunerlib worker``: measure the requests of a run from any machine that can import the tuner script.

    tunerlib worker --database URL --interface module:Class [--machine-class NAME] [--parallelism N]

The worker opens the run's database, waits for a RUNNING run of the interface's program (the newest,
or ``--run UUID`` / ``--label L``), and refuses with one line (exit 2) when the run's tuner script
version (:meth:`MeasurementInterface.script_version`) or search space differs from its own. It builds
the interface with the run's own options (so ``--sleep``-style script options reach ``run()``), then
claims requests with a lease (``--lease``, default 30 s) and measures them; a heartbeat thread renews the
lease every lease/4 s. A worker killed or cut off from the database stops renewing: the run re-queues
its claim after the lease, and another worker measures it; if the first comes back, the result that
arrives first is kept and the other is dropped (:class:`~tunerlib.db.AlreadyCompleteError`). Database
errors (a lost connection) are retried for up to 10 leases, with one line per outage; a lock another
process holds is waited out (:mod:`tunerlib.db.waits`). The worker exits when its run stops
(COMPLETE, ABORTED, ...), and on SIGINT/SIGTERM, giving an unfinished claim back to the queue.

Every result records the machine (host name, with its ``--machine-class``) and the worker id
(``host:pid:xxxx``).
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import secrets
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Optional

from ..db import AlreadyCompleteError, DatabaseError, ResultsDB
from ..db.lifecycle import process_alive
from ..errors import UsageError
from ..interrupts import Interrupts, RunInterrupted, die_with_parent, signal_name
from ..result import DesiredResult
from .measurement import MeasurementDriver, claim

__all__ = ["WorkerSettings", "load_interface", "serve"]

#: exit codes: refused (version, space, bad arguments), lost the database for good, broken tuner script
REFUSED, LOST, CONTRACT = 2, 1, 3


@dataclass
class WorkerSettings:
    """The options of ``tunerlib worker``."""

    database: str
    interface: str
    machine_class: Optional[str] = None
    parallelism: int = 1
    lease: float = 30.0
    run: Optional[str] = None
    label: Optional[str] = None
    quiet: bool = False


def say(text: str) -> None:
    print(f"tunerlib worker: {text}", file=sys.stderr, flush=True)


def load_interface(spec: str) -> type:
    """The MeasurementInterface class named by ``module:Class`` or ``path/to/script.py:Class``."""
    module_name, sep, class_name = spec.rpartition(":")
    if not sep or not module_name or not class_name:
        raise UsageError(f"--interface {spec}: expected module:Class or path/to/tuner.py:Class")
    try:
        if module_name.endswith(".py") or os.sep in module_name:
            module = _load_file(module_name)
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_name)
    except (ImportError, OSError) as exc:
        raise UsageError(f"--interface {spec}: cannot import {module_name}: {exc}") from None
    cls = getattr(module, class_name, None)
    # checked by the calls a worker makes (the executors never import the tuner script's floor)
    if not (isinstance(cls, type) and all(callable(getattr(cls, n, None))
                                          for n in ("manipulator", "run", "script_version", "Options"))):
        raise UsageError(f"--interface {spec}: {module_name} has no MeasurementInterface subclass {class_name}")
    return cls


def _load_file(path: str) -> Any:
    if not os.path.isfile(path):
        raise OSError(f"no file {path}")
    name = "_tunerlib_script_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise OSError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up
    spec.loader.exec_module(module)
    return module


def find_run(db: ResultsDB, interface: Any, settings: WorkerSettings) -> Optional[dict]:
    """The newest RUNNING run of the interface's program (``--run`` / ``--label`` narrow it), or None."""
    names = (interface.project_name(), interface.program_name(), interface.program_version())
    for info in reversed(db.list_runs()):
        if info["state"] != "RUNNING" or (info["project"], info["program"], info["version"]) != names:
            continue
        if settings.run and not info["uuid"].startswith(settings.run):
            continue
        if settings.label is not None and info["label"] != settings.label:
            continue
        if info.get("host") == socket.gethostname() and not process_alive(info.get("pid")):
            continue  # its tuner was killed on this machine (`tunerlib runs` shows it KILLED)
        return info
    return None


def run_options(cls: Any, args: dict, machine_class: Optional[str]) -> Any:
    """The interface's options as the run was started with them (fields it does not know are ignored)."""
    names = {f.name for f in dataclasses.fields(cls.Options)}
    values = {k: v for k, v in (args or {}).items() if k in names and k != "seed"}
    options = cls.Options(**values)
    options.machine_class = machine_class
    return options


class RemoteWorker:
    """One worker process serving one run: :meth:`attach` (wait, check), then :meth:`loop`."""

    def __init__(self, settings: WorkerSettings, cls: Any) -> None:
        self.settings = settings
        self.cls = cls
        self.db = ResultsDB(settings.database)
        self.host = socket.gethostname()
        self.name = f"{self.host}:{os.getpid()}:{secrets.token_hex(2)}"
        self.interrupts = Interrupts(signals=(signal.SIGINT, signal.SIGTERM)).install()
        self._stop_beats = threading.Event()
        #: set when a database call failed: a claim whose answer was lost may be held unknowingly
        self._unsure = False
        #: set while database calls fail (one line per outage)
        self._outage = False

    # ---- attaching to a run -----------------------------------------------------------------
    def attach(self) -> None:
        """Wait for the run, check its script version and search space, register (UsageError: refused)."""
        probe = self.cls(self.cls.Options())
        waited = False
        while (info := self._retrying(lambda: find_run(self.db, probe, self.settings))) is None:
            if not waited and not self.settings.quiet:
                say(f"waiting for a run of {probe.program_name()} in {self.db.display_url}")
            waited = True
            self.interrupts.sleep(0.5)
        self.run_id, self.uuid = info["id"], info["uuid"]
        run = self.db.run_info(self.run_id)
        self.interface = self.cls(run_options(self.cls, run["args"], self.settings.machine_class))
        mine = self.interface.script_version()
        if run.get("script_version") != mine:
            raise UsageError(f"tuner script version {mine} differs from {run.get('script_version')} of run "
                             f"{self.uuid}: start the worker with the same tuner script as the run")
        space = self.db.run_export(self.run_id)["parameter_info"]
        if self.interface.manipulator().parameter_info() != space:
            raise UsageError(f"the search space of {self.settings.interface} differs from run {self.uuid}'s: "
                             "start the worker with the same tuner script and options as the run")
        self.machine_id = self.db.machine_id(self.host, self.settings.machine_class, os.cpu_count())
        self.db.register_worker(self.run_id, self.name, self.machine_id, self.settings.lease)
        self.driver = MeasurementDriver(self.db, self.run_id, run["program_version_id"], self.interface,
                                        self.interface.input_manager(), self.machine_id, worker=self.name,
                                        interrupts=self.interrupts, cap=run["args"].get("measurement_timeout"),
                                        retrying=self._retrying)
        threading.Thread(target=self._beat, name="tunerlib-heartbeat", daemon=True).start()
        if not self.settings.quiet:
            say(f"{self.name} measuring for run {self.uuid}")

    def _beat(self) -> None:
        """Heartbeat thread: renew the lease of the worker and its claim (its own connection, opened
        again after a failure; its lock waits are reported with the worker's own)."""
        db: Optional[ResultsDB] = None
        try:
            while not self._stop_beats.wait(self.settings.lease / 4):
                try:
                    if db is None:
                        db = ResultsDB(self.settings.database)
                        db.lock_waits = self.db.lock_waits
                    db.beat(self.run_id, self.name)
                except DatabaseError:
                    pass  # a lost connection: the next beat reconnects
        finally:
            if db is not None:
                db.close()

    def _retrying(self, call: Any) -> Any:
        """``call()``, retried on database errors (a lost connection) for up to 10 leases; the first
        failure of an outage is reported in one line, the end of the outage ends it."""
        give_up = time.monotonic() + 10 * self.settings.lease
        while True:
            try:
                result = call()
                self._outage = False
                return result
            except AlreadyCompleteError:
                self._outage = False
                raise
            except DatabaseError as exc:
                if time.monotonic() > give_up:
                    raise
                self._unsure = True
                if not self.settings.quiet and not self._outage:
                    say(f"{exc} (retrying for up to {10 * self.settings.lease:g} s)")
                self._outage = True
                self.interrupts.sleep(min(1.0, self.settings.lease / 4))

    # ---- measuring ----------------------------------------------------------------------------
    def loop(self) -> int:
        """Claim, measure, report until the run stops; the exit code."""
        idle, checked = 0.005, 0.0
        while True:
            self.interrupts.check()
            desired = self._retrying(lambda: claim(self.db, self.run_id, self.name, self.settings.lease))
            if desired is None:
                if time.monotonic() - checked > 1.0:
                    checked = time.monotonic()
                    if self._retrying(lambda: self.db.run_info(self.run_id))["state"] != "RUNNING":
                        return 0
                self.interrupts.sleep(idle)
                idle = min(idle * 2, 0.05)
                continue
            idle = 0.005
            self._measure(desired)
            if self._unsure:  # give back claims made by calls whose answer the connection lost
                self._unsure = False
                for dr in self._retrying(lambda: self.db.running_claims(self.run_id, self.name)):
                    self._retrying(partial(self.db.release, dr, self.name))
            if self.driver.contract_error:
                say(f"error: {self.driver.contract_error}")
                return CONTRACT

    def _measure(self, desired: DesiredResult) -> None:
        dr_id = desired.id
        assert dr_id is not None  # a claimed request has its id
        try:
            _, record = self.driver.measure(desired)
        except RunInterrupted:
            self._retrying(lambda: self.db.release(dr_id, self.name))
            raise
        try:
            self._retrying(lambda: self.db.complete(dr_id, record))
        except AlreadyCompleteError:  # re-queued and measured elsewhere meanwhile, or the run stopped: dropped
            pass

    def close(self) -> None:
        self._stop_beats.set()
        try:
            if hasattr(self, "run_id"):
                self.db.unregister_worker(self.run_id, self.name)
        except DatabaseError:
            pass
        finally:
            self.db.close()
            self.interrupts.uninstall()


def serve_one(settings: WorkerSettings) -> int:
    """One worker in this process; the exit code (0: the run stopped or a signal stopped the worker)."""
    try:
        cls = load_interface(settings.interface)
        worker = RemoteWorker(settings, cls)
    except (UsageError, DatabaseError) as exc:
        say(f"error: {exc}")
        return REFUSED
    try:
        worker.attach()
        return worker.loop()
    except UsageError as exc:
        say(f"error: {exc}")
        return REFUSED
    except DatabaseError as exc:
        say(f"error: {exc}")
        return LOST
    except RunInterrupted as exc:
        if not settings.quiet:
            say(f"{worker.name} stopped by {signal_name(exc.signum) if exc.signum else 'its deadline'}")
        return 0
    finally:
        worker.close()


def _child(settings: WorkerSettings) -> None:
    die_with_parent(signal.SIGTERM)
    sys.exit(serve_one(settings))


def serve(settings: WorkerSettings) -> int:
    """``tunerlib worker``: ``--parallelism`` worker processes (forked), each serving the run."""
    if settings.parallelism < 1 or settings.lease <= 0:
        say("error: --parallelism must be >= 1 and --lease > 0 seconds")
        return REFUSED
    if settings.parallelism == 1:
        return serve_one(settings)
    try:  # one line, not one per child, when the database cannot be opened
        ResultsDB(settings.database).close()
    except DatabaseError as exc:
        say(f"error: {exc}")
        return REFUSED
    import multiprocessing
    ctx = (multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods()
           else multiprocessing.get_context("spawn"))
    procs = [ctx.Process(target=_child, args=(settings,), name=f"tunerlib-worker-{i}")
             for i in range(settings.parallelism)]
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    for proc in procs:
        proc.start()
    def forward(signum: int, _frame: Any) -> None:
        for p in procs:
            if p.is_alive() and p.pid is not None:
                os.kill(p.pid, signal.SIGTERM)
    for signum in previous:
        signal.signal(signum, forward)
    for proc in procs:
        while proc.is_alive():
            proc.join(0.5)
    return max(proc.exitcode if proc.exitcode and proc.exitcode > 0 else 0 for proc in procs)
