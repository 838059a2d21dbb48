"""The results a SQLite connection has just written, handed to the run's poll without reading them back.

The search driver polls ``ResultsDB.results_after`` after every result; in a serial run the only new
result is the one this process has just committed, and reading it back (a join with its configuration and
request, two JSON columns decoded) costs more CPU than writing it.  ``PRAGMA data_version`` tells whether
any *other* connection committed since a given moment (a commit on the same connection leaves it
unchanged).  So after a full read of a run's results, for as long as the version stays the same, the
run's results after that read are exactly those this connection completed since, and :class:`ResultTail`
returns them as the rows a read would give: the configuration and ``extra`` as their JSON text decodes
(:func:`~tunerlib.db.runners.json_copy`), numbers as the FLOAT columns give them back, the requestor and
ids as written.

Any doubt means a full read: another connection committed, a result completed here whose request was not
written here (its configuration is not at hand), a poll from another position, too many rows held.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .models import ResultRow
from .jsoncopy import json_copy

__all__ = ["ResultTail"]

#: requests written claimed and not yet completed that are remembered (older ones are forgotten)
MAX_OPEN = 256
#: completed rows held for the next poll before the tail gives up and the poll reads them
MAX_HELD = 4096


def _real(value: Any) -> Optional[float]:
    """A number as a FLOAT column gives it back."""
    return None if value is None else float(value)


class ResultTail:
    """Kept by :class:`~tunerlib.db.storage.ResultsDB` for its SQLite connection (a new connection
    starts a new tail).  Told of each request written claimed (:meth:`requested`), each result
    completed (:meth:`completed`), each full read (:meth:`watch`) and new-best marks (:meth:`marked`);
    :meth:`take` answers a poll, or None when the poll must read."""

    def __init__(self) -> None:
        #: request id -> (run id, configuration id, hash, configuration as stored, requestor)
        self._open: Dict[int, Tuple[int, int, str, Any, Optional[str]]] = {}
        #: (run id, last result id read, data_version before that read), or None
        self._watch: Optional[Tuple[int, int, int]] = None
        self._held: List[ResultRow] = []

    def requested(self, dr_id: int, run_id: int, cfg_id: int, hash: str, data: Any,
                  requestor: Optional[str]) -> None:
        """A request this connection wrote claimed, with its configuration as a read gives it (a copy
        of its own, kept here)."""
        if len(self._open) >= MAX_OPEN:
            self._open.pop(next(iter(self._open)))
        self._open[dr_id] = (run_id, cfg_id, hash, data, requestor)

    def completed(self, dr_id: int, result_id: int, values: Dict[str, Any], extra: Any, extra_text: str) -> None:
        """A result this connection committed for request ``dr_id`` (``values``: the columns written;
        ``extra`` and ``extra_text``: the ``extra`` column's value and its JSON text)."""
        known = self._open.pop(dr_id, None)
        watch = self._watch
        if watch is None:
            return
        if known is None or len(self._held) >= MAX_HELD:
            self.forget()  # a result of the watched run may be among them: the next poll reads
            return
        run_id, cfg_id, hash, data, requestor = known
        if run_id != watch[0]:
            return
        self._held.append(ResultRow(
            result_id, dr_id, cfg_id, hash, data, values["state"], _real(values["time"]),
            _real(values["accuracy"]), _real(values["energy"]), _real(values["size"]), json_copy(extra, extra_text),
            False, requestor, _real(values["collection_cost"]), _real(values["collection_date"])))

    def watch(self, run_id: int, last_id: int, version: Optional[int]) -> None:
        """A full read of the run's results up to ``last_id``, started when ``data_version`` was
        ``version`` (None: unknown, nothing is held)."""
        self._held = []
        self._watch = None if version is None else (run_id, last_id, version)

    def take(self, run_id: int, after: int, version: Optional[int]) -> Optional[List[ResultRow]]:
        """The run's results with id > ``after`` when no other connection committed since the last full
        read (``version``: ``data_version`` now), else None (read them)."""
        watch = self._watch
        if watch is None or version is None or watch[0] != run_id or watch[2] != version or after < watch[1]:
            return None
        rows = [row for row in self._held if row.id > after]
        self._held = []
        self._watch = (run_id, rows[-1].id if rows else after, version)
        return rows

    def marked(self, result_ids: Sequence[int]) -> None:
        """``was_new_best`` was set on these results."""
        if self._held:
            ids = set(result_ids)
            self._held = [replace(row, was_new_best=True) if row.id in ids else row for row in self._held]

    def forget(self) -> None:
        """Hold nothing: the next poll reads."""
        self._watch = None
        self._held = []
