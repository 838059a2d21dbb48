"""``--resume``: which run to continue, and replaying its history into a fresh technique.

:func:`select_run` picks the run (the latest of the program that has results, or one by UUID) and
refuses, with one line, a run that cannot be continued. :class:`HistoryReplay` lets the search driver
re-derive the technique's state exactly: the technique is bound with the run's own seed and driven as the
serial loop drove it, but each proposal is matched with the next recorded request and answered with its
recorded result instead of being measured. When the history is used up the run goes on live, from the
very state an uninterrupted run would have had. If a proposal differs from the record (a parallel run,
another technique, a technique that is not deterministic), :class:`Diverged` is raised and the run loop
falls back to feeding the recorded results to a new technique.
"""
from __future__ import annotations

import os
import socket
from collections import deque
from typing import Any, Deque, Dict, List, Optional

from ..db import ResultsStore
from ..db.lifecycle import process_alive
from ..errors import UsageError
from ..multiobjective import check_resume_objectives
from ..objectives import UNIT_KEY, Objective
from ..options import RESUME_LATEST, TuningOptions

__all__ = ["Diverged", "HistoryReplay", "check_objective_unit", "check_script_version", "select_run",
           "stored_techniques"]


class Diverged(Exception):
    """The technique proposed something else than the recorded run did."""


def select_run(db: ResultsStore, program_version_id: int, options: TuningOptions, program: str,
               objective: Optional[Objective] = None, script_version: Optional[str] = None) -> Dict[str, Any]:
    """The run ``options.resume`` continues (a :meth:`ResultsStore.runs_of` dict); UsageError when none fits.

    Without a UUID: the newest run of the program version (and ``options.label``) that has results or
    requests and did not fail before its first result. With ``objective``, a run that recorded it in
    another unit is refused too (:func:`check_objective_unit`); with ``script_version``, a run of
    another version of the tuner script (:func:`check_script_version`)."""
    label, target = options.label, options.resume_target
    where = f"{program!r}{'' if label is None else f' with label {label!r}'} in {db.display_url}"
    if target == RESUME_LATEST:
        runs = [r for r in db.runs_of(program_version_id, label)
                if r["state"] != "FAILED" and (r["tests"] or r["requests"])]
        if not runs:
            raise UsageError(f"--resume: no earlier run of {where} has measured anything; drop --resume "
                             "to start a new run")
        info = runs[0]
    else:
        assert target is not None  # called for --resume only
        matches = db.runs_with_uuid_prefix(target)
        if not matches:
            raise UsageError(f"--resume {target}: no run with this UUID in {db.display_url} "
                             f"(`tunerlib runs {db.display_url}` lists them)")
        if len(matches) > 1:
            raise UsageError(f"--resume {target}: {len(matches)} runs start with this; give more of "
                             "the UUID")
        info = matches[0]
        if info["program_version_id"] != program_version_id:
            raise UsageError(f"--resume {target}: run {info['uuid']} tuned another program or search "
                             f"space than {program!r}; resume it with the script and options that "
                             "started it")
    _refuse_live_run(info)
    if objective is not None:
        check_resume_objectives(info, objective)
        check_objective_unit(info, objective, db.display_url)
    if script_version is not None:
        check_script_version(info, script_version, options.allow_version_change)
    return info


def check_script_version(info: Dict[str, Any], current: str, allow: bool) -> None:
    """Called by ``--resume`` before the run is taken: UsageError (one line, nothing changed) when the run
    ``info`` was measured by another version of the tuner script (:meth:`MeasurementInterface.script_version`:
    by default any edit of the file) and ``allow`` (``--allow-version-change``) is not set; continuing
    would pool the results of both versions in one run.  When allowed, ``info["version_change"]`` holds
    the line that says so.  A run that recorded no version (made before versions were) passes."""
    recorded = info.get("script_version")
    if recorded is None or recorded == current:
        return
    if not allow:
        raise UsageError(f"--resume: run {info['uuid']} was measured by tuner script version {recorded}, "
                         f"this script is version {current} (it was edited since); drop --resume to start a "
                         "new run, restore the script, or add --allow-version-change to pool the results "
                         "of both versions in this run")
    info["version_change"] = (f"--allow-version-change: run {info['uuid']} pools results of tuner script "
                              f"version {recorded} with those of this version, {current}")


def stored_techniques(db: ResultsStore, run_id: int, args: Dict[str, Any]) -> List[str]:
    """The technique names a resumed run continues with (called when ``--resume`` names none): those the
    run was started with; for a run started without ``--technique``, the registered root technique that
    made its requests -- the default of the tunerlib that created it, which need not be today's; []
    (today's default) when the run made no request of its own."""
    names = list(args.get("technique") or [])
    if names or args.get("generate_bandit_technique"):
        return names
    from ..techniques import registry
    for row in db.desired_results(run_id):
        root = row.requestor.split("/", 1)[0]
        if root != "seed" and root in registry():
            return [root]
    return []


def check_objective_unit(info: Dict[str, Any], objective: Objective, where: str) -> None:
    """Called by ``--resume`` before the run is taken: UsageError (one line, nothing changed) when the run
    ``info`` recorded its objective in another unit than ``objective.unit``, or recorded none while the
    objective has one (a run from before units were recorded: replays then stored milliseconds, measured
    tuners seconds, and the values alone cannot tell which). Continuing would mix the two units in one run:
    the search would compare them and the best would be wrong by a factor of 1000."""
    args = info.get("args") or {}
    current = objective.unit
    if UNIT_KEY in args:
        recorded = args[UNIT_KEY]
        if recorded == current:
            return
        problem = (f"recorded '{objective.describe()}' {_in_unit(recorded)}, this tuner reports it "
                   f"{_in_unit(current)}")
    elif current is None:
        return                           # a unitless objective then and now: nothing can be mixed
    else:
        problem = (f"did not record the unit of '{objective.describe()}' (it predates recorded units; replays "
                   f"then stored milliseconds), this tuner reports it in {current}")
    raise UsageError(f"--resume: run {info['uuid']} {problem}: resuming would mix the two in one run; drop "
                     f"--resume to start a new run (the run's {info.get('tests', 0)} results stay in {where})")


def _in_unit(unit: Any) -> str:
    return "without a unit" if unit is None else f"in {unit}"


def _refuse_live_run(info: Dict[str, Any]) -> None:
    if info["state"] != "RUNNING" or info["host"] != socket.gethostname() or info["pid"] == os.getpid():
        return
    if process_alive(info["pid"]):
        raise UsageError(f"--resume: run {info['uuid']} is still running (process {info['pid']}); "
                         "stop it first or wait until it ends")


class HistoryReplay:
    """The recorded requests and results of a run, consumed in order by the search driver."""

    def __init__(self, db: ResultsStore, run_id: int) -> None:
        self.requests = db.desired_results(run_id)
        self.results = {row.id: row for row in db.run_results(run_id)}
        self.pos = 0
        #: adopted requests not yet answered, in request order (the serial loop claims the oldest)
        self.queue: Deque[Any] = deque()
        self.active = True

    def adopt(self, key: str) -> Optional[Any]:
        """Match a new proposal (configuration hash ``key``) with the next recorded request.

        Returns the request row; None when the record is used up (the proposal is live: the replay
        ends). Raises Diverged when the record holds another configuration."""
        if self.pos >= len(self.requests):
            self.active = False
            return None
        row = self.requests[self.pos]
        if row.config_hash != key:
            raise Diverged(f"request {self.pos + 1} was {row.config_hash[:12]}, replay proposed {key[:12]}")
        self.pos += 1
        self.queue.append(row)
        return row

    def next_result(self) -> Optional[Any]:
        """The recorded result of the oldest adopted request; None (replay ends) when it has none."""
        if not self.queue:
            return None
        row = self.queue[0]
        result = self.results.get(row.result_id) if row.result_id is not None else None
        if result is None:
            self.active = False
            return None
        self.queue.popleft()
        return result

    def leftover(self) -> List[str]:
        """Why the replay did not account for the whole record (empty when it did)."""
        problems = []
        unanswered = {row.id for row in self.queue}
        for row in self.requests[self.pos:]:
            if row.result_id is not None or row.state in ("REQUESTED", "RUNNING"):
                problems.append(f"request {row.id} was not proposed again")
        replayed = {row.result_id for row in self.requests[:self.pos] if row.id not in unanswered}
        if set(self.results) - replayed:
            problems.append("results without a replayed request")
        return problems
