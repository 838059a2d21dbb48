"""Statement runners of :class:`~tunerlib.db.storage.ResultsDB`: how a Core statement reaches the database.

* :class:`_SQLiteRunner` compiles each SQLAlchemy Core statement once per instance (:class:`_Prepared`:
  SQL text, parameter order, constants, JSON/bool codecs) and executes it directly on the pooled sqlite3
  connection, skipping SQLAlchemy's per-execution bookkeeping (~50-80 µs per statement on a slow box).
* :class:`_CoreRunner` executes the same statements through a SQLAlchemy Connection (PostgreSQL and other
  dialects; the tests also run SQLite through it). Both give the same results.

Both expose ``rows``, ``write``, ``insert``, ``many``, ``begin_write``, ``end_read``, ``commit``, ``rollback``
and ``close``; none of them commits on its own: ResultsDB decides where each transaction ends.
"""
from __future__ import annotations

import json
import sqlite3
from operator import itemgetter
from typing import Any, Callable, Optional, Sequence, Union, cast

from sqlalchemy import JSON, Boolean, Engine

from .migrations import json_dumps
from .tail import ResultTail


def _json_loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, (str, bytes)) else value


class JSONText:
    """A JSON column's value already encoded (by :func:`~tunerlib.db.migrations.json_dumps`), stored as it
    is by :class:`_SQLiteRunner` (only that runner takes it)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _picker(names: Sequence[str]) -> Callable[[dict], tuple]:
    """A function giving the values of ``names`` from a dict, as a tuple."""
    if not names:
        return lambda given: ()
    if len(names) == 1:
        name = names[0]
        return lambda given: (given[name],)
    return itemgetter(*names)


class _Prepared:
    """A Core statement compiled for SQLite: SQL text, parameter order, constants, JSON/bool codecs."""

    __slots__ = ("sql", "names", "consts", "pick", "encode", "decode")

    def __init__(self, stmt: Any, dialect: Any, keys: Optional[Sequence[str]]) -> None:
        compiled = stmt.compile(dialect=dialect, column_keys=list(keys) if keys is not None else None)
        if not compiled.positional or "POSTCOMPILE" in compiled.string:
            raise AssertionError(f"statement cannot run on the fast path: {compiled.string}")
        self.sql = compiled.string
        self.names = tuple(compiled.positiontup or ())
        self.consts = {name: b.value for name, b in compiled.binds.items() if not b.required}
        #: the parameter values in order, from a dict of every name (one C call)
        self.pick = _picker(self.names)
        self.encode = [i for i, name in enumerate(self.names)
                       if isinstance(compiled.binds[name].type, JSON)]
        columns = getattr(stmt, "selected_columns", None) or []
        self.decode = [(i, _json_loads if isinstance(c.type, JSON) else bool)
                       for i, c in enumerate(columns) if isinstance(c.type, (JSON, Boolean))]

    def params(self, given: dict) -> Sequence[Any]:
        """The statement's parameter values in order: ``given`` over the constants, JSON columns encoded."""
        picked = self.pick({**self.consts, **given} if self.consts else given)
        if not self.encode:
            return picked
        values = list(picked)
        for i in self.encode:
            value = values[i]
            if value is not None:
                values[i] = value.text if value.__class__ is JSONText else json_dumps(value)
        return values

    def row(self, raw: tuple) -> tuple:
        if not self.decode:
            return raw
        row = list(raw)
        for i, fn in self.decode:
            if row[i] is not None:
                row[i] = fn(row[i])
        return tuple(row)


class _SQLiteRunner:
    """Executes Core statements compiled once, directly on the pooled sqlite3 connection."""

    def __init__(self, engine: Engine) -> None:
        self._fairy = engine.raw_connection()  # pool checkout: the connect-time PRAGMAs are applied
        self.db = cast(sqlite3.Connection, self._fairy.driver_connection)  # a pysqlite engine
        self._dialect = engine.dialect
        self._cache: dict = {}
        #: the results this connection wrote, for the run's poll (:mod:`.tail`)
        self.tail = ResultTail()

    def _prep(self, stmt: Any, keys: Optional[tuple] = None, cache: bool = True) -> _Prepared:
        if not cache:
            return _Prepared(stmt, self._dialect, keys)
        prepared = self._cache.get((stmt, keys))
        if prepared is None:
            prepared = self._cache[(stmt, keys)] = _Prepared(stmt, self._dialect, keys)
        return prepared

    def rows(self, stmt: Any, params: dict, cache: bool = True) -> list:
        p = self._prep(stmt, None, cache)
        return [p.row(r) for r in self.db.execute(p.sql, p.params(params)).fetchall()]

    def write(self, stmt: Any, params: dict, cache: bool = True) -> int:
        p = self._prep(stmt, None, cache)
        return self.db.execute(p.sql, p.params(params)).rowcount

    def insert(self, stmt: Any, params: dict, cache: bool = True) -> Optional[int]:
        """Insert one row; its id, or None when nothing was inserted (ON CONFLICT DO NOTHING)."""
        p = self._prep(stmt, tuple(params), cache)
        cursor = self.db.execute(p.sql, p.params(params))
        return cursor.lastrowid if cursor.rowcount == 1 else None

    def many(self, stmt: Any, params: list) -> None:
        p = self._prep(stmt)
        self.db.executemany(p.sql, [p.params(x) for x in params])

    def begin_write(self) -> None:
        """Take the write lock now, before the transaction reads or writes anything."""
        self.db.execute("BEGIN IMMEDIATE")

    def data_version(self) -> Optional[int]:
        """SQLite's ``PRAGMA data_version``: it changes when another connection commits; None when it
        cannot be read now (a lock)."""
        try:
            return self.db.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.OperationalError:
            return None

    def end_read(self) -> None:
        if self.db.in_transaction:
            self.db.rollback()

    def commit(self) -> None:
        self.db.commit()

    def rollback(self) -> None:
        self.db.rollback()

    def close(self) -> None:
        self._fairy.close()


class _CoreRunner:
    """Executes Core statements through a SQLAlchemy Connection (PostgreSQL and other dialects)."""

    def __init__(self, engine: Engine) -> None:
        self.conn = engine.connect()

    def rows(self, stmt: Any, params: dict, cache: bool = True) -> list:
        return [tuple(r) for r in self.conn.execute(stmt, params)]

    def write(self, stmt: Any, params: dict, cache: bool = True) -> int:
        return self.conn.execute(stmt, params).rowcount

    def insert(self, stmt: Any, params: dict, cache: bool = True) -> Optional[int]:
        """Insert one row; its id, or None when nothing was inserted (ON CONFLICT DO NOTHING)."""
        result = self.conn.execute(stmt, params)
        if result.rowcount == 0:  # SQLite: inserted_primary_key would be the previous row's id
            return None
        key = result.inserted_primary_key  # PostgreSQL: None when RETURNING gave no row (rowcount is -1)
        return int(key[0]) if key is not None else None

    def many(self, stmt: Any, params: list) -> None:
        self.conn.execute(stmt, params)

    def begin_write(self) -> None:
        """SQLite: take the write lock now (BEGIN IMMEDIATE); a server's transactions wait for locks."""
        if self.conn.dialect.name == "sqlite":
            self.conn.exec_driver_sql("BEGIN IMMEDIATE")

    def end_read(self) -> None:
        self.conn.rollback()

    def commit(self) -> None:
        self.conn.commit()

    def rollback(self) -> None:
        self.conn.rollback()

    def close(self) -> None:
        self.conn.close()


_Runner = Union[_SQLiteRunner, _CoreRunner]
