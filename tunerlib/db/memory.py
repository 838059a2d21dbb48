"""MemoryStore: the results store of one process, in memory (``--database memory://``).

It implements :class:`tunerlib.db.protocol.ResultsStore` with the same answers as the SQL backend (one
contract suite checks both) at a fraction of its cost, for ``tune_function`` and technique tests. Nothing
survives the process and workers cannot share it (``--parallelism`` > 1 needs a database). JSON values
are stored as JSON text and come out as the text decodes, like a database column; configurations and
result extras, read back after every result, keep a decoded copy beside the text and come out as a copy
of it, which is cheaper than decoding the text again.
"""
from __future__ import annotations

import bisect
import hashlib
import heapq
import json
import time
import uuid as uuid_module
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .models import (RESULT_STATES, RUN_STATES, AlreadyCompleteError, Claim, DatabaseError, DesiredResultRow, NotFoundError,
                     ResultPlace, ResultRecord, ResultRow)
from .memory_leases import MemoryLeases
from .jsoncopy import json_copy
from .migrations import json_dumps

__all__ = ["MEMORY_URL", "MemoryStore"]

#: the ``--database`` value of the in-memory store
MEMORY_URL = "memory://"


#: a configuration or a result's ``extra`` as stored: its JSON text and a private copy of what the text
#: decodes to (None for None)
_Stored = Optional[Tuple[str, Any]]


def _dump(value: Any) -> Optional[str]:
    """The JSON text of a value read back rarely (run arguments, technique states, artifacts)."""
    return None if value is None else json_dumps(value)


def _load(text: Optional[str]) -> Any:
    return None if text is None else json.loads(text)


def _keep(value: Any) -> _Stored:
    """Store a configuration or an ``extra`` (read back after every result) as a JSON column does (a
    value JSON cannot encode raises here)."""
    if value is None:
        return None
    text = json_dumps(value)
    return text, json_copy(value, text)


def _copy(stored: _Stored) -> Any:
    """What the stored JSON text decodes to, a new copy on every call (the private copy is made of
    JSON's own types, so it is copied, not decoded)."""
    return None if stored is None else json_copy(stored[1], stored[0])


class MemoryStore(MemoryLeases):
    """In-memory ResultsStore (see the module docstring); every method mirrors ResultsDB's."""

    display_url = MEMORY_URL

    def __init__(self) -> None:
        self._keys: Dict[Tuple, int] = {}          # (table, natural key) -> id
        self._programs: Dict[int, dict] = {}       # program version id -> project, program, version
        self._runs: Dict[int, dict] = {}
        self._configs: Dict[int, Tuple[str, _Stored]] = {}   # id -> (hash, stored JSON)
        self._requests: Dict[int, dict] = {}
        self._results: Dict[int, dict] = {}
        self._states: Dict[Tuple[int, str], Optional[str]] = {}
        self._artifacts: Dict[Tuple[int, str], Optional[str]] = {}
        self._next: Dict[str, int] = {}
        self._run_requests: Dict[int, List[int]] = {}   # run -> request ids, ascending
        self._run_results: Dict[int, List[int]] = {}    # run -> result ids, ascending
        self._waiting: Dict[int, List[int]] = {}        # run -> heap of request ids that may be REQUESTED
        self._space_info: Dict[int, str] = {}            # program version id -> parameter_info
        self._machine_classes: Dict[int, str] = {}       # machine id -> machine class name
        self._workers: Dict[Tuple[int, str], dict] = {}  # (run, worker name) -> heartbeat, lease, stopped

    def _new_id(self, table: str) -> int:
        self._next[table] = self._next.get(table, 0) + 1
        return self._next[table]

    def _get_or_create(self, table: str, key: Tuple) -> Tuple[int, bool]:
        found = self._keys.get((table, key))
        if found is not None:
            return found, False
        new = self._keys[(table, key)] = self._new_id(table)
        return new, True

    # ---- identity rows ----------------------------------------------------------------------
    def program_version_id(self, project: str, program: str, version: str, parameter_info: str) -> int:
        digest = hashlib.sha256(parameter_info.encode("utf-8")).hexdigest()
        pv, new = self._get_or_create("pv", (project, program, version, digest))
        if new:
            self._programs[pv] = {"project": project, "program": program, "version": version}
            self._space_info[pv] = parameter_info
        return pv

    def machine_id(self, name: str, machine_class: Optional[str] = None,
                   cpu_count: Optional[int] = None) -> int:
        machine, _ = self._get_or_create("machine", (name,))
        if machine_class is not None:
            self._machine_classes[machine] = machine_class
        return machine

    def input_id(self, program_version_id: int, input_class: str, path: Optional[str] = None,
                 size: Optional[int] = None, extra: Optional[dict] = None) -> int:
        if program_version_id not in self._programs:
            raise NotFoundError(f"no program version with id {program_version_id}")
        program = tuple(self._programs[program_version_id][k] for k in ("project", "program"))
        return self._get_or_create("input", (program, input_class, size, path))[0]

    # ---- runs -----------------------------------------------------------------------------------
    def create_run(self, program_version_id: int, label: Optional[str] = None, args: Optional[dict] = None,
                   seed: Optional[int] = None, machine_id: Optional[int] = None, objective: str = "",
                   host: Optional[str] = None, pid: Optional[int] = None,
                   script_version: Optional[str] = None) -> Tuple[int, str]:
        run_id, run_uuid = self._new_id("run"), str(uuid_module.uuid4())
        self._runs[run_id] = {"id": run_id, "uuid": run_uuid, "program_version_id": program_version_id,
                              "label": label, "args": _dump(args if args is not None else {}), "seed": seed,
                              "state": "RUNNING", "start_date": time.time(), "end_date": None,
                              "host": host, "pid": pid, "objective": objective, "machine_id": machine_id,
                              "script_version": script_version}
        return run_id, run_uuid

    def _run(self, run_id: int) -> dict:
        if run_id not in self._runs:
            raise NotFoundError(f"no tuning run with id {run_id}")
        return self._runs[run_id]

    def take_run(self, run_id: int, host: str, pid: int, script_version: Optional[str] = None) -> None:
        if run_id in self._runs:
            self._runs[run_id].update(state="RUNNING", end_date=None, host=host, pid=pid)
            if script_version is not None:
                self._runs[run_id]["script_version"] = script_version

    def set_run_state(self, run_id: int, state: str) -> None:
        if state not in RUN_STATES:
            raise ValueError(f"run state {state!r} is not one of {', '.join(RUN_STATES)}")
        self._run(run_id).update(state=state, end_date=None if state == "RUNNING" else time.time())

    def _summary(self, run: dict) -> dict:
        keys = ("id", "uuid", "program_version_id", "label", "seed", "state", "host", "pid", "script_version")
        info = {k: run[k] for k in keys}
        info["args"] = _load(run["args"])
        info["tests"] = len(self._run_results.get(run["id"], ()))
        info["requests"] = len(self._run_requests.get(run["id"], ()))
        return info

    def runs_of(self, program_version_id: int, label: Optional[str] = None) -> List[dict]:
        runs = [r for r in self._runs.values() if r["program_version_id"] == program_version_id
                and (label is None or r["label"] == label)]
        return [self._summary(r) for r in sorted(runs, key=lambda r: -r["id"])]

    def runs_with_uuid_prefix(self, prefix: str) -> List[dict]:
        return [self._summary(r) for r in sorted(self._runs.values(), key=lambda r: r["id"])
                if r["uuid"].startswith(prefix)]

    def run_export(self, run_id: int) -> dict:
        run = self._run(run_id)
        pv = run["program_version_id"]
        return {"uuid": run["uuid"], "state": run["state"], "start_date": run["start_date"],
                "end_date": run["end_date"], "seed": run["seed"], "args": _load(run["args"]),
                "objective": run["objective"], **self._programs[pv], "parameter_info": self._space_info[pv],
                "machine_class": self._machine_classes.get(run["machine_id"])}

    def list_runs(self) -> List[dict]:
        out = []
        for run in sorted(self._runs.values(), key=lambda r: r["id"]):
            info = self._summary(run)
            out.append({"id": run["id"], "uuid": run["uuid"], **self._programs[run["program_version_id"]],
                        "label": run["label"], "state": run["state"], "tests": info["tests"],
                        "start_date": run["start_date"], "end_date": run["end_date"], "seed": run["seed"],
                        "host": run["host"], "pid": run["pid"], "script_version": run.get("script_version")})
        return out

    # ---- requests -------------------------------------------------------------------------
    def configuration_id(self, program_version_id: int, hash: str, data: Any) -> int:
        cfg_id, new = self._get_or_create("config", (program_version_id, hash))
        if new:
            self._configs[cfg_id] = (hash, _keep(data))
        return cfg_id

    def request_configuration(self, run_id: int, program_version_id: int, hash: str, data: Any, requestor: str,
                              generation: int, limit: Optional[float] = None) -> int:
        dr = self._request(run_id, program_version_id, hash, data, requestor, generation, limit)
        heapq.heappush(self._waiting.setdefault(run_id, []), dr["id"])
        return dr["id"]

    def request_and_claim(self, run_id: int, program_version_id: int, hash: str, data: Any, requestor: str,
                          generation: int, limit: Optional[float], worker: str) -> Claim:
        return self._claim(self._request(run_id, program_version_id, hash, data, requestor, generation, limit),
                           worker, None)

    def _request(self, run_id: int, program_version_id: int, hash: str, data: Any, requestor: str,
                 generation: int, limit: Optional[float]) -> dict:
        configuration_id = self.configuration_id(program_version_id, hash, data)
        dr_id = self._new_id("request")
        dr = self._requests[dr_id] = {"id": dr_id, "run": run_id, "config": configuration_id, "requestor": requestor,
                                      "generation": generation, "limit": limit, "state": "REQUESTED",
                                      "worker": None, "result": None}
        self._run_requests.setdefault(run_id, []).append(dr_id)
        return dr

    def _of_run(self, run_id: int, *states: str) -> List[dict]:
        rows = (self._requests[i] for i in self._run_requests.get(run_id, ()))
        return [d for d in rows if not states or d["state"] in states]

    def claim_next(self, run_id: int, worker: str, lease: Optional[float] = None) -> Optional[Claim]:
        heap = self._waiting.get(run_id, [])
        while heap and self._requests[heap[0]]["state"] != "REQUESTED":
            heapq.heappop(heap)  # claimed, cancelled or pushed twice
        if not heap:
            return None
        return self._claim(self._requests[heapq.heappop(heap)], worker, lease)

    def _claim(self, dr: dict, worker: str, lease: Optional[float]) -> Claim:
        dr.update(state="RUNNING", worker=worker, heartbeat=time.time(), lease=lease)
        hash_, data = self._configs[dr["config"]]
        return Claim(dr["id"], dr["run"], dr["config"], hash_, _copy(data), dr["limit"], dr["requestor"],
                     dr["generation"])

    def complete(self, desired_result_id: int, record: ResultRecord) -> int:
        if record.state not in RESULT_STATES:
            raise ValueError(f"result state {record.state!r} is not one of {', '.join(RESULT_STATES)}")
        dr = self._requests.get(desired_result_id)
        if dr is None:
            raise NotFoundError(f"no desired result with id {desired_result_id}")
        if dr["state"] not in ("REQUESTED", "RUNNING"):
            raise AlreadyCompleteError(f"desired result {desired_result_id} is already complete or cancelled")
        result_id = self._new_id("result")
        self._results[result_id] = {"id": result_id, "run": dr["run"], "request": desired_result_id,
                                    "config": dr["config"], "record": record, "extra": _keep(record.extra or {}),
                                    "new_best": False, "date": time.time()}
        dr.update(state="COMPLETE", result=result_id)
        self._run_results.setdefault(dr["run"], []).append(result_id)
        return result_id

    def cancel_unfinished(self, run_id: int) -> int:
        rows = self._of_run(run_id, "REQUESTED", "RUNNING")
        for dr in rows:
            dr.update(state="CANCELLED", worker=None)
        return len(rows)

    def requeue_unfinished(self, run_id: int, at_most: Optional[int] = None) -> int:
        now = time.time()
        live = [d for d in self._of_run(run_id, "RUNNING")
                if d.get("lease") is not None and d["heartbeat"] is not None and d["heartbeat"] + d["lease"] >= now]
        rows = sorted((d for d in self._of_run(run_id, "CANCELLED", "RUNNING") if d not in live),
                      key=lambda d: d["id"])
        keep = len(rows) if at_most is None else max(0, min(at_most - len(live), len(rows)))
        for i, dr in enumerate(rows):
            dr.update(state="REQUESTED" if i < keep else "CANCELLED", worker=None)
            if i < keep:
                heapq.heappush(self._waiting.setdefault(run_id, []), dr["id"])
        return keep

    def tighten_limits(self, run_id: int, limit: float) -> int:
        rows = [d for d in self._of_run(run_id, "REQUESTED") if d["limit"] is None or d["limit"] > limit]
        for dr in rows:
            dr["limit"] = limit
        return len(rows)

    def running_claims(self, run_id: int, worker: str) -> List[int]:
        return [d["id"] for d in self._of_run(run_id, "RUNNING") if d["worker"] == worker]

    # ---- results --------------------------------------------------------------------------
    def _row(self, res: dict) -> ResultRow:
        rec: ResultRecord = res["record"]
        hash_, data = self._configs[res["config"]]
        return ResultRow(res["id"], res["request"], res["config"], hash_, _copy(data), rec.state, rec.time,
                         rec.accuracy, rec.energy, rec.size, _copy(res["extra"]), res["new_best"],
                         self._requests[res["request"]]["requestor"], rec.collection_cost, res["date"])

    def results_after(self, run_id: int, after_result_id: int) -> List[ResultRow]:
        ids = self._run_results.get(run_id, [])
        return [self._row(self._results[i]) for i in ids[bisect.bisect_right(ids, after_result_id):]]

    def run_results(self, run_id: int) -> List[ResultRow]:
        return self.results_after(run_id, 0)

    def desired_results(self, run_id: int) -> List[DesiredResultRow]:
        return [DesiredResultRow(d["id"], self._configs[d["config"]][0], d["requestor"], d["generation"],
                                 d["state"], d["result"]) for d in self._of_run(run_id)]

    def counts_by_state(self, run_id: int) -> Dict[str, int]:
        counts: Dict[str, int] = {}
        for rid in self._run_results.get(run_id, ()):
            state = self._results[rid]["record"].state
            counts[state] = counts.get(state, 0) + 1
        return counts

    def mark_new_best(self, result_ids: Sequence[int]) -> None:
        for rid in result_ids:
            if rid in self._results:
                self._results[rid]["new_best"] = True

    def error_results(self, run_id: int, limit: Optional[int] = None) -> List[Tuple[int, Any]]:
        rows = (self._results[i] for i in self._run_results.get(run_id, ()))
        found = [(r["id"], _copy(r["extra"])) for r in rows if r["record"].state == "ERROR"]
        return found if limit is None else found[:limit]

    def result_places(self, run_id: int) -> Dict[int, ResultPlace]:
        names = {mid: key[0] for (table, key), mid in self._keys.items() if table == "machine"}
        rows = (self._results[i] for i in self._run_results.get(run_id, ()))
        records = {r["id"]: r["record"] for r in rows}
        return {rid: ResultPlace(names.get(rec.machine_id), self._machine_classes.get(rec.machine_id), rec.worker)
                for rid, rec in records.items() if rec.machine_id in names or rec.worker is not None}

    # ---- technique state and run artifacts ------------------------------------------------
    def save_technique_state(self, run_id: int, name: str, data: Any) -> None:
        self._states[(run_id, name)] = _dump(data)

    def load_technique_state(self, run_id: int, name: str) -> Optional[Any]:
        return _load(self._states.get((run_id, name)))

    def save_run_artifact(self, run_id: int, name: str, data: Any) -> None:
        if data is None:
            self._artifacts.pop((run_id, name), None)
        else:
            self._artifacts[(run_id, name)] = _dump(data)

    def load_run_artifact(self, run_id: int, name: str) -> Optional[Any]:
        return _load(self._artifacts.get((run_id, name)))

    def listen(self, run_id: int) -> None:
        """No other process can store results here: nothing to wait for."""
        return None

    def worker_url(self) -> str:
        raise DatabaseError("--database memory:// lives in this process only: measurement workers "
                         "(--parallelism > 1) need a database file or URL")

    def dispose(self) -> None:
        """Nothing to drop."""

    def close(self) -> None:
        """Nothing to release (the data goes with the object)."""

    def __enter__(self) -> "MemoryStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
