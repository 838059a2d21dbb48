"""Following one run: its results read incrementally into a :class:`~tunerlib.report.data.RunData`.

A :class:`RunFollower` is created the first time the dashboard shows a run; each poll reads only the
results and requests stored since the last one (``id > last seen``: results commit in id order on
SQLite and, under the run's result-order lock, on PostgreSQL), so following a long run costs one
small query per poll. The cached :class:`RunData` is the one the HTML report draws from, so the
best-so-far, new bests, units and allocation read the same in both.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..db.admin import error_text, shown_state
from ..engine.final_config import FINAL_BEST, final_best
from ..objectives import UNIT_KEY
from ..report.data import Point, ReportError, RunData, credited_technique, metric_value, objective_parts
from .source import ReadOnlyDatabase

__all__ = ["Objectives", "RunFollower", "extend_front", "objective_units", "objectives_of"]


@dataclass(frozen=True)
class _Row:
    """What :meth:`RunData.best_point` reads of a result row besides its :class:`Point` fields."""

    config_hash: str


#: [(sign, metric), ...] of a run: +1 minimise, -1 maximise; several for a multi-objective run
Objectives = List[Tuple[float, str]]


#: the keys of a run's ``args`` that list a multi-objective run's objectives (each ``minimize time``...)
#: and map each metric to its unit (None: unitless)
OBJECTIVE_LIST_KEY, OBJECTIVE_UNITS_KEY = "objective_list", "objective_units"


def objectives_of(text: str, args: Dict[str, Any]) -> Objectives:
    """The objectives of a run: the list its ``args`` record (:data:`OBJECTIVE_LIST_KEY`) where it has
    one, else its objective text, ``minimize time`` or several joined by commas (``minimize time,
    minimize energy``); ReportError when some part is not ``minimize|maximize <metric>`` (a custom
    objective the dashboard cannot read back)."""
    listed = args.get(OBJECTIVE_LIST_KEY)
    if isinstance(listed, list) and listed and all(isinstance(part, str) for part in listed):
        return [objective_parts(part.strip()) for part in listed]
    return [objective_parts(part.strip()) for part in (text or "").split(",")]


def objective_units(objectives: Objectives, args: Dict[str, Any]) -> List[Optional[str]]:
    """The unit of each objective (None: unitless or not recorded): a multi-objective run records them
    per metric (:data:`OBJECTIVE_UNITS_KEY`), a single objective's is the run's objective unit."""
    per_metric = args.get(OBJECTIVE_UNITS_KEY)
    if len(objectives) > 1 and isinstance(per_metric, dict):
        return [per_metric.get(metric) for _, metric in objectives]
    return [args.get(UNIT_KEY)] + [None] * (len(objectives) - 1)


class RunFollower:
    """The dashboard's view of one run, refreshed by :meth:`refresh` (thread-safe)."""

    def __init__(self, db: ReadOnlyDatabase, info: dict) -> None:
        """Start following the run ``info`` (a :meth:`ReadOnlyDatabase.runs` entry) of ``db``; nothing
        is read until the first :meth:`refresh`."""
        self.db, self.info = db, info
        self.lock = threading.Lock()
        args = info["args"] if isinstance(info["args"], dict) else {}
        try:
            self.objectives: Objectives = objectives_of(info["objective"], args)
            self.objective_error: Optional[str] = None
        except ReportError as exc:
            self.objectives, self.objective_error = [], str(exc)
        sign = self.objectives[0][0] if self.objectives else 1.0
        space, machine_class = db.run_space(info["id"])
        self.data = RunData(info["id"], info["uuid"], info["label"], info["project"], info["program"],
                            info["version"], info["state"], info["seed"], info["objective"], args, space,
                            float(info["start_date"]), info["end_date"], machine_class, [], [], sign)
        #: {result id: the value of every objective} of the OK results
        self.values: Dict[int, List[Optional[float]]] = {}
        self.errors: Dict[int, str] = {}
        self.workers: Dict[int, Optional[str]] = {}
        self.costs: Dict[int, Optional[float]] = {}
        self._last_result = self._last_request = 0
        self._state_read = False
        self._state_saved: Optional[Tuple[Any, Any]] = None
        self.decisions: List[Dict[str, Any]] = []
        #: (result, its objective values oriented so that lower is better) of the current Pareto front
        #: of a run with several objectives, in result order
        self.front: Front = []
        #: (results it was computed from, the importance document), see views.importance_doc
        self.importance: Optional[Tuple[int, Dict[str, Any]]] = None

    @property
    def uuid(self) -> str:
        return self.info["uuid"]

    def unit(self) -> Optional[str]:
        """The objective's recorded unit (None: unitless or not recorded; see :meth:`unit_text`)."""
        return self.data.args.get(UNIT_KEY)

    def refresh(self, info: Optional[dict] = None) -> None:
        """Take the run's newest row (``info``, from the runs list) and read what was stored since the
        last refresh; called by every API request about the run."""
        with self.lock:
            if info is not None:
                self.info = info
                self.data.state, self.data.end_date = info["state"], info["end_date"]
            if info is None or info["last_result"] != self._last_result or info["requests"] != len(
                    self.data.requests):
                self._read_new()
            self._read_state()

    def _read_new(self) -> None:
        rows = self.db.results_after(self.data.id, self._last_result)
        for row in rows:
            self._add(row)
        for request_id, requestor in self.db.requests_after(self.data.id, self._last_request):
            self.data.requests.append(credited_technique(requestor))
            self._last_request = request_id

    def _add(self, row: dict) -> None:
        start = self.data.start_date
        values = [metric_value(metric, _Metrics(row)) for _, metric in self.objectives]
        present = [v for v in values if v is not None]
        value = present[0] if values and len(present) == len(values) else None
        point = Point(row["id"], len(self.data.points) + 1, row["state"], value,
                      max(0.0, (row["collection_date"] or start) - start), credited_technique(row["requestor"]),
                      row["requestor"], row["config_data"], False, _Row(row["config_hash"]))
        self.data.points.append(point)
        if value is not None:
            self.values[point.result_id] = values
            if len(self.objectives) > 1:
                oriented = [sign * v for (sign, _), v in zip(self.objectives, present)]
                self.front = extend_front(self.front, point, oriented)
        if row["state"] != "OK":
            self.errors[point.result_id] = error_text(row["extra"])
        self.workers[point.result_id] = row["worker"]
        self.costs[point.result_id] = row["collection_cost"]
        self._last_result = row["id"]

    def _read_state(self) -> None:
        """Re-read the decisions and the re-timed best when the run saved a technique state or a run
        artifact since the last read (the run saves its technique's state every few results and both
        at the end, after it recorded its final state)."""
        saved = (self.info.get("state_saved"), self.info.get("artifact_saved"))
        if self._state_read and saved == self._state_saved:
            return
        from ..report.data import technique_decisions
        self.decisions = technique_decisions(self.db, self.data.id, self.data.args)
        self.data.final_best = final_best(self.db.load_run_artifact(self.data.id, FINAL_BEST))
        self._state_read, self._state_saved = True, saved

    def shown_state(self) -> str:
        """The run's state as it really is (a RUNNING run whose process is gone is KILLED)."""
        return shown_state(self.info)


def _dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """True when ``a`` is no worse than ``b`` everywhere and better somewhere (lower is better)."""
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))


Front = List[Tuple[Any, List[float]]]
"""(item, its objective values, lower is better) of the items on a Pareto front, in arrival order"""


def extend_front(front: Front, item: Any, values: List[float]) -> Front:
    """The Pareto front (``(item, values)`` pairs no other dominates, lower values better) of the items
    of ``front`` and one more: the non-dominated part of the old front and the new item, since an item
    dominated once stays dominated. An item whose values equal a member's does not enter (the search
    driver's front keeps the first). One pass over the front."""
    if any(all(x <= y for x, y in zip(old, values)) for _, old in front):
        return front
    return [(kept, old) for kept, old in front if not _dominates(values, old)] + [(item, values)]


class _Metrics:
    """A result row dict seen through the attributes :func:`metric_value` reads."""

    def __init__(self, row: dict) -> None:
        self.state, self.extra = row["state"], row["extra"]
        self.time, self.accuracy, self.energy, self.size = row["time"], row["accuracy"], row["energy"], row["size"]
