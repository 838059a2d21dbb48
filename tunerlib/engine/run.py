"""TuningRun: sets up a run (database, technique, seeds), drives the main loop and closes the run.

Lifecycle of the ``tuning_run`` row: it is written only after the options, the technique and the seed
configurations were checked (a bad start leaves no run behind). A run that stops on its limits or an
exhausted space is COMPLETE; one stopped by a signal or an error after it had results is ABORTED (and
``--resume`` continues it); one that fails before its first result is FAILED (never resumed). A failed
``--resume`` leaves the run in the state it had. When the run stops, requests not measured to the end
become CANCELLED and are measured again by ``--resume``.
"""
from __future__ import annotations

import os
import random
import socket
import sys
import time
from dataclasses import asdict
from typing import Any, Dict, List, Optional, Sequence, Set

from ..db import open_store
from ..executors.leases import RemoteCoordinator
from ..executors.base import Completion, Executor, hand_over, store_completions
from ..errors import UsageError
from .callbacks import Callback, ResultEvent, ResultsLog, TechniqueSnapshots, close_callbacks
from .closing import finish_run
from .final_config import FINAL_BEST, FINAL_FORM, MAX_CHARS, call_captured_returning, settle_final_best
from ..interrupts import Interrupts, RunInterrupted, signal_name
from ..executors.measurement import MeasurementDriver, desired_result
from .limits import request_limit, timeout_notice
from ..objectives import UNIT_KEY
from ..options import DEFAULT_TEST_CAP, TuningOptions
from ..executors.orphans import OrphanGuard, requeue_noting_orphans
from .progress import StatusLine, Summary
from ..result import DesiredResult, Result
from .resume import Diverged, HistoryReplay, select_run
from .search import SearchDriver, TunerScriptError
from .seeds import checked_seed_configurations
from ..techniques import Proposal, Technique, create_technique, generate_bandit, registry
from .contracts import Tunable
from .cross_session import decisions_extra, prepare_technique, stderr_say, upload_finished_run, warm_start
from ..executors.pool import WorkerPool

#: results between two snapshots of the technique's state in the database
SNAPSHOT_EVERY = 25

#: consecutive empty fills with nothing in flight before the technique counts as finished
_IDLE_LIMIT = 200

#: stop reasons after which the run is COMPLETE
_COMPLETE = ("test limit reached", "time limit reached", "search space exhausted",
             "technique has nothing more to propose", "finished by caller")


class TuningRun:
    """One tuning run of a MeasurementInterface.

    :meth:`run` tunes until a stop and returns the Summary. Its steps are public: :meth:`prepare` once,
    then :meth:`ask` for the next request to measure and :meth:`tell` with its result (the serial loop,
    and ``TuningRunManager`` for callers that measure themselves), then :meth:`finish` and
    :meth:`summary`. ``callbacks`` are called after each new result (see :mod:`tunerlib.engine.callbacks`).
    """

    def __init__(self, interface: Tunable, options: Optional[TuningOptions] = None,
                 callbacks: Sequence[Callback] = ()) -> None:
        self.interface = interface
        self.options = options or interface.options
        self.options.validate()
        #: one-line notices about the store (stderr, silent with --quiet)
        self.say = stderr_say(bool(getattr(self.options, "quiet", False)))
        #: the re-timed best that save_final_config returned (see :meth:`_keep_final_best`), or None
        self.final_best: Optional[Dict[str, Any]] = None
        self.manipulator = interface.manipulator().check_constraints()  # before any run row is written
        self.objective = interface.objective()
        self.db = open_store(self.options.database)
        try:
            self._set_up()
        except BaseException:
            self.db.close()
            raise
        self.start = time.perf_counter()
        self.callbacks: List[Callback] = list(callbacks)
        self._idle = 0
        self.signal: Optional[int] = None
        #: why ask() returned None
        self.stop_reason: Optional[str] = None
        #: installed by run(); ask() checks it
        self.interrupts: Optional[Interrupts] = None
        #: ids of the requests a resume found orphaned (tunerlib.executors.orphans)
        self.orphans: Set[int] = set()

    # ---- set-up ---------------------------------------------------------------
    def _set_up(self) -> None:
        opts = self.options
        self.pv_id = self.db.program_version_id(
            self.interface.project_name(), self.interface.program_name(), self.interface.program_version(),
            self.manipulator.parameter_info())
        self.machine_id = self.db.machine_id(socket.gethostname(), opts.machine_class, os.cpu_count())
        self.resumed_from = (select_run(self.db, self.pv_id, opts, self.interface.program_name(), self.objective,
                                        self.interface.script_version()) if opts.resume_target else None)
        self.resumed = self.resumed_from is not None
        self.seed = self._choose_seed()
        self.technique = self._bound_technique("")
        self.seeds = checked_seed_configurations(self.manipulator, self.interface.seed_configurations(),
                                                 opts.seed_configuration)
        owner = {"host": socket.gethostname(), "pid": os.getpid()}
        if self.resumed:
            self.run_id, self.uuid = self.resumed_from["id"], self.resumed_from["uuid"]
            self.db.take_run(self.run_id, **owner, script_version=self.interface.script_version())
        else:
            if opts.executor == "dask":  # an unreachable scheduler leaves no run behind
                from ..executors.dask import probe_scheduler
                probe_scheduler(opts.scheduler)
            self.run_id, self.uuid = self.db.create_run(
                self.pv_id, opts.label, {**asdict(opts), "seed": self.seed, UNIT_KEY: self.objective.unit},
                self.seed, self.machine_id,
                self.objective.describe(), **owner, script_version=self.interface.script_version())
        self.search = self._new_search()

    def _choose_seed(self) -> int:
        opts = self.options
        if not self.resumed:
            return opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)
        seed = self.resumed_from["seed"]
        if opts.seed is not None and seed is not None and opts.seed != seed:
            raise UsageError(f"--resume: run {self.resumed_from['uuid']} was started with --seed {seed}; "
                             f"drop --seed or pass --seed {seed}")
        return seed if seed is not None else (opts.seed or 0)

    def _technique_names(self) -> tuple:
        """(names, generate, bandit C, bandit window) from the options; a resumed run keeps its own
        unless others are given."""
        opts = self.options
        if self.resumed and not opts.technique and not opts.generate_bandit_technique:
            args = self.resumed_from["args"] or {}
            return (list(args.get("technique") or []), bool(args.get("generate_bandit_technique")),
                    args.get("bandit_c", 0.05), args.get("bandit_window", 500))
        return (list(opts.technique), bool(getattr(opts, "generate_bandit_technique", False)),
                opts.bandit_c, opts.bandit_window)

    def _bound_technique(self, salt: str) -> Technique:
        """The root technique, bound to the space with the run's seed (and ``salt``)."""
        names, generate, c, window = self._technique_names()
        if generate and names:
            raise UsageError("--generate-bandit-technique and --technique exclude each other; "
                             "drop one of them")
        technique = (generate_bandit(registry(), self.manipulator, random.Random(f"{self.seed}:generate"),
                                     C=c, window=window)
                     if generate else create_technique(names, C=c, window=window))
        prepare_technique(technique, self.options, self.manipulator, self.say)
        technique.bind(self.manipulator, random.Random(f"{self.seed}{salt}"), technique.name)
        return technique

    def _new_search(self) -> SearchDriver:
        return SearchDriver(self.db, self.run_id, self.pv_id, self.manipulator, self.technique, self.objective,
                            limit=lambda: request_limit(self.options, self.objective, self.search.best))

    # ---- preparing: seeds, or the history of a resumed run ----------------------
    def prepare(self) -> None:
        """Called once before the loop: queue the seed configurations, or replay a resumed run."""
        if self.resumed:
            self._resume_history()
        else:
            warm = warm_start(self.options, self.manipulator, self.manipulator.parameter_info(), self.say)
            for cfg in self.seeds + warm:
                self.search.submit(Proposal(cfg, "seed"))
        builtin: List[Callback] = [TechniqueSnapshots(SNAPSHOT_EVERY)]
        if self.options.results_log:
            builtin.append(ResultsLog(self.options.results_log))
        self.callbacks[:0] = builtin
        self.search.listeners.append(self._dispatch)

    def _resume_history(self) -> None:
        """Re-derive the technique's state from the run's record: exactly where possible, else by
        feeding the recorded results to a new technique."""
        cap = self._test_cap()
        done = self.resumed_from["tests"]
        self.orphans = requeue_noting_orphans(self.db, self.run_id, lambda: self.db.requeue_unfinished(
            self.run_id, None if cap is None else cap - done))
        replay = HistoryReplay(self.db, self.run_id)
        self.search.replaying = replay
        try:
            warm = warm_start(self.options, self.manipulator, self.manipulator.parameter_info(), self.say)
            for cfg in self.seeds + warm:
                self.search.submit(Proposal(cfg, "seed"))
            self._replay(replay, cap)
            problems = replay.leftover()
            if problems:
                raise Diverged(problems[0])
            self.history_replay = "exact"
        except Diverged:
            self._rebuild_from_results()
        finally:
            self.search.replaying = None

    def _replay(self, replay: HistoryReplay, cap: Optional[int]) -> None:
        while replay.active and (cap is None or self.search.tests < cap):
            self.search.fill(1)
            row = replay.next_result() if replay.active else None
            if row is None:
                return
            self.search.absorb_recorded(row)

    def _rebuild_from_results(self) -> None:
        self.history_replay = "results"
        self.technique = self._bound_technique(f":resume:{self.db.counts_by_state(self.run_id)}")
        self.search = self._new_search()
        self.search.replay()
        self.search.adopt_pending()
        saved = self.db.load_technique_state(self.run_id, self.technique.name)
        if saved and saved.get("last_result_id") == self.search.last_result_id:
            self.technique.load_state_dict(saved["state"])
        for cfg in self.seeds:
            self.search.submit(Proposal(cfg, "seed"))

    def _dispatch(self, row: Any, value: float, new_best: bool) -> None:
        """Search listener: build the ResultEvent of a new result and call every callback."""
        event = ResultEvent(row.id, row.config_data, row.state,
                            self.objective.display(value) if row.state == "OK" else None,
                            self._best_display(), new_best, self.search.tests,
                            time.perf_counter() - self.start)
        for callback in self.callbacks:
            callback(self, event)

    def snapshot(self) -> None:
        """Record the technique's state (e.g. bandit arms, uses and credits) in the results database."""
        self.db.save_technique_state(self.run_id, self.technique.name,
                                     {"last_result_id": self.search.last_result_id,
                                      "state": self.technique.state_dict()})

    # ---- main loop ------------------------------------------------------------
    def run(self) -> Summary:
        """Tune until a limit, the end of the space, a signal or an error; always closes the run."""
        opts = self.options
        status = StatusLine(opts.display_frequency, opts.quiet, total=self._test_cap(),
                            stop_after=opts.stop_after, unit=self.objective.unit)
        self.callbacks.append(status)
        deadline = None if opts.stop_after is None else time.monotonic() + opts.stop_after
        interrupts = self.interrupts = Interrupts(deadline).install()
        reason = "error"
        try:
            try:
                self.prepare()
                status.begin(self.search.tests)
                parallel = opts.parallelism > 1 or opts.distributed or opts.executor != "local"
                loop = self._loop_parallel if parallel else self._loop_serial
                reason = loop(status, interrupts)
            except RunInterrupted as exc:
                reason = self._interrupted(exc)
            finally:
                interrupts.ignore_signals()
        finally:
            finish_run(self, reason, interrupts)
        return self.summary(reason)

    def _interrupted(self, exc: RunInterrupted) -> str:
        if exc.signum is None:
            return "time limit reached"
        self.signal = exc.signum
        return f"interrupted by {signal_name(exc.signum)}"

    def _test_cap(self) -> Optional[int]:
        if self.options.test_limit is not None:
            return self.options.test_limit
        return None if self.options.stop_after is not None else DEFAULT_TEST_CAP

    def stop_check(self) -> Optional[str]:
        """The reason to stop now (a limit reached), or None; called before every request."""
        cap = self._test_cap()
        if cap is not None and self.search.tests >= cap:
            return "test limit reached"
        if self.options.stop_after is not None and time.perf_counter() - self.start >= self.options.stop_after:
            return "time limit reached"
        return None

    def top_up(self, target: int) -> Optional[str]:
        """Ask the technique for new requests until ``target`` are in flight (within the test limit);
        a stop reason when nothing more can be requested or awaited (space exhausted, technique done).
        The first half of :meth:`ask`; the parallel loop calls it with its number of workers."""
        cap = self._test_cap()
        budget = None if cap is None else cap - self.search.tests - self.search.outstanding
        made = self.search.fill(target, budget) if budget is None or budget > 0 else 0
        if self.search.outstanding:
            self._idle = 0
            return None
        if self.search.exhausted:
            return "search space exhausted"
        self._idle += made == 0
        return "technique has nothing more to propose" if self._idle >= _IDLE_LIMIT else None

    # ---- ask / tell: the run primitive --------------------------------------------
    def ask(self, worker: str = "main") -> Optional[DesiredResult]:
        """Called before each measurement (serial loop, TuningRunManager): check every stop (signals,
        deadline, limits, an exhausted space), top up requests and claim the oldest for ``worker``.
        Returns the request to measure, or None when the run should stop (:attr:`stop_reason`)."""
        if self.interrupts is not None:
            self.interrupts.check()
        while True:
            reason = self.stop_check()
            if reason is None:
                # nothing in flight means nothing queued (this run's search writes every request)
                claim = self.db.claim_next(self.run_id, worker) if self.search.outstanding else None
                if claim is not None:
                    return desired_result(claim)
                reason = self.top_up(1)
            if reason is not None:
                self.stop_reason = reason
                return None

    def tell(self, desired: DesiredResult, result: Result, record: Optional[Any] = None) -> None:
        """Called once per request from :meth:`ask` with its result: store it (durable on return),
        then feed every new result of the run to the technique and the callbacks. ``record`` is the
        database record when the caller measured cost, machine and input (MeasurementDriver.measure)."""
        if not isinstance(result, Result):
            raise TunerScriptError(f"tell() needs a tunerlib.Result, got {type(result).__name__}")
        self.db.complete(desired.id, record if record is not None else result.record(machine_id=self.machine_id))
        self.collect()

    def collect(self) -> int:
        """Feed every result stored since the last call (by this process or by workers) to the technique
        and the callbacks; returns how many. The second half of :meth:`tell`."""
        return self.search.poll()

    def _loop_serial(self, status: StatusLine, interrupts: Interrupts) -> str:
        measure = OrphanGuard(MeasurementDriver(self.db, self.run_id, self.pv_id, self.interface,
                                                self.interface.input_manager(), self.machine_id,
                                                interrupts=interrupts, cap=self.options.measurement_timeout),
                              self.orphans)
        while (desired := self.ask()) is not None:
            result, record = measure.measure(desired)
            self.tell(desired, result, record)
            if measure.contract_error:
                raise TunerScriptError(measure.contract_error)
        return self.stop_reason

    def _loop_parallel(self, status: StatusLine, interrupts: Interrupts) -> str:
        """--parallelism N > 1: N local worker processes; --distributed: `tunerlib worker` processes
        anywhere (and the local ones, if any); --executor dask: the workers of a Dask cluster. This
        process only proposes, hands requests over (Dask) and stores and collects results."""
        opts = self.options
        executor = self._executor(interrupts)
        local = opts.parallelism if opts.parallelism > 1 else 0
        remote = RemoteCoordinator(self.db, self.run_id, opts.queue_per_worker, local) if opts.distributed else None
        idle = 0.001
        listener = None
        try:
            if executor is not None:
                executor.start()
            listener = self.db.listen(self.run_id) if remote is not None else None
            while True:
                interrupts.check()
                reason = self.stop_check() or self.top_up(remote.target() if remote else executor.capacity())
                if reason:
                    return reason
                if executor is not None and not executor.pulls_requests:
                    hand_over(executor, self.db, self.run_id, self.options.executor)
                if self.collect():
                    idle = 0.001
                    continue
                if remote is not None and remote.maintain():
                    continue
                if listener is not None:  # woken by the next result, or after 0.25 s to sweep leases
                    if executor is not None and self._store(executor.poll(0)):
                        continue
                    with interrupts.measuring():
                        listener.wait(0.25)
                elif executor is not None:
                    if self._store(executor.poll(idle)):
                        idle = 0.001
                        continue
                    idle = min(idle * 2, 0.02)
                else:
                    interrupts.sleep(idle)
                    idle = min(idle * 2, 0.02)
                status.update(self.search.tests, self._best_display(), self.search.outstanding)
        finally:
            interrupts.ignore_signals()
            try:
                if executor is not None:
                    executor.cancel()
                    executor.shutdown()
            finally:
                if listener is not None:
                    listener.close()
                self.collect()

    def _executor(self, interrupts: Interrupts) -> Optional[Executor]:
        """What measures in the parallel loop: the Dask executor (``--executor dask``; Dask is imported
        only then), the local process pool (``--parallelism N > 1``), or None when only ``tunerlib
        worker`` processes measure (``--distributed`` alone)."""
        opts = self.options
        if opts.executor == "dask":
            from ..executors.dask import DaskExecutor
            return DaskExecutor(self, interrupts)
        if opts.parallelism <= 1:
            return None
        url = self.db.worker_url()
        self.db.dispose()  # forked workers must not share pooled connections
        return WorkerPool(opts.parallelism, url, self.run_id, self.pv_id, self.interface, self.machine_id,
                          interrupts.deadline, opts.measurement_timeout, store=self.db, interrupts=interrupts)

    def _store(self, completions: List[Completion]) -> int:
        """Store what an executor measured; a broken tuner script stops the run."""
        count, broken = store_completions(self.db, completions)
        if broken:
            raise TunerScriptError(broken)
        return count

    # ---- wrap-up ----------------------------------------------------------------
    def _best_display(self) -> Optional[float]:
        best = self.search.best
        return None if best is None else self.objective.display(best.value)

    def finish(self, reason: str) -> None:
        """Called once at the end: cancel what was not measured, record the run's state, save the best."""
        self.db.cancel_unfinished(self.run_id)
        self.db.set_run_state(self.run_id, self._final_state(reason))
        self.snapshot()
        upload_finished_run(self.options, self.db, self.run_id, self.say)
        close_callbacks(self.callbacks)
        if self.search.best is not None:
            text, returned = call_captured_returning(self.interface.save_final_config, self.search.best.config)
            if text.strip():
                self.db.save_technique_state(self.run_id, FINAL_FORM, {"text": text[-MAX_CHARS:]})
            self._keep_final_best(returned)
        else:
            self.interface.finish_without_best()

    def _keep_final_best(self, returned: Any) -> None:
        """What ``save_final_config`` returned: a :class:`RetimedBest` becomes the run's best everywhere
        (:func:`tunerlib.engine.final_config.settle_final_best`); anything else but None is a tuner-script mistake,
        reported on stderr and ignored (nothing recorded is lost)."""
        self.final_best, why = settle_final_best(returned, self.manipulator, self.objective, self.search,
                                                 lambda: self.db.run_results(self.run_id))
        if why is not None:
            print(f"tunerlib: warning: save_final_config of {type(self.interface).__name__} {why}; "
                  "the summary reports the search's recorded best instead", file=sys.stderr)
        if self.final_best is not None:
            self.db.save_technique_state(self.run_id, FINAL_BEST, self.final_best)
        elif self.resumed and self.db.load_technique_state(self.run_id, FINAL_BEST) is not None:
            self.db.save_technique_state(self.run_id, FINAL_BEST, None)   # an older finish's re-timing

    def _final_state(self, reason: str) -> str:
        if reason in _COMPLETE:
            return "COMPLETE"
        if self.search.tests == 0 and not self.resumed:
            return "FAILED"
        return "ABORTED"

    def summary(self, reason: str) -> Summary:
        best = self.search.best
        extra: Dict[str, Any] = decisions_extra(self.technique)
        if self.resumed:
            extra["resumed_after_tests"] = self.resumed_from["tests"]
            extra["history_replay"] = getattr(self, "history_replay", "results")
        final = self.final_best
        recorded = None if best is None else self.objective.display(best.value)
        retimed = None
        if final is not None:
            retimed = {"how": final["how"], "search_best_value": final["search_best"]["value"],
                       "search_best_was_another_configuration": final["search_best"]["hash"] != final["hash"]}
            recorded = final["recorded_value"]
        return Summary(
            program=self.interface.program_name(), run_uuid=self.uuid,
            objective=self.objective.describe(), unit=self.objective.unit,
            best_value=(None if best is None else self.objective.display(best.value)) if final is None
            else final["value"],
            best_configuration=(None if best is None else best.config) if final is None
            else final["configuration"],
            recorded_value=recorded, retimed=retimed,
            tests=self.search.tests, states=dict(self.search.states),
            duplicates=self.search.duplicates,
            elapsed_seconds=time.perf_counter() - self.start, stopped_because=reason,
            technique=self.technique.name, seed=self.seed, database=self.db.display_url,
            first_error=_first_error_text(self.search.first_error),
            notice=timeout_notice(self.options, self.objective, best, self.search.states, self.search.tests),
            signal=None if self.signal is None else signal_name(self.signal), extra=extra)


def _first_error_text(first: Optional[tuple]) -> Optional[str]:
    """``result N: <last line of the error>`` for the run's first ERROR result, or None."""
    if first is None:
        return None
    result_id, extra = first
    text = ""
    if isinstance(extra, dict):
        for key in ("error", "traceback", "stderr", "message"):
            value = extra.get(key)
            if isinstance(value, str) and value.strip():
                text = value.strip().splitlines()[-1]
                break
    return f"result {result_id}: {text or 'no message (the Result has no error text in extra)'}"

