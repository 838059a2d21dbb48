"""The starter history: technique performance on the problems shipped with tunerlib, as package data,
so that the recommendation bandits (and any other consumer of an :class:`~.queries.AffinityTable`)
have something to learn from before the user's own store holds a run like theirs.

It is a gzip-compressed JSON file of :class:`~.queries.StoreRows` (parameter structures, technique
names and each technique's last performance snapshot per run: no configuration values), read into
memory and never written. :func:`recommendation_table` is the one entry point: the user's store when
it holds a representation similar to the space being tuned (one with every parameter type of the
space), else the starter history. Rebuild it from a store made by ``python -m tools.history generate``::

    tunerlib history starter --store history.db              # writes tunerlib/store/starter_history.json.gz
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Iterable, Mapping, Optional, Tuple, Union

from .queries import AffinityTable, StoreRows, read_rows, table_from_rows
from .schema import StoreError
from .crosssession import CrossSessionStore

#: the starter history shipped with the package
STARTER_PATH = Path(__file__).with_name("starter_history.json.gz")
#: the file format's version (a file of another version is not read)
FORMAT = 1
#: where a table came from, as :func:`recommendation_table` reports it
USER, STARTER = "store", "starter"


def write_starter(store: CrossSessionStore, path: Union[str, Path] = STARTER_PATH) -> StoreRows:
    """Write the starter history of ``store`` to ``path`` (byte-identical for the same store: no
    timestamp in the gzip header, sorted rows); returns what was written."""
    rows = read_rows(store)
    data = {"format": FORMAT, "representations": sorted(rows.representations),
            "snapshots": sorted(rows.snapshots, key=repr), "techniques": sorted(rows.techniques, key=repr)}
    text = json.dumps(data, separators=(",", ":"), sort_keys=True).encode("utf-8")
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9) as fh:
        fh.write(text)
    return rows


def read_starter(path: Union[str, Path, None] = None) -> Optional[StoreRows]:
    """The starter history at ``path`` (default :data:`STARTER_PATH`); None when there is none (or it
    is not readable)."""
    path = path or STARTER_PATH
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return StoreRows([tuple(r) for r in data["representations"]], [tuple(r) for r in data["snapshots"]],
                     [tuple(r) for r in data["techniques"]])


def has_similar(table: AffinityTable, counts: Mapping[str, int]) -> bool:
    """Whether ``table`` holds technique performance of a representation that has every parameter
    type of the space whose type counts are ``counts``."""
    return any(scores and all(kind in table.reps[rep].counts for kind in counts)
               for rep, scores in table.affinity.items())


def recommendation_table(url: Optional[str], counts: Mapping[str, int], metric: str = "new-bests",
                         exclude_programs: Iterable[str] = (), starter: bool = True,
                         starter_path: Union[str, Path, None] = None) -> Tuple[AffinityTable, str, str]:
    """(table, source, where) for a space of type counts ``counts``: the table of the user's store
    (``url``; None: the default store) when it holds a similar representation (:func:`has_similar`),
    else the starter history's (``starter_path``, default :data:`STARTER_PATH`; not with ``starter`` False). ``source`` is :data:`USER` or
    :data:`STARTER`; ``where`` names it for messages. The user's store is opened read-only
    (``create=False``) and the starter file only read. Raises StoreError when neither can be read (the
    user store's error)."""
    table: Optional[AffinityTable] = None
    error: Optional[StoreError] = None
    try:
        with CrossSessionStore(url, create=False) as store:
            table = table_from_rows(read_rows(store), metric, exclude_programs)
            where = f"store {store.display_url}"
    except StoreError as exc:
        error = exc
    if table is not None and (has_similar(table, counts) or not starter):
        return table, USER, where
    path = Path(starter_path or STARTER_PATH)
    rows = read_starter(path) if starter else None
    if rows is not None:
        return table_from_rows(rows, metric, exclude_programs), STARTER, f"starter history {path.name}"
    if table is None:
        assert error is not None
        raise error
    return table, USER, where
