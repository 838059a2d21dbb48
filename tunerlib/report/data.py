"""Reading tuning runs for plots, reports and exports.

Everything is read through the :class:`~tunerlib.db.ResultsStore` protocol (``list_runs``,
``run_export``, ``run_results``, ``desired_results``, ``error_results``, ``result_places``,
``load_technique_state``, ``load_run_artifact``), so a SQLite file and a PostgreSQL database read the same way. Nothing here
writes to the database, and a path that names no existing database is refused instead of created.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from ..db import DatabaseError, ResultsDB
from ..db.protocol import open_existing
from ..errors import UsageError
from ..engine.final_config import FINAL_BEST, FINAL_FORM, final_best, final_form_text
from ..objectives import UNIT_KEY
from ..resumes import RESUMES, read_resumes

__all__ = ["FAILURE_STATES", "Point", "ReportError", "RunData", "credited_technique", "load_runs",
           "open_results", "read_run"]

#: result states that count as failures
FAILURE_STATES = ("ERROR", "TIMEOUT", "INFEASIBLE")
_METRICS = ("time", "accuracy", "energy", "size")


class ReportError(UsageError):
    """Bad input to ``tunerlib plot|report|export``: the message is one line naming the fix."""


@dataclass(frozen=True)
class Point:
    """One result of a run, in result order."""

    result_id: int
    index: int                 #: 1-based evaluation number within the run
    state: str                 #: OK / ERROR / TIMEOUT / INFEASIBLE
    value: Optional[float]     #: the objective's metric as the user sees it (None unless OK)
    seconds: float             #: seconds from the start of the run to when the result was stored
    technique: str             #: technique credited with the request ("seed" for seed configurations)
    requestor: Optional[str]
    config: Any
    was_new_best: bool
    row: Any = field(repr=False, compare=False, default=None)   #: the ResultRow itself


@dataclass
class RunData:
    """One tuning run with its results (see :func:`load_runs`)."""

    id: int
    uuid: str
    label: Optional[str]
    project: str
    program: str
    version: str
    state: str
    seed: Optional[int]
    objective: str
    args: Dict[str, Any]
    parameter_info: str
    start_date: float
    end_date: Optional[float]
    machine_class: Optional[str]
    points: List[Point]
    requests: List[str]        #: credited technique of every request, in request order
    #: +1 when lower is better, -1 when higher is better
    sign: float = 1.0
    final_form: Optional[str] = None
    #: result id -> where it was measured (machine, machine class, worker)
    places: Dict[int, Any] = field(default_factory=dict)
    #: the tuner's re-timed best (:func:`tunerlib.engine.final_config.final_best`), or None
    final_best: Optional[Dict[str, Any]] = None
    #: the decisions of a root technique that explains them (``auto``): evaluation, technique, reason
    decisions: List[Dict[str, Any]] = field(default_factory=list)
    #: the version of the tuner script that measured the run (None when not recorded)
    script_version: Optional[str] = None
    #: each ``--resume`` of the run (:func:`tunerlib.resumes.read_resumes`), in order
    resumes: List[Dict[str, Any]] = field(default_factory=list)
    #: the technique swaps of a recommendation bandit (:func:`technique_swaps`), in order
    swaps: List[Dict[str, Any]] = field(default_factory=list)

    @property
    def shown_label(self) -> str:
        """The label, or ``(no label)``."""
        return self.label if self.label is not None else "(no label)"

    def best_so_far(self) -> List[Optional[float]]:
        """Best value (the user's metric) after each result; None before the first OK result."""
        best: Optional[float] = None
        out: List[Optional[float]] = []
        for point in self.points:
            if point.value is not None and (best is None or self.sign * point.value < self.sign * best):
                best = point.value
            out.append(best)
        return out

    def best_point(self) -> Optional[Point]:
        """The run's best result, or None when nothing succeeded: the recorded result of the
        configuration the tuner re-timed as its best at the end (:attr:`final_best`) when it did,
        else the first result with the best recorded value."""
        ok = [(p.value, p) for p in self.points if p.value is not None]
        if self.final_best is not None:
            chosen = [(v, p) for v, p in ok if p.result_id == self.final_best.get("result_id")] or \
                     [(v, p) for v, p in ok if p.row is not None and p.row.config_hash == self.final_best["hash"]]
            if chosen:
                return min(chosen, key=lambda vp: (self.sign * vp[0], vp[1].index))[1]
        return min(ok, key=lambda vp: (self.sign * vp[0], vp[1].index))[1] if ok else None

    @property
    def unit_text(self) -> str:
        """``in s``, ``unitless``, or ``unit not recorded`` (a run from before units were recorded, whose
        times may be milliseconds): the objective's unit as the run recorded it."""
        if UNIT_KEY not in self.args:
            return "unit not recorded"
        unit = self.args[UNIT_KEY]
        return "unitless" if unit is None else f"in {unit}"

    @property
    def retimed_value(self) -> Optional[float]:
        """The re-timed value of :meth:`best_point` when the tuner re-timed it at the end, else None."""
        return None if self.final_best is None else self.final_best.get("value")

    def new_bests(self) -> List[Point]:
        """The results that improved on every earlier one (the first OK result included)."""
        bests, seen = [], None
        for point in self.points:
            if point.value is not None and (seen is None or self.sign * point.value < self.sign * seen):
                seen = point.value
                bests.append(point)
        return bests


def credited_technique(requestor: Optional[str]) -> str:
    """The technique that proposed a request: the last segment of its requestor path (a bandit's
    ``AUCBanditMetaTechniqueA/RandomNelderMead`` is RandomNelderMead, a technique nested in another's
    bandit is itself, a technique alone is itself); ``seed`` for seed configurations, ``api`` for
    ask/tell callers."""
    if not requestor:
        return "unknown"
    return requestor.rsplit("/", 1)[-1]


def objective_parts(objective: str) -> tuple[float, str]:
    """(sign, metric) of a stored objective text such as ``minimize time`` (of the first objective when it
    lists several: ``minimize time, minimize energy``); ReportError otherwise."""
    parts = objective.split(", ", 1)[0].split(" ", 1)
    if len(parts) != 2 or parts[0] not in ("minimize", "maximize"):
        raise ReportError(f"objective {objective!r} of this run cannot be read back: only minimize/maximize "
                          "<metric> objectives can be plotted")
    return (1.0 if parts[0] == "minimize" else -1.0), parts[1]


def metric_value(metric: str, row: Any) -> Optional[float]:
    """The value of ``metric`` in an OK result row (None for other states or a missing value)."""
    if row.state != "OK":
        return None
    raw = getattr(row, metric) if metric in _METRICS else (row.extra or {}).get(metric)
    if not isinstance(raw, (int, float)) or isinstance(raw, bool) or not math.isfinite(raw):
        return None
    return float(raw)


def open_results(url: str) -> ResultsDB:
    """Open an existing results database for reading; ReportError (one line) when there is none."""
    try:
        return open_existing(url, "read")
    except DatabaseError as exc:
        raise ReportError(str(exc)) from None


def read_run(store: Any, info: dict) -> RunData:
    """One run (a :meth:`list_runs` entry ``info``) of an open store with all its results; called by
    :func:`load_runs` and :func:`tunerlib.analysis.load_results`."""
    export = store.run_export(info["id"])
    sign, metric = objective_parts(export["objective"] or "")
    start = float(export["start_date"])
    points = [Point(row.id, i, row.state, metric_value(metric, row),
                    max(0.0, (row.collection_date or start) - start), credited_technique(row.requestor),
                    row.requestor, row.config_data, bool(row.was_new_best), row)
              for i, row in enumerate(store.run_results(info["id"]), 1)]
    requests = [credited_technique(d.requestor) for d in store.desired_results(info["id"])]
    return RunData(info["id"], info["uuid"], info["label"], export["project"], export["program"],
                   export["version"], info["state"], info["seed"], export["objective"], export["args"] or {},
                   export["parameter_info"], start, export["end_date"], export["machine_class"], points,
                   requests, sign, final_form_text(store.load_run_artifact(info["id"], FINAL_FORM)),
                   store.result_places(info["id"]), final_best(store.load_run_artifact(info["id"], FINAL_BEST)),
                   technique_decisions(store, info["id"], export["args"] or {}), info.get("script_version"),
                   read_resumes(store.load_run_artifact(info["id"], RESUMES)),
                   technique_swaps(store, info["id"], export["args"] or {}))


def _root_state(store: Any, run_id: int, args: Dict[str, Any]) -> Dict[str, Any]:
    """The state the run's root technique saved last ({} when it has one name only by a bandit of
    several, or saved none)."""
    from ..techniques import DEFAULT_TECHNIQUE
    names = list(args.get("technique") or [])
    root = names[0] if len(names) == 1 else DEFAULT_TECHNIQUE if not names else None
    saved = store.load_technique_state(run_id, root) if root else None
    state = saved.get("state") if isinstance(saved, dict) else None
    return state if isinstance(state, dict) else {}


def _entries(state: Dict[str, Any], key: str) -> List[Dict[str, Any]]:
    found = state.get(key)
    return [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []


def technique_decisions(store: Any, run_id: int, args: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The decisions recorded in the state of the run's root technique (``auto`` keeps them;
    [] for techniques that do not), read from the technique state the run saved last."""
    return _entries(_root_state(store, run_id, args), "decisions")


def technique_swaps(store: Any, run_id: int, args: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The swaps a recommendation bandit made (its ``swap_log``: request, removed, added, source ...);
    [] for other techniques."""
    return _entries(_root_state(store, run_id, args), "swap_log")


def select_runs(infos: Sequence[dict], labels: Sequence[str], where: str) -> List[dict]:
    """The runs with one of ``labels`` (all runs when none is given); ReportError for an unknown label."""
    if not infos:
        raise ReportError(f"{where} has no tuning runs")
    known = sorted({i["label"] for i in infos if i["label"] is not None})
    unknown = [label for label in labels if label not in known]
    if unknown:
        listed = ", ".join(known) if known else "none (its runs have no label)"
        raise ReportError(f"no run labelled {unknown[0]!r} in {where}; labels there: {listed}")
    return [i for i in infos if not labels or i["label"] in labels]


def load_runs(url: str, labels: Sequence[str] = (), allow_empty: bool = False) -> List[RunData]:
    """The runs of the database at ``url`` (those with one of ``labels``), in run order.

    ReportError when the database is missing or foreign, a label is unknown, or no selected run has a
    result (``allow_empty`` keeps runs without results when at least one run has some)."""
    with open_results(url) as store:
        try:
            chosen = select_runs(store.list_runs(), labels, url)
            runs = [read_run(store, info) for info in chosen]
        except DatabaseError as exc:
            raise ReportError(f"cannot read {url}: {exc}") from None
    if not any(run.points for run in runs):
        which = f"labelled {', '.join(labels)} " if labels else ""
        raise ReportError(f"the runs {which}in {url} have no results (nothing was measured): nothing to show")
    return runs if allow_empty else [run for run in runs if run.points]


def by_label(runs: Sequence[RunData]) -> Dict[str, List[RunData]]:
    """Runs grouped by their shown label, in order of first appearance; the runs of a label measured
    by different tuner script versions (or program versions) are kept apart, as ``label [script
    version V]`` (V's first 8 characters) (``[version V]`` for program versions), never pooled."""
    versions: Dict[str, set] = {}
    for run in runs:
        versions.setdefault(run.shown_label, set()).add((run.version, run.script_version))
    groups: Dict[str, List[RunData]] = {}
    for run in runs:
        groups.setdefault(group_name(run, versions[run.shown_label]), []).append(run)
    return groups


def group_name(run: RunData, versions: set) -> str:
    """The name of the group ``run`` belongs to among runs of its label with these (program version,
    script version) pairs."""
    if len(versions) < 2:
        return run.shown_label
    if len({v for v, _ in versions}) > 1:
        return f"{run.shown_label} [version {run.version}]"
    return f"{run.shown_label} [script version {(run.script_version or 'not recorded')[:8]}]"
