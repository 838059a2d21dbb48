"""The JSON documents of the dashboard's API, built from a :class:`~tunerlib.dashboard.follow.RunFollower`.

Plain dicts and lists of JSON values (the server serialises them): one summary per run for the runs
list, the details of one run, its results since a result id, its parameter importance and, for a run
with several objectives, its current Pareto front. Called with the follower's lock held, right after
its refresh, so every document is one consistent view of the run (importance excepted: it takes the
lock itself, see :func:`importance_doc`).
"""
from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any, Dict, List, Optional

from ..report.encode import encode, space_info
from ..report.importance import importance
from ..report.data import ReportError
from ..report.series import allocation
from .follow import RunFollower, objective_units

__all__ = ["ARGS_SHOWN", "importance_doc", "pareto_front", "results_doc", "run_detail", "run_summary"]

#: the run arguments the API shows (never ``database``: its URL can hold a password)
ARGS_SHOWN = ("technique", "test_limit", "stop_after", "parallelism", "distributed", "executor",
              "machine_class", "resume")
#: failed results listed with their text in a run's details (the newest; the count covers all)
ERRORS_SHOWN = 50


def _number(value: Optional[float]) -> Optional[float]:
    """A JSON-safe float: None for missing, infinite and NaN values."""
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _progress(f: RunFollower) -> Dict[str, Any]:
    """Results and seconds so far against the run's --test-limit and --stop-after (None: no such
    limit); ``fraction`` is the larger share of a limit used (None without a limit)."""
    args, data = f.data.args, f.data
    end = data.end_date if data.end_date is not None else time.time()
    seconds = max(0.0, float(end) - data.start_date)
    limit, stop = args.get("test_limit"), args.get("stop_after")
    shares = []
    if isinstance(limit, int) and limit > 0:
        shares.append(len(data.points) / limit)
    if isinstance(stop, (int, float)) and stop > 0:
        shares.append(seconds / stop)
    return {"results": len(data.points), "test_limit": limit, "seconds": seconds, "stop_after": stop,
            "fraction": min(1.0, max(shares)) if shares else None}


def _best(f: RunFollower) -> Optional[Dict[str, Any]]:
    point = f.data.best_point()
    if point is None:
        return None
    return {"value": point.value, "result_id": point.result_id, "n": point.index, "seconds": point.seconds,
            "technique": point.technique, "config": point.config, "retimed": _number(f.data.retimed_value)}


def run_summary(f: RunFollower, database: str) -> Dict[str, Any]:
    """One run in the runs list (``/api/runs``): identity, state, progress, best value with its unit."""
    data = f.data
    counts: Dict[str, int] = {}
    for point in data.points:
        counts[point.state] = counts.get(point.state, 0) + 1
    return {"id": data.uuid, "database": database, "label": data.label, "project": data.project,
            "program": data.program, "version": data.version, "state": f.shown_state(),
            "stored_state": data.state, "seed": data.seed, "objective": data.objective,
            "objectives": [{"direction": "minimize" if s > 0 else "maximize", "metric": m, "unit": unit}
                           for (s, m), unit in zip(f.objectives, objective_units(f.objectives, data.args))],
            "objective_error": f.objective_error, "unit": f.unit(), "unit_text": data.unit_text,
            "start_date": data.start_date, "end_date": data.end_date, "results": len(data.points),
            "requests": len(data.requests), "counts": counts, "progress": _progress(f), "best": _best(f),
            "args": {key: data.args.get(key) for key in ARGS_SHOWN if key in data.args}}


def _techniques(f: RunFollower) -> List[Dict[str, Any]]:
    """Per credited technique: requests, results, OK results, new bests and its best value."""
    rows: Dict[str, Dict[str, Any]] = {}

    def row(name: str) -> Dict[str, Any]:
        return rows.setdefault(name, {"technique": name, "requests": 0, "results": 0, "ok": 0, "new_bests": 0,
                                      "best": None})
    for name in f.data.requests:
        row(name)["requests"] += 1
    for point in f.data.points:
        entry = row(point.technique)
        entry["results"] += 1
        if point.value is not None:
            entry["ok"] += 1
            if entry["best"] is None or f.data.sign * point.value < f.data.sign * entry["best"]:
                entry["best"] = point.value
    for point in f.data.new_bests():
        row(point.technique)["new_bests"] += 1
    return sorted(rows.values(), key=lambda r: (-r["requests"], r["technique"]))


def _allocation(f: RunFollower) -> Dict[str, Any]:
    centres, shares = allocation([f.data])
    return {"x": [float(x) for x in centres], "shares": {name: [float(v) for v in s] for name, s in shares.items()}}


def _errors(f: RunFollower) -> Dict[str, Any]:
    failed = [p for p in f.data.points if p.state != "OK"]
    return {"count": len(failed), "shown": [{"result_id": p.result_id, "n": p.index, "state": p.state,
                                             "technique": p.technique, "config": p.config,
                                             "text": f.errors.get(p.result_id, "")}
                                            for p in failed[-ERRORS_SHOWN:]]}


def _workers(f: RunFollower) -> List[Dict[str, Any]]:
    """Results per worker that measured them (``main``, ``worker-N``, a ``tunerlib worker`` id), most first."""
    counts: Dict[str, int] = {}
    for point in f.data.points:
        name = f.workers.get(point.result_id) or "unknown"
        counts[name] = counts.get(name, 0) + 1
    return [{"worker": name, "results": count} for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def pareto_front(f: RunFollower) -> Optional[List[Dict[str, Any]]]:
    """The OK results no other OK result dominates, in result order, for a run with several objectives
    (each entry: ``result_id``, ``n``, ``values`` in the user's orientation and ``config``); None for a
    run with one objective."""
    if len(f.objectives) < 2:
        return None
    return [{"result_id": p.result_id, "n": p.index, "values": f.values[p.result_id], "config": p.config}
            for p, _ in f.front]


def run_detail(f: RunFollower, database: str) -> Dict[str, Any]:
    """Everything about one run but its results (``/api/runs/<id>``): the summary, the declared
    parameters, per-technique counts, the allocation of requests over time, the new bests, the
    technique's decisions, the failed results with their text, the results per worker and the Pareto
    front."""
    doc = run_summary(f, database)
    doc.update({
        "parameters": [{"name": name, "options": info["options"], "log": info["log"]}
                       for name, info in space_info(f.data.parameter_info).items()],
        "techniques": _techniques(f), "allocation": _allocation(f),
        "new_bests": [{"result_id": p.result_id, "n": p.index, "seconds": p.seconds, "value": p.value,
                       "technique": p.technique} for p in f.data.new_bests()],
        "decisions": f.decisions, "errors": _errors(f), "pareto_front": pareto_front(f),
        "workers": _workers(f),
        "machine_class": f.data.machine_class})
    return doc


def results_doc(f: RunFollower, since: int) -> Dict[str, Any]:
    """The run's results with id > ``since`` (``/api/runs/<id>/results?since=``) and ``last_id``, the id
    to pass as ``since`` next time (``since`` itself when there is nothing new)."""
    points = [p for p in f.data.points if p.result_id > since]
    multi = len(f.objectives) > 1
    rows = [{"id": p.result_id, "n": p.index, "state": p.state, "value": p.value, "seconds": p.seconds,
             "technique": p.technique, "requestor": p.requestor, "config": p.config,
             "worker": f.workers.get(p.result_id), "cost": _number(f.costs.get(p.result_id)),
             **({"values": f.values.get(p.result_id)} if multi else {}),
             **({"error": f.errors.get(p.result_id, "")} if p.state != "OK" else {})} for p in points]
    return {"run": f.uuid, "since": since, "last_id": points[-1].result_id if points else since,
            "results": rows}


def importance_doc(f: RunFollower) -> Dict[str, Any]:
    """Parameter importance of the run's OK results (``/api/runs/<id>/importance``): the report's
    fANOVA-style main effects, or ``error`` saying why there is none yet (too few results).

    Called without the follower's lock (the forest takes a while to fit, and the run's other requests
    go on meanwhile): it takes a copy of the results under the lock, and keeps the document until
    the run has more results."""
    with f.lock:
        count = len(f.data.points)
        if f.importance is not None and f.importance[0] == count:
            return f.importance[1]
        data = replace(f.data, points=list(f.data.points))
    try:
        found = importance(encode([data]))
        doc: Dict[str, Any] = {"results": count, "fit_results": found.results, "r2": found.r2,
                               "parameters": [{"name": n, "fraction": v} for n, v in zip(found.names, found.fractions)],
                               "skipped": found.skipped}
    except ReportError as exc:
        doc = {"results": count, "error": str(exc)}
    with f.lock:
        f.importance = (count, doc)
    return doc
