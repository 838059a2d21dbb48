"""Turning one run of a results database into what the store keeps (:class:`StoredRun`).

Reads the run through the :class:`~tunerlib.db.ResultsStore` protocol (so a SQLite file, a PostgreSQL
database and ``tune_function``'s in-memory store all upload the same way), replays it in result order
(:mod:`.performance`) and names its techniques. Nothing here writes anything.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..db import ResultsStore
from ..parameters import ConfigurationManipulator, ParameterError, parameter_from_json
from ..techniques import DEFAULT_TECHNIQUE, TechniqueError, create_technique, technique_name
from ..techniques.meta import MetaTechnique
from .performance import Event, Replay, Snapshot, technique_of
from .representation import encode

#: how many of a run's best configurations ``--include-configurations`` keeps
STORED_CONFIGURATIONS = 10
_METRICS = ("time", "accuracy", "energy", "size")


@dataclass
class StoredRun:
    """Everything the store keeps of one run (no configuration values unless ``configurations``)."""

    uuid: str
    project: str
    program: str
    version: str
    objective: str
    representation: str
    space_hash: str
    log10_space_size: Optional[float]
    machine_class: Optional[str]
    meta: Optional[Tuple[str, str]]                   #: (root, name) of a meta-technique root
    techniques: Dict[str, Tuple[str, Optional[str]]]  #: name -> (root, full generated name or None)
    state: str                                        #: COMPLETE or PARTIAL
    start_date: float
    end_date: Optional[float]
    tests: int
    best_value: Optional[float]
    snapshots: List[Snapshot]
    configurations: List[Tuple[float, Any]] = field(default_factory=list)

    def digest(self) -> str:
        """SHA-256 of what would be written: equal digests mean a re-upload changes nothing."""
        data = asdict(self)
        data.pop("end_date")
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def oriented_value(objective: str, row: Any) -> Optional[float]:
    """The lower-is-better value of a result under the run's stored objective text (``minimize time``,
    ``maximize accuracy``, ``minimize <extra key>``); inf when not OK; None when the text is unknown or
    lists several objectives (the run's ``was_new_best`` flags then say which results entered its Pareto
    front, a positive hypervolume improvement: the "new best" of a multi-objective run)."""
    parts = objective.split(" ", 1)
    if len(parts) != 2 or parts[0] not in ("minimize", "maximize") or ", " in parts[1]:
        return None
    if row.state != "OK":
        return math.inf
    raw = getattr(row, parts[1]) if parts[1] in _METRICS else (row.extra or {}).get(parts[1])
    if not isinstance(raw, (int, float)) or isinstance(raw, bool) or not math.isfinite(raw):
        return math.inf
    return float(raw) if parts[0] == "minimize" else -float(raw)


@lru_cache(maxsize=4096)
def _describe(name: str) -> Tuple[str, Optional[str], bool]:
    """(root name, full generated name or None, is a meta-technique) of a technique name, from one
    instance built here; (name, None, False) when this process cannot build it (a technique
    registered by another tuner script)."""
    try:
        tech = create_technique([name])
    except TechniqueError:
        return name.split(";", 1)[0], None, False
    full = technique_name(tech)
    root = getattr(type(tech), "root_name", lambda: type(tech).__name__)()
    return root, (full if full != name else None), isinstance(tech, MetaTechnique)


def describe_technique(name: str) -> Tuple[str, Optional[str]]:
    """(root name, full generated name or None) of a technique name (see :func:`_describe`)."""
    return _describe(name)[:2]


def root_technique(args: Dict[str, Any]) -> Tuple[str, str, bool]:
    """(root technique name, the name the store keeps for it, whether it is a meta-technique) from a
    run's stored arguments; a bandit made from several names (or generated) is stored with its C and
    window: ``AUCBandit;C,0.15;window,200``."""
    names = list(args.get("technique") or []) or [DEFAULT_TECHNIQUE]
    if args.get("generate_bandit_technique") or len(names) > 1:
        root = "GeneratedBandit" if args.get("generate_bandit_technique") else "AUCBandit"
        return root, f"{root};C,{args.get('bandit_c', 0.05)!r};window,{args.get('bandit_window', 500)!r}", True
    return names[0], names[0], _describe(names[0])[2]


def _meta_root(root: str, stored_name: str) -> str:
    return "AUCBanditMetaTechnique" if stored_name != root else describe_technique(root)[0]


def _space(parameter_info: str) -> Tuple[str, Optional[float]]:
    """(representation string, log10 size of the unconstrained space) of a stored parameter_info."""
    try:
        params = [parameter_from_json(p) for p in json.loads(parameter_info)["parameters"]]
    except (ValueError, KeyError, TypeError, ParameterError) as exc:
        raise ValueError(f"its search space cannot be read ({exc})") from None
    space = ConfigurationManipulator(params)
    size = space.log10_search_space_size()
    return encode(space), (size if math.isfinite(size) else None)


def _events(results: ResultsStore, run_id: int, objective: str, meta: bool,
            start: float) -> Tuple[List[Optional[str]], List[Event], List[Tuple[float, Any]]]:
    desired = results.desired_results(run_id)
    index: Dict[Optional[int], int] = {d.id: i for i, d in enumerate(desired)}  # a result may have no request
    requestors = [technique_of(d.requestor, meta) for d in desired]
    events, ok = [], []
    for row in results.run_results(run_id):
        value = oriented_value(objective, row)
        flagged = None if value is not None else bool(row.was_new_best)
        value = math.inf if value is None else value
        seconds = max(0.0, (row.collection_date or start) - start)
        where = index.get(row.desired_result_id, len(requestors) - 1) if requestors else -1
        events.append(Event(technique_of(row.requestor, meta), seconds, value, where, flagged))
        if math.isfinite(value):
            ok.append((value, row.config_data))
    return requestors, events, ok


def _best_configurations(ok: Sequence[Tuple[float, Any]]) -> List[Tuple[float, Any]]:
    seen, best = set(), []
    for value, data in sorted(ok, key=lambda vc: vc[0]):
        key = json.dumps(data, sort_keys=True)
        if key not in seen:
            seen.add(key)
            best.append((value, data))
        if len(best) == STORED_CONFIGURATIONS:
            break
    return best


def export_run(results: ResultsStore, run_id: int, include_configurations: bool = False) -> Optional[StoredRun]:
    """The run as the store keeps it; None for a run with no result (nothing to learn from).

    Raises ValueError (one line) when the run's space cannot be read."""
    info = results.run_export(run_id)
    root, stored_name, meta = root_technique(info["args"] or {})
    requestors, events, ok = _events(results, run_id, info["objective"] or "", meta, info["start_date"])
    if not events:
        return None
    representation, size = _space(info["parameter_info"])
    snapshots = Replay(requestors).snapshots(events)
    names = sorted({s.technique for s in snapshots if s.technique is not None})
    best = snapshots[-1].best_value if snapshots else None
    return StoredRun(
        uuid=info["uuid"], project=info["project"], program=info["program"], version=info["version"],
        objective=info["objective"] or "", representation=representation,
        space_hash=hashlib.sha256(info["parameter_info"].encode("utf-8")).hexdigest(),
        log10_space_size=size, machine_class=info["machine_class"],
        meta=(_meta_root(root, stored_name), stored_name) if meta else None,
        techniques={n: describe_technique(n) for n in names},
        state="PARTIAL" if info["state"] == "RUNNING" or info["state"] == "ABORTED" else "COMPLETE",
        start_date=info["start_date"], end_date=info["end_date"], tests=len(events), best_value=best,
        snapshots=snapshots, configurations=_best_configurations(ok) if include_configurations else [])
