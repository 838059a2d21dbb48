"""TuningRun: one tuning run, its ask/tell primitive and its stop checks; it sets itself up
(:mod:`.setup`), runs a loop (:mod:`.loop`), finishes (:mod:`.finish`) and sums up (:mod:`.summary`).

Lifecycle of the ``tuning_run`` row: it is written only after the options, the technique and the seed
configurations were checked (a bad start leaves no run behind). A run that stops on its limits or an
exhausted space is COMPLETE; one stopped by a signal or an error after it had results is ABORTED (and
``--resume`` continues it); one that fails before its first result is FAILED (never resumed). A failed
``--resume`` leaves the run in the state it had. When the run stops, requests not measured to the end
become CANCELLED and are measured again by ``--resume``.
"""
from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence, Set

from ..db import open_store
from ..errors import TunerScriptError
from ..executors.measurement import claim
from ..interrupts import Interrupts, RunInterrupted, signal_name
from ..multiobjective import run_objective
from ..options import DEFAULT_TEST_CAP, TuningOptions
from ..result import DesiredResult, Result
from ..techniques import Proposal, Technique
from .callbacks import Callback, Events, ResultsLog, RunView, TechniqueSnapshots
from .contracts import Tunable
from .cross_session import stderr_say, warm_start
from .finish import finish, finish_run
from .history import continue_history
from .loop import run_loop
from .progress import StatusLine, Summary
from .search import SearchDriver
from ..resumes import record_resume
from .setup import set_up
from .summary import summary

#: results between two snapshots of the technique's state in the database, and the fewest seconds between two
SNAPSHOT_EVERY, SNAPSHOT_SECONDS = 25, 1.0

#: consecutive empty fills with nothing in flight before the technique counts as finished
_IDLE_LIMIT = 200


class TuningRun:
    """One tuning run of a MeasurementInterface.

    :meth:`run` tunes until a stop and returns the Summary. Its steps are public: :meth:`prepare` once,
    then :meth:`ask` for the next request to measure and :meth:`tell` with its result
    (``TuningRunManager``, for callers that measure themselves), then :meth:`finish` and
    :meth:`summary`. ``callbacks`` are called after each new result (see :mod:`tunerlib.engine.callbacks`).
    """

    # set by set_up (tunerlib.engine.setup) before __init__ returns; a resume that changes the
    # technique sets ``technique`` and ``search`` again (tunerlib.engine.history)
    pv_id: int
    machine_id: int
    resumed_from: Optional[Dict[str, Any]]  # the row of the run --resume continues
    resumed: bool
    seed: int
    prior: Optional[Dict[str, Any]]
    technique: Technique
    seeds: List[Dict[str, Any]]
    run_id: int
    uuid: str
    search: SearchDriver

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
        self.objective = run_objective(interface, self.options)
        self.db = open_store(self.options.database)
        #: the event sink the search driver reports new results to (callbacks from :meth:`prepare` on)
        self.events = Events(self.objective)
        try:
            set_up(self)
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

    # ---- preparing: seeds, or the history of a resumed run ----------------------
    def prepare(self) -> None:
        """Called once before the loop: queue the seed configurations, or replay a resumed run."""
        if self.resumed_from is not None:
            continue_history(self)
            record_resume(self.db, self.run_id, self.resumed_from, self.interface.script_version())
        else:
            warm = warm_start(self.options, self.manipulator, self.manipulator.parameter_info(), self.say)
            for cfg in self.seeds + warm:
                self.search.submit(Proposal(cfg, "seed"))
        builtin: List[Callback] = [TechniqueSnapshots(self.snapshot, SNAPSHOT_EVERY, SNAPSHOT_SECONDS)]
        if self.options.results_log:
            builtin.append(ResultsLog(self.options.results_log))
        self.callbacks[:0] = builtin
        self.events.start(RunView(self.search.progress, self.run_id, self.uuid, self.db), self.callbacks,
                          self.start)

    def snapshot(self) -> None:
        """Record the technique's state (e.g. bandit arms, uses and credits) in the results database."""
        self.db.save_technique_state(self.run_id, self.technique.name,
                                     {"last_result_id": self.search.progress.last_result_id,
                                      "state": self.technique.state_dict()})

    # ---- main loop ------------------------------------------------------------
    def run(self) -> Summary:
        """Tune until a limit, the end of the space, a signal or an error; always closes the run."""
        opts = self.options
        status = StatusLine(opts.display_frequency, opts.quiet, total=self.test_cap(),
                            stop_after=opts.stop_after, unit=self.objective.unit)
        self.callbacks.append(status)
        deadline = None if opts.stop_after is None else time.monotonic() + opts.stop_after
        interrupts = self.interrupts = Interrupts(deadline).install()
        reason = "error"
        try:
            try:
                self.prepare()
                status.begin(self.search.progress.tests)
                reason = run_loop(self, status, interrupts)
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

    def test_cap(self) -> Optional[int]:
        """The most tests this run makes (``--test-limit``; a default cap without ``--stop-after``), or None."""
        if self.options.test_limit is not None:
            return self.options.test_limit
        return None if self.options.stop_after is not None else DEFAULT_TEST_CAP

    def stop_check(self) -> Optional[str]:
        """The reason to stop now (a limit reached), or None; called before every request."""
        cap = self.test_cap()
        if cap is not None and self.search.progress.tests >= cap:
            return "test limit reached"
        if self.options.stop_after is not None and time.perf_counter() - self.start >= self.options.stop_after:
            return "time limit reached"
        return None

    def top_up(self, target: int) -> Optional[str]:
        """Ask the technique for new requests until ``target`` are in flight (within the test limit);
        a stop reason when nothing more can be requested or awaited (space exhausted, technique done).
        The first half of :meth:`ask`; the run loop calls it with its executor's capacity."""
        cap = self.test_cap()
        budget = None if cap is None else cap - self.search.progress.tests - self.search.progress.outstanding
        made = self.search.fill(target, budget) if budget is None or budget > 0 else 0
        if self.search.progress.outstanding:
            self._idle = 0
            return None
        if self.search.progress.exhausted:
            return "search space exhausted"
        self._idle += made == 0
        return "technique has nothing more to propose" if self._idle >= _IDLE_LIMIT else None

    # ---- ask / tell: the run primitive --------------------------------------------
    def ask(self, worker: str = "main") -> Optional[DesiredResult]:
        """Called before each measurement a caller makes itself (TuningRunManager): check every stop (signals,
        deadline, limits, an exhausted space), top up requests and claim the oldest for ``worker``.
        Returns the request to measure, or None when the run should stop (:attr:`stop_reason`)."""
        if self.interrupts is not None:
            self.interrupts.check()
        while True:
            reason = self.stop_check()
            if reason is None:
                # nothing in flight means nothing queued (this run's search writes every request)
                desired = claim(self.db, self.run_id, worker) if self.search.progress.outstanding else None
                if desired is not None:
                    return desired
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
        if desired.id is None:
            raise TunerScriptError("tell() needs a request that ask() returned; this DesiredResult has no id")
        self.db.complete(desired.id, record if record is not None else result.record(machine_id=self.machine_id))
        self.collect()

    def collect(self) -> int:
        """Feed every result stored since the last call (by this process or by workers) to the technique
        and the callbacks; returns how many. The second half of :meth:`tell`."""
        return self.search.poll()

    # ---- wrap-up ----------------------------------------------------------------
    def best_display(self) -> Optional[float]:
        """The best value so far as the objective displays it, or None before the first success."""
        best = self.search.progress.best
        return None if best is None else self.objective.display(best.value)

    def finish(self, reason: str) -> None:
        """Called once at the end: cancel what was not measured, record the run's state, save the best
        (see :func:`tunerlib.engine.finish.finish`)."""
        finish(self, reason)

    def summary(self, reason: str) -> Summary:
        """The run's Summary (called once, after :meth:`finish`)."""
        return summary(self, reason)
