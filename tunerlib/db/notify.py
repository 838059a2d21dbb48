"""Waking the search driver when a result arrives (PostgreSQL LISTEN/NOTIFY).

On PostgreSQL :meth:`ResultsDB.complete` sends ``NOTIFY tunerlib_results, '<run id>'`` in the
transaction that stores the result (delivered when it commits). :class:`ResultListener` holds one
autocommit connection that LISTENs on that channel; the run loop calls :meth:`ResultListener.wait`
instead of sleeping, and wakes as soon as a result of its run is stored. Other engines (SQLite) have no
such thing: :meth:`ResultsDB.listen` returns None there and the loop polls with a short back-off.
"""
from __future__ import annotations

import select
import time
from typing import Any

__all__ = ["CHANNEL", "ResultListener"]

CHANNEL = "tunerlib_results"


class ResultListener:
    """A LISTEN connection of its own (``engine.raw_connection()`` of a PostgreSQL engine)."""

    def __init__(self, engine: Any, run_id: int) -> None:
        self._fairy = engine.raw_connection()
        self._conn = self._fairy.driver_connection
        self._conn.autocommit = True
        self._conn.execute(f"LISTEN {CHANNEL}")
        self._run = str(run_id)
        self._lost = False

    def wait(self, timeout: float) -> bool:
        """Block until a result of the run is stored or ``timeout`` seconds pass; True when woken by one.
        A signal handler that raises interrupts the wait."""
        pgconn = self._conn.pgconn
        if self._lost:
            time.sleep(timeout)
            return False
        try:
            ready, _, _ = select.select([pgconn.socket], [], [], timeout)
            if not ready:
                return False
            pgconn.consume_input()  # libpq level: psycopg's notifies() generator may block
        except Exception:  # noqa: BLE001  (the connection is gone: the run loop polls from now on)
            self._lost = True
            return False
        woken = False
        while (note := pgconn.notifies()) is not None:
            woken = woken or note.extra.decode() == self._run
        return woken

    def close(self) -> None:
        try:
            self._conn.execute(f"UNLISTEN {CHANNEL}")
        except Exception:  # noqa: BLE001  (a lost connection: nothing to undo)
            pass
        self._fairy.invalidate()  # never return a LISTENing connection to the pool
