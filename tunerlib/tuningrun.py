"""TuningRun: sets up a run (database, technique, seeds) and drives the main loop."""
from __future__ import annotations

import json
import math
import os
import random
import socket
import time
from dataclasses import asdict
from typing import Any, Dict, List, Optional

from .db import ResultsDB
from .errors import UsageError
from .interface import MeasurementInterface
from .measurement import MeasurementDriver
from .options import DEFAULT_TEST_CAP, TuningOptions
from .parameters import ConfigurationError
from .progress import StatusLine, Summary
from .search import SearchDriver, TunerScriptError
from .techniques import Proposal, Technique, create_technique, generate_bandit, registry
from .workers import WorkerPool

#: results between two snapshots of the technique's state in the database
SNAPSHOT_EVERY = 25

#: consecutive empty fills with nothing in flight before the technique counts as finished
_IDLE_LIMIT = 200


class TuningRun:
    """One tuning run of a MeasurementInterface; :meth:`run` returns the Summary."""

    def __init__(self, interface: MeasurementInterface, options: Optional[TuningOptions] = None) -> None:
        self.interface = interface
        self.options = options or interface.options
        self.manipulator = interface.manipulator()
        self.objective = interface.objective()
        self.db = ResultsDB(self.options.database)
        self.pv_id = self.db.program_version_id(
            interface.project_name(), interface.program_name(), interface.program_version(),
            self.manipulator.parameter_info())
        self.machine_id = self.db.machine_id(socket.gethostname(), self.options.machine_class,
                                             os.cpu_count())
        self._open_run()
        self.search = SearchDriver(self.db, self.run_id, self.pv_id, self.manipulator,
                                   self.technique, self.objective)
        self.start = time.perf_counter()
        self.log = None
        self._idle = 0

    # ---- set-up ---------------------------------------------------------------
    def _open_run(self) -> None:
        opts = self.options
        self.resumed = False
        if opts.resume:
            run_id = self.db.latest_run(self.pv_id, opts.label)
            if run_id is None:
                raise UsageError(f"--resume: no earlier run of {self.interface.program_name()!r}"
                                 f"{'' if opts.label is None else f' with label {opts.label!r}'} in "
                                 f"{self.db.display_url}; drop --resume to start a new run")
            info = self.db.run_info(run_id)
            self.run_id, self.uuid, self.resumed = run_id, info["uuid"], True
            self.seed = opts.seed if opts.seed is not None else info["seed"]
            self.db.requeue_running(run_id)
            self.db.set_run_state(run_id, "RUNNING")
        else:
            self.seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)
            args = {k: v for k, v in asdict(opts).items()}
            self.run_id, self.uuid = self.db.create_run(self.pv_id, opts.label, args, self.seed,
                                                        self.machine_id, self.objective.describe())
        self.technique = self._make_technique()
        salt = f":resume:{self.db.counts_by_state(self.run_id)}" if self.resumed else ""
        self.technique.bind(self.manipulator, random.Random(f"{self.seed}{salt}"), self.technique.name)

    def _make_technique(self) -> Technique:
        """The root technique: the named one(s), or a bandit generated from the run's seed."""
        if getattr(self.options, "generate_bandit_technique", False):
            if self.options.technique:
                raise UsageError("--generate-bandit-technique and --technique exclude each other; "
                                 "drop one of them")
            return generate_bandit(registry(), self.manipulator, random.Random(f"{self.seed}:generate"))
        return create_technique(self.options.technique)

    def _seed_configurations(self) -> List[Dict[str, Any]]:
        configs = list(self.interface.seed_configurations())
        for path in self.options.seed_configuration:
            configs.extend(load_seed_file(path))
        checked = []
        for i, cfg in enumerate(configs):
            try:
                norm = self.manipulator.normalize(cfg)
                self.manipulator.validate(norm)
            except (ConfigurationError, ValueError) as exc:
                raise UsageError(f"seed configuration #{i + 1}: {exc}") from None
            for name in self.manipulator.names:
                if norm[name] != cfg[name]:  # normalize() clipped or rounded: not a legal value
                    param = self.manipulator.parameter(name)
                    raise UsageError(f"seed configuration #{i + 1}: parameter {name!r}: value "
                                     f"{cfg[name]!r} is not legal ({param.describe()})")
            cfg = norm
            if not self.manipulator.is_feasible(cfg):
                bad = ", ".join(self.manipulator.violated_constraints(cfg))
                raise UsageError(f"seed configuration #{i + 1} violates known constraint(s): {bad}")
            checked.append(cfg)
        return checked

    # ---- main loop ------------------------------------------------------------
    def run(self) -> Summary:
        opts = self.options
        status = StatusLine(opts.display_frequency, opts.quiet)
        self.prepare()
        reason = "interrupted"
        try:
            if opts.parallelism > 1:
                reason = self._loop_parallel(status)
            else:
                reason = self._loop_serial(status)
        finally:
            status.close()
            self.finish(reason)
        return self.summary(reason)

    def prepare(self) -> None:
        """Called once before the loop: replay a resumed run, queue the seed configurations."""
        self._open_log()
        if self.resumed:
            self.search.replay()
            self.search.adopt_pending()
            self._restore_technique_state()
        self.search.listeners.append(self._maybe_snapshot)
        for cfg in self._seed_configurations():
            self.search.submit(Proposal(cfg, "seed"))

    def _restore_technique_state(self) -> None:
        """Load the technique's last snapshot when it is current (the run stopped cleanly after it);
        after a crash the replayed results have rebuilt the state and the stale snapshot is ignored."""
        saved = self.db.load_technique_state(self.run_id, self.technique.name)
        if saved and saved.get("last_result_id") == self.search.last_result_id:
            self.technique.load_state_dict(saved["state"])

    def _maybe_snapshot(self, row: Any, value: float, new_best: bool) -> None:
        if self.search.tests % SNAPSHOT_EVERY == 0:
            self._snapshot()

    def _snapshot(self) -> None:
        """Record the technique's state (e.g. bandit arms, uses and credits) in the results database."""
        self.db.save_technique_state(self.run_id, self.technique.name,
                                     {"last_result_id": self.search.last_result_id,
                                      "state": self.technique.state_dict()})

    def _test_cap(self) -> Optional[int]:
        if self.options.test_limit is not None:
            return self.options.test_limit
        return None if self.options.stop_after is not None else DEFAULT_TEST_CAP

    def _stop_reason(self) -> Optional[str]:
        cap = self._test_cap()
        if cap is not None and self.search.tests >= cap:
            return "test limit reached"
        if self.options.stop_after is not None and time.perf_counter() - self.start >= self.options.stop_after:
            return "time limit reached"
        return None

    def _request(self, target: int) -> Optional[str]:
        """Top up requests; a stop reason when nothing more can be requested or awaited."""
        cap = self._test_cap()
        budget = None if cap is None else cap - self.search.tests - self.search.outstanding
        if budget is None or budget > 0:
            made = self.search.fill(target, budget)
        else:
            made = 0
        if self.search.outstanding:
            self._idle = 0
            return None
        if self.search.exhausted:
            return "search space exhausted"
        self._idle += made == 0
        return "technique has nothing more to propose" if self._idle >= _IDLE_LIMIT else None

    def _loop_serial(self, status: StatusLine) -> str:
        measure = MeasurementDriver(self.db, self.run_id, self.pv_id, self.interface,
                                    self.interface.input_manager(), self.machine_id)
        while True:
            reason = self._stop_reason() or self._request(1)
            if reason:
                return reason
            if measure.run_one():
                if measure.contract_error:
                    raise TunerScriptError(measure.contract_error)
                self.search.poll()
            status.update(self.search.tests, self._best_display(), self.search.outstanding)

    def _loop_parallel(self, status: StatusLine) -> str:
        self.db.dispose()  # forked workers must not share pooled connections
        pool = WorkerPool(self.options.parallelism,
                          self.db.engine.url.render_as_string(hide_password=False), self.run_id, self.pv_id,
                          self.interface, self.machine_id)
        pool.start()
        idle = 0.001
        try:
            while True:
                reason = self._stop_reason() or self._request(self.options.parallelism)
                if reason:
                    return reason
                if self.search.poll():
                    idle = 0.001
                else:
                    failure = pool.failed()
                    if failure:
                        raise TunerScriptError(failure)
                    time.sleep(idle)
                    idle = min(idle * 2, 0.02)
                status.update(self.search.tests, self._best_display(), self.search.outstanding)
        finally:
            pool.stop(wait=0.0 if self._stop_reason() == "time limit reached" else 30.0)
            self.search.poll()

    # ---- wrap-up ----------------------------------------------------------------
    def _best_display(self) -> Optional[float]:
        best = self.search.best
        return None if best is None else self.objective.display(best.value)

    def _open_log(self) -> None:
        if not self.options.results_log:
            return
        new = not os.path.exists(self.options.results_log)
        self.log = open(self.options.results_log, "a")
        if new:
            self.log.write("elapsed_s,test,value,best\n")
        self.search.listeners.append(self._log_result)

    def _log_result(self, row: Any, value: float, new_best: bool) -> None:
        shown = self.objective.display(value) if math.isfinite(value) else ""
        self.log.write(f"{time.perf_counter() - self.start:.4f},{self.search.tests},{shown},"
                       f"{self._best_display() if self._best_display() is not None else ''}\n")

    def finish(self, reason: str) -> None:
        """Called once at the end: drop unclaimed requests, record the run's state, save the best."""
        self.db.abort_requested(self.run_id)
        state = "COMPLETE" if reason != "interrupted" else "ABORTED"
        self.db.set_run_state(self.run_id, state)
        self._snapshot()
        if self.log:
            self.log.close()
        if self.search.best is not None:
            self.interface.save_final_config(self.search.best.config)
        else:
            self.interface.finish_without_best()

    def summary(self, reason: str) -> Summary:
        best = self.search.best
        return Summary(
            program=self.interface.program_name(), run_uuid=self.uuid,
            objective=self.objective.describe(),
            best_value=None if best is None else self.objective.display(best.value),
            best_configuration=None if best is None else best.config,
            tests=self.search.tests, states=dict(self.search.states),
            duplicates=self.search.duplicates,
            elapsed_seconds=time.perf_counter() - self.start, stopped_because=reason,
            technique=self.technique.name, seed=self.seed, database=self.db.display_url)


def load_seed_file(path: str) -> List[Dict[str, Any]]:
    """Read a JSON file holding one configuration object or a list of them."""
    try:
        with open(path) as fh:
            data = json.load(fh)
    except OSError as exc:
        raise UsageError(f"--seed-configuration {path}: cannot read file ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--seed-configuration {path}: malformed JSON at line {exc.lineno} "
                         f"column {exc.colno}: {exc.msg}") from None
    items = data if isinstance(data, list) else [data]
    if not all(isinstance(item, dict) for item in items):
        raise UsageError(f"--seed-configuration {path}: expected a JSON object (parameter name → "
                         f"value) or a list of them")
    return items
