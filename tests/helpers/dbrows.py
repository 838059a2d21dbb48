"""Reading a results database file directly with sqlite3, as the tests that check what a run left behind do."""
from __future__ import annotations

import sqlite3
from typing import Any, List, Tuple


def rows(db: Any, sql: str, timeout: float = 60) -> List[Tuple]:
    """Every row ``sql`` selects from the SQLite file ``db`` (waits up to ``timeout`` s for a lock)."""
    con = sqlite3.connect(db, timeout=timeout)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def count_results(db: Any) -> int:
    """The number of result rows in ``db`` (0 while the run has not created its tables yet)."""
    try:
        return rows(db, "select count(*) from result")[0][0]
    except sqlite3.OperationalError:
        return 0
