"""The search driver: technique proposals → REQUESTED rows; new results → technique feedback.

It shares nothing with the measurement driver but the results database, and it never calls the run:
the time limit of a new request comes from a limit policy and each new result goes to an event sink,
both plain callables the engine passes in.  The run reads it through five names only: :attr:`progress`
(the counters), :meth:`fill`, :meth:`submit`, :meth:`poll` and :meth:`restore` (a resumed run's history).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..db import ResultsStore
from ..errors import TunerScriptError
from ..front import ParetoFront
from ..multiobjective import objective_values
from ..objectives import Objective, ObjectiveError
from ..parameters import ConfigurationError, ConfigurationManipulator
from ..result import Result
from ..techniques import Feedback, Proposal, Technique, TechniqueError

_STATE_FOR_TECHNIQUES = {"OK": "ok", "INFEASIBLE": "infeasible", "ERROR": "error", "TIMEOUT": "error"}

#: proposals in a row that create no new request before the space counts as exhausted
STALL_LIMIT = 5000


@dataclass
class Best:
    value: float
    key: str
    config: Dict[str, Any]
    result_id: int
    result: Result


#: the limit policy: the time limit (seconds) of a new request given the search's best so far, or None
LimitPolicy = Callable[[Optional[Best]], Optional[float]]
#: the event sink: called once per new result with (result row, oriented value, was it a new best)
ResultSink = Callable[[Any, float, bool], None]
#: the request writer: writes one new request to the results database, given (configuration hash,
#: configuration, requestor, generation, time limit)
RequestWriter = Callable[[str, Dict[str, Any], str, int, Optional[float]], None]


class SearchProgress:
    """The search's counters, kept up to date by its driver; the run, its callbacks and its summary read
    them and never write them."""

    def __init__(self, driver: "SearchDriver") -> None:
        self._driver = driver
        #: results fed back so far
        self.tests = 0
        #: results per state (OK, ERROR, TIMEOUT, INFEASIBLE)
        self.states: Counter = Counter()
        #: proposals of configurations already measured or in flight
        self.duplicates = 0
        #: the best OK result so far, or None
        self.best: Optional[Best] = None
        #: (result id, extra) of the run's first ERROR result
        self.first_error: Optional[tuple] = None
        #: the newest result fed back
        self.last_result_id = 0
        #: configuration hash -> (oriented value, state, not measured, objective values) of every result fed back
        self.known: Dict[str, tuple] = driver.known
        #: the Pareto front of a multi-objective run (empty in a single-objective one)
        self.front = ParetoFront()

    @property
    def outstanding(self) -> int:
        """Requests written and not yet fed back."""
        return len(self._driver.inflight)

    @property
    def exhausted(self) -> bool:
        """True when the technique keeps proposing only known or infeasible configurations, or every
        configuration of a finite space has been seen."""
        return self._driver.exhausted()


class SearchDriver:
    """Called by the run loop: :meth:`fill` to request work, :meth:`poll` to collect results."""

    def __init__(self, db: ResultsStore, run_id: int, program_version_id: int,
                 manipulator: ConfigurationManipulator, technique: Technique,
                 objective: Objective, limit: Optional[LimitPolicy] = None,
                 on_result: Optional[ResultSink] = None, write: Optional[RequestWriter] = None) -> None:
        """``limit`` is called for each new request with the best so far: the time limit (seconds) stored
        with it and given to ``run()``, or None.  ``on_result`` is called once per new result, after the
        technique got its feedback.  ``write`` writes each new request (default: REQUESTED, through the
        store's ``request_configuration``)."""
        self.db = db
        self.run_id = run_id
        self.pv_id = program_version_id
        self.manipulator = manipulator
        self.technique = technique
        self.objective = objective
        self.limit = limit
        self.on_result = on_result
        self.write = write or self._request
        self.known: Dict[str, tuple] = {}        # key -> (value, state, unmeasured, values)
        self.inflight: Dict[str, List[str]] = {}  # key -> requestors waiting for it
        self.progress = SearchProgress(self)
        self.rejected = 0
        self.stall = 0
        self.generation = 0
        #: the recorded history being replayed, while :meth:`restore` replays it
        self._replaying: Optional[Any] = None

    # ---- requesting ---------------------------------------------------------
    def exhausted(self) -> bool:
        """True when the technique keeps proposing only known or infeasible configurations,
        or every configuration of a finite space has been seen (read as ``progress.exhausted``)."""
        if self.stall >= STALL_LIMIT:
            return True
        size = self.manipulator.search_space_size()
        return math.isfinite(size) and len(self.known) + len(self.inflight) >= size

    def fill(self, target: int, budget: Optional[int] = None) -> int:
        """Request new configurations until ``target`` are in flight (at most ``budget``
        new ones); returns how many new requests were written."""
        made = 0
        for _ in range(max(64, 8 * target)):
            if len(self.inflight) >= target or (budget is not None and made >= budget):
                break
            if self.stall >= STALL_LIMIT:
                break
            proposal = self.technique.propose()
            if proposal is None:
                break
            made += self.submit(proposal)
        return made

    def submit(self, proposal: Proposal) -> bool:
        """Record one proposal; returns True when it became a new measurement request."""
        cfg, key = self._checked(proposal)
        if key in self.known:
            self.progress.duplicates += 1
            self.stall += 1
            value, state, unmeasured, values = self.known[key]
            self._feedback(cfg, key, value, state, proposal.requestor, False, duplicate=True, unmeasured=unmeasured,
                           values=values)
            return False
        if key in self.inflight:
            self.progress.duplicates += 1
            self.stall += 1
            self.inflight[key].append(proposal.requestor)
            return False
        if not self.manipulator.is_feasible(cfg):
            self.rejected += 1
            self.stall += 1
            self._feedback(cfg, key, math.inf, "infeasible", proposal.requestor, False,
                           values=self._infeasible_values())
            return False
        row = self._replaying.adopt(key) if self._replaying is not None and self._replaying.active else None
        if row is not None:
            self.generation = row.generation
        else:
            self.write(key, cfg, proposal.requestor, self.generation,
                       self.limit(self.progress.best) if self.limit else None)
        self.generation += 1
        self.inflight[key] = [proposal.requestor]
        self.stall = 0
        return True

    def _request(self, key: str, cfg: Dict[str, Any], requestor: str, generation: int,
                 limit: Optional[float]) -> None:
        self.db.request_configuration(self.run_id, self.pv_id, key, cfg, requestor, generation, limit)

    def _checked(self, proposal: Proposal):
        cfg = proposal.config
        try:
            self.manipulator.validate(cfg)
        except (ConfigurationError, ValueError) as exc:
            raise TechniqueError(f"technique {proposal.requestor!r} proposed an illegal "
                                 f"configuration: {exc}") from None
        key = proposal.key  # the technique's own hash_valid of cfg, when it computed one
        return cfg, key if key is not None else self.manipulator.hash_valid(cfg)

    def _adopt_pending(self) -> None:
        """After a resume: requests already in the database count as in flight."""
        for row in self.db.desired_results(self.run_id):
            if row.state in ("REQUESTED", "RUNNING"):
                self.inflight.setdefault(row.config_hash, []).append(row.requestor)
                self.generation = max(self.generation, row.generation + 1)
            elif row.state == "COMPLETE":
                self.generation = max(self.generation, row.generation + 1)

    # ---- collecting ---------------------------------------------------------
    def poll(self) -> int:
        """Read results written since the last poll and feed them back; returns their count."""
        progress = self.progress
        rows = self.db.results_after(self.run_id, progress.last_result_id)
        best_before = progress.best
        new_best_ids = [rid for rid in (self._absorb(row) for row in rows) if rid is not None]
        if new_best_ids:
            self.db.mark_new_best(new_best_ids)
        if progress.best is not best_before and self.limit is not None and self.inflight:
            limit = self.limit(progress.best)
            if limit is not None:  # requests still waiting get the limit the new best gives
                self.db.tighten_limits(self.run_id, limit)
        return len(rows)

    def restore(self, replay: Optional[Any], cap: Optional[int], seeds: Sequence[Proposal]) -> None:
        """Called once by a resumed run, before its loop.  With ``replay`` (``resume.HistoryReplay``):
        submit ``seeds``, then propose again and feed back the recorded results in their order until the
        history or ``cap`` tests run out, so the technique's state is re-derived exactly (the replay
        raises ``Diverged`` when the technique proposes otherwise).  Without: feed every stored result
        back, count the requests still in the database as in flight, load the technique's last
        snapshot when it is of exactly these results, then submit ``seeds``."""
        if replay is None:
            self.poll()
            self._adopt_pending()
            saved = self.db.load_technique_state(self.run_id, self.technique.name)
            if saved and saved.get("last_result_id") == self.progress.last_result_id:
                self.technique.load_state_dict(saved["state"])
            for proposal in seeds:
                self.submit(proposal)
            return
        self._replaying = replay
        try:
            for proposal in seeds:
                self.submit(proposal)
            while replay.active and (cap is None or self.progress.tests < cap):
                self.fill(1)
                row = replay.next_result() if replay.active else None
                if row is None:
                    return
                new_best = self._absorb(row)
                if new_best is not None:
                    self.db.mark_new_best([new_best])
        finally:
            self._replaying = None

    def _absorb(self, row: Any) -> Optional[int]:
        progress = self.progress
        progress.last_result_id = max(progress.last_result_id, row.id)
        result = Result(state=row.state, time=row.time, accuracy=row.accuracy, energy=row.energy,
                        size=row.size, extra=row.extra or {})
        try:
            value = self.objective.value(result)
            values = objective_values(self.objective, result)
        except ObjectiveError as exc:
            raise TunerScriptError(str(exc)) from None
        state = _STATE_FOR_TECHNIQUES[row.state]
        new_best = state == "ok" and (progress.best is None or value < progress.best.value)
        if new_best:
            progress.best = Best(value, row.config_hash, row.config_data, row.id, result)
        if values:  # several objectives: "new best" means "entered the Pareto front"
            new_best = state == "ok" and progress.front.offer(values, row.config_hash, row.config_data, row.id)
        progress.tests += 1
        progress.states[row.state] += 1
        if row.state == "ERROR" and progress.first_error is None:
            progress.first_error = (row.id, row.extra or {})
        unmeasured = state != "ok" and bool((row.extra or {}).get("not_measured"))
        self.known[row.config_hash] = (value, state, unmeasured, values)
        requestors = self.inflight.pop(row.config_hash, None) or [row.requestor or ""]
        cost = math.nan if row.collection_cost is None else float(row.collection_cost)
        for i, requestor in enumerate(requestors):
            self._feedback(row.config_data, row.config_hash, value, state, requestor, new_best and i == 0,
                           unmeasured=unmeasured, cost=cost if i == 0 else math.nan, values=values)
        if self.on_result is not None:
            self.on_result(row, value, new_best)
        return row.id if new_best and not row.was_new_best else None

    def _feedback(self, cfg: Dict[str, Any], key: str, value: float, state: str,
                  requestor: str, new_best: bool, duplicate: bool = False, unmeasured: bool = False,
                  cost: float = math.nan, values: tuple = ()) -> None:
        self.technique.observe(Feedback(cfg, key, value, state, requestor, new_best, duplicate, unmeasured, cost,
                                        tuple(values)))

    def _infeasible_values(self) -> tuple:
        count = getattr(self.objective, "count", 1)
        return (math.inf,) * count if count > 1 else ()
