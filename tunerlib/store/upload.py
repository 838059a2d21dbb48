"""``tunerlib upload RESULTS_DB``: replay every run of a results database into the store.

Every run is exported first (so a database that cannot be read changes nothing), then each is written
in its own transaction: re-uploading changes nothing, a run uploaded while unfinished is replaced by its
newer version, and a killed upload leaves whole runs only (run it again to finish). Runs that FAILED
or have no results are skipped.
"""
from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, List, Optional, TextIO

from ..db import DatabaseError, ResultsDB
from ..db.protocol import open_existing
from .export import StoredRun, export_run
from .schema import StoreError
from .crosssession import CrossSessionStore


@dataclass
class UploadReport:
    """What an upload did: outcome -> number of runs (added, replaced, unchanged, skipped)."""

    outcomes: Counter = field(default_factory=Counter)
    runs: List[str] = field(default_factory=list)

    def line(self, source: str, store: str) -> str:
        parts = ", ".join(f"{n} {k}" for k, n in sorted(self.outcomes.items())) or "no runs"
        return f"uploaded {source} to {store}: {parts}"


def open_results(url: str) -> ResultsDB:
    """Open an existing results database; StoreError (one line) when it is missing, not a tunerlib
    results database, or of another schema version."""
    try:
        return open_existing(url, "upload")
    except DatabaseError as exc:
        raise StoreError(str(exc)) from None


def _progress(total: int, out: Optional[TextIO]) -> Callable[[int], None]:
    if out is None or total == 0:
        return lambda done: None
    try:
        from tqdm import tqdm  # optional extra [progress]
    except ImportError:
        def step(done: int) -> None:
            out.write(f"\ruploading runs: {done}/{total}")
            if done == total:
                out.write("\n")
            out.flush()
        return step
    bar = tqdm(total=total, desc="uploading runs", unit="run", file=out)

    def advance(done: int) -> None:
        bar.update(done - bar.n)
        if done == total:
            bar.close()
    return advance


def export_all(results: ResultsDB, include_configurations: bool, uuids: Iterable[str] = ()) -> List[StoredRun]:
    """Every uploadable run of ``results`` (all of them, or those whose UUID starts with one of
    ``uuids``); StoreError naming the run whose record cannot be read."""
    wanted = list(uuids)
    runs = []
    for info in results.list_runs():
        if info["state"] == "FAILED" or not info["tests"]:
            continue
        if wanted and not any(info["uuid"].startswith(u) for u in wanted):
            continue
        try:
            stored = export_run(results, info["id"], include_configurations)
        except ValueError as exc:
            raise StoreError(f"run {info['uuid']} cannot be uploaded: {exc}; nothing was uploaded") from None
        if stored is not None:
            runs.append(stored)
    return runs


def upload(source: str, store: CrossSessionStore, include_configurations: bool = False,
           uuids: Iterable[str] = (), progress: Optional[TextIO] = sys.stderr) -> UploadReport:
    """Upload the runs of the results database at ``source`` (see the module docstring)."""
    results = open_results(source)
    try:
        runs = export_all(results, include_configurations, uuids)
    finally:
        results.close()
    report = UploadReport()
    advance = _progress(len(runs), progress)
    for done, stored in enumerate(runs, 1):
        report.outcomes[store.write_run(stored)] += 1
        report.runs.append(stored.uuid)
        advance(done)
    return report


