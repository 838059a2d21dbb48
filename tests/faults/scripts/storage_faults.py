"""The toy tuner with a storage fault injected into the run, for the fault-injection tests.

    python storage_faults.py FAULT [toy tuner options]

FAULT is one of
* ``unopenable``: when the local worker pool starts, the database's folder is moved aside and a regular
  file put in its place, so the workers cannot open the database (the tuner keeps its open connection
  to the moved files);
* ``full:PAGES``: every connection of the run gets ``PRAGMA max_page_count=PAGES`` (SQLite then fails
  writes that need more pages with "database or disk is full");
* ``full-all:FLAG``: once the file FLAG exists, every write transaction of the run (its workers' too)
  fails to commit as SQLite's do on a full disk, "database or disk is full", so the run's own row
  cannot be written either.
"""
import os
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "core" / "scripts"))

from toy_tuner import ToyTuner  # noqa: E402

from tunerlib.executors import pool as workers  # noqa: E402
from tunerlib.db import migrations, runners  # noqa: E402


def unopenable() -> None:
    start = workers.WorkerPool.start

    def start_without_database(pool):
        pool.store._runner()  # the tuner's own connection stays open on the moved files
        folder = Path(pool.store.display_url).parent
        folder.rename(folder.with_name(folder.name + ".moved"))
        folder.write_text("not a folder\n")
        start(pool)
    workers.WorkerPool.start = start_without_database


def full(pages: int) -> None:
    pragmas = migrations._sqlite_pragmas

    def limited(dbapi_connection, record):
        pragmas(dbapi_connection, record)
        dbapi_connection.execute(f"PRAGMA max_page_count={pages}")
    migrations._sqlite_pragmas = limited


def full_after(flag: str) -> None:
    commit = runners._SQLiteRunner.commit

    def commit_unless_full(runner):
        if os.path.exists(flag):
            raise sqlite3.OperationalError("database or disk is full")
        commit(runner)
    runners._SQLiteRunner.commit = commit_unless_full


if __name__ == "__main__":
    fault, args = sys.argv[1], sys.argv[2:]
    kind, _, value = fault.partition(":")
    {"unopenable": lambda: unopenable(), "full": lambda: full(int(value)),
     "full-all": lambda: full_after(value)}[kind]()
    sys.exit(ToyTuner.main(args))
