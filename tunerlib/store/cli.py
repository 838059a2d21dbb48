"""``tunerlib upload`` and ``tunerlib store ...`` (added to the ``tunerlib`` command by tunerlib.cli)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional, TextIO

from ..techniques.recommendation import AFFINITY_METRICS
from .queries import load_affinities
from .report import (GROUPINGS, representation_rows, select_reps, similar_rows, technique_labels,
                     technique_rows, why_no_similar)
from .schema import StoreError
from .crosssession import CrossSessionStore
from .upload import upload


def add_commands(sub: Any) -> None:
    """Add ``upload`` and ``store`` to the ``tunerlib`` command's subparsers."""
    up = sub.add_parser("upload", help="upload the runs of a results database to the cross-session store")
    up.add_argument("databases", nargs="+", metavar="RESULTS_DB",
                    help="results database(s): file path or SQLAlchemy URL")
    _store_option(up)
    up.add_argument("--run", nargs="+", default=[], metavar="UUID", help="only these runs (UUID prefixes)")
    up.add_argument("--include-configurations", action="store_true",
                    help="also store each run's 10 best configurations (for --warm-start)")
    up.add_argument("--json", action="store_true", help="print the outcome counts as JSON")
    store = sub.add_parser("store", help="query the cross-session store")
    queries = store.add_subparsers(dest="query", required=True)
    _store_option(queries.add_parser("info", help="what the store holds"))
    reps = queries.add_parser("representations", help="stored representations")
    tech = queries.add_parser("techniques", help="techniques ranked by search affinity")
    sim = queries.add_parser("similar", help="representations most similar to one")
    for parser in (reps, tech, sim):
        _store_option(parser)
        parser.add_argument("--metric", choices=AFFINITY_METRICS, default="new-bests",
                            help="how techniques are scored: search affinity or run-rank")
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    for parser in (tech, sim):
        parser.add_argument("--representation", type=int, help="representation id")
        parser.add_argument("--program", help="program name (or project/program)")
    tech.add_argument("--project", help="every representation of this project (domain)")
    tech.add_argument("--by", choices=GROUPINGS, default="technique", help="aggregate by")
    tech.add_argument("--limit", type=int, default=20, help="rows to print (0: all)")
    sim.add_argument("--by", choices=("parameters", "performance"), default="parameters", help="similarity")


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", metavar="URL", help="store: file path or SQLAlchemy URL "
                                                        "(default $TUNERLIB_STORE or the user data directory)")


def run_command(ns: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    """Run ``upload`` or ``store`` (output to ``out``, default the current sys.stdout); errors are one
    line on stderr with exit code 2."""
    out = out if out is not None else sys.stdout
    try:
        if ns.command == "upload":
            return _upload(ns, out)
        with CrossSessionStore(ns.store, create=False) as store:
            return _query(ns, store, out)
    except (StoreError, ValueError) as exc:
        print(f"tunerlib: error: {exc}", file=sys.stderr)
        return 2


def _upload(ns: argparse.Namespace, out: TextIO) -> int:
    totals: Dict[str, int] = {}
    with CrossSessionStore(ns.store) as store:
        for source in ns.databases:
            report = upload(source, store, ns.include_configurations, ns.run,
                            progress=None if ns.json else sys.stderr)
            for outcome, n in report.outcomes.items():
                totals[outcome] = totals.get(outcome, 0) + n
            if not ns.json:
                out.write(report.line(source, store.display_url) + "\n")
    if ns.json:
        out.write(json.dumps(totals, sort_keys=True) + "\n")
    return 0


def _query(ns: argparse.Namespace, store: CrossSessionStore, out: TextIO) -> int:
    if ns.query == "info":
        out.write(f"store {store.display_url}: " + ", ".join(f"{n} {k}" for k, n in store.counts().items()) + "\n")
        return 0
    table = load_affinities(store, ns.metric)
    labels: Dict[str, str] = {}
    note = None
    if ns.query == "representations":
        rows = representation_rows(table)
        empty = f"no representations: store {store.display_url} holds no runs (`tunerlib upload RESULTS_DB` adds some)"
    elif ns.query == "techniques":
        reps = select_reps(table, ns.representation, ns.program, ns.project)
        rows = technique_rows(table, reps, ns.by)
        rows = rows[:ns.limit] if ns.limit else rows
        labels, note = technique_labels(ns.metric)
        empty = "no techniques: the selected representations' runs have no technique performance records"
    else:
        if ns.representation is None and ns.program is None:
            raise ValueError("store similar needs --representation ID or --program NAME")
        reps = select_reps(table, ns.representation, ns.program)
        rows = similar_rows(table, reps[0], ns.by)
        empty = f"no similar representation: {why_no_similar(table, reps[0], ns.by)}"
    write_rows(rows, out, ns.json, empty, labels, note)
    return 0


def write_rows(rows: List[Dict[str, Any]], out: TextIO, as_json: bool, empty: str = "nothing found",
               labels: Optional[Dict[str, str]] = None, note: Optional[str] = None) -> None:
    """Rows as a JSON list (``[]`` with ``empty``, why there are none, on stderr), or as an aligned
    text table (floats with 4 decimals) whose header names each column as in ``labels`` (default
    its key), followed by ``note``; ``empty`` on its own when there are no rows."""
    if as_json:
        out.write(json.dumps(rows, indent=1) + "\n")
        if not rows:
            print(f"tunerlib: {empty}", file=sys.stderr)
        return
    if not rows:
        out.write(empty + "\n")
        return
    cols = list(rows[0])
    header = [(labels or {}).get(c, c) for c in cols]
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(header)]
    last = len(cols) - 1
    fmt = lambda vals: "  ".join(v if i == last else v.ljust(widths[i]) for i, v in enumerate(vals))  # noqa: E731
    out.write(fmt(header) + "\n" + "\n".join(fmt(row) for row in cells) + "\n" + (note + "\n" if note else ""))


def _cell(value: Optional[Any]) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if isinstance(value, float) else str(value)
