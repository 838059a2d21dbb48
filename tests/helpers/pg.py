"""A throwaway PostgreSQL server for the tests: one per test session, a fresh empty database per test.

Fixtures (registered for every test module in tests/conftest.py):

* ``postgres_server`` (session): a :class:`PostgresServer` started on first use and stopped (its data
  directory removed) at the end of the session, also when tests failed;
* ``postgres_url`` (function): ``postgresql+psycopg://...`` of a new empty database (a schema of its own:
  see :class:`PostgresServer`), dropped after the test.

Both skip the test with a one-line reason when the environment lacks PostgreSQL: no ``initdb`` /
``postgres`` binaries (on PATH or under /usr/lib/postgresql/*/bin), psycopg not installed, or a server
that failed to start (the reason quotes the last line of its log). The server runs with ``initdb``'s
role ``tunerlib`` (trust authentication on a unix socket in its temporary directory, no TCP port) and
``fsync=off``; run as root, initdb and the server run as an unprivileged user (``postgres`` if that user
exists, else ``nobody``), since PostgreSQL refuses to run as root.
"""
from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Optional
from urllib.parse import quote

import pytest

SUPERUSER = "tunerlib"  #: the role initdb creates; it connects without a password
DATABASE = "postgres"  #: initdb's default database: each test gets a schema of it
PORT = 5432  #: only names the socket file (.s.PGSQL.5432): the server listens on no TCP port
READY_TIMEOUT_S = 30.0
#: speed over durability: the cluster is thrown away at the end of the session
SERVER_SETTINGS = ("listen_addresses=", "fsync=off", "synchronous_commit=off", "full_page_writes=off")
#: the superuser connects without a password; every other role must give its password
PG_HBA = f"local all {SUPERUSER} trust\nlocal all all scram-sha-256\n"


class PostgresUnavailable(Exception):
    """PostgreSQL cannot be used here; the message (one line) says what is missing."""


def find_binaries() -> Optional[Path]:
    """The folder holding ``initdb`` and ``postgres``: PATH first, then /usr/lib/postgresql/*/bin
    (newest version first); None when there is none."""
    initdb = shutil.which("initdb")
    candidates = [Path(initdb).resolve().parent] if initdb else []
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: _version_key(Path(p).parent.name),
                      reverse=True)
    candidates += [Path(p) for p in versions]
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in ("initdb", "postgres")):
            return folder
    return None


def _version_key(name: str) -> tuple:
    """Sort key of a PostgreSQL version folder name ("15", "9.6")."""
    return tuple(int(part) if part.isdigit() else -1 for part in name.split("."))


def _run_as() -> dict:
    """subprocess keyword arguments that drop root to an unprivileged user ({} when not root)."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    raise PostgresUnavailable("running as root and no unprivileged user (postgres, nobody) to run it as")


def _last_log_line(log: Path) -> str:
    """The last non-empty line of the server log (why it stopped), or a note that there is none."""
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return lines[-1] if lines else "(empty log)"


class PostgresServer:
    """A running throwaway cluster (unix socket only) and an autocommit admin connection to its
    database :data:`DATABASE`.

    Each test gets a fresh empty *schema* of :data:`DATABASE` (``CREATE SCHEMA`` takes about a millisecond,
    ``CREATE DATABASE`` 50-300 ms on a busy 2-core box): its URL sets ``search_path`` to that schema, so
    tunerlib sees an empty database, and ``application_name`` to the schema's name, so that the sessions a
    test leaves behind can be ended before its schema is dropped.
    """

    def __init__(self, root: Path, process: subprocess.Popen, admin: Any) -> None:
        self.root = root  #: temporary directory: data/, server.log and the socket
        self.process = process
        self.admin = admin  #: psycopg connection of the superuser to DATABASE
        self._names = itertools.count(1)

    def url(self, schema: str, user: str = SUPERUSER, password: Optional[str] = None) -> str:
        """SQLAlchemy URL of the empty database ``schema`` as ``user`` (with ``password`` if given)."""
        auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password is not None else "")
        return (f"postgresql+psycopg://{auth}@/{DATABASE}?host={quote(str(self.root), safe='/')}"
                f"&options=-csearch_path%3D{schema}&application_name={schema}")

    def create_schema(self, owner: str = SUPERUSER) -> str:
        """Create a new empty schema owned by ``owner``; returns its name (for :meth:`url`)."""
        name = f"t{next(self._names)}"
        self.admin.execute(f'CREATE SCHEMA {name} AUTHORIZATION "{owner}"')
        return name

    def end_sessions(self, schema: str) -> int:
        """End the sessions opened through :meth:`url` of ``schema`` (waiting up to 10 s for each to
        exit); returns how many there were."""
        ended = self.admin.execute("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                                   "WHERE application_name = %s", (schema,)).fetchall()
        return len(ended)

    def drop_schema(self, schema: str) -> None:
        """Drop ``schema`` and everything in it, after ending the sessions a test left connected to it."""
        self.end_sessions(schema)
        self.admin.execute(f"DROP SCHEMA {schema} CASCADE")

    def create_role(self, name: str, password: str) -> None:
        """Create a login role that authenticates with ``password`` (SCRAM)."""
        from psycopg import sql
        self.admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(name),
                                                                             sql.Literal(password)))

    def stop(self) -> None:
        """Stop the server (fast shutdown, killed after 30 s) and remove its directory."""
        try:
            self.admin.close()
        finally:
            _stop_process(self.process)
            shutil.rmtree(self.root, ignore_errors=True)


def _stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)  # fast shutdown: ends sessions, then exits
        try:
            process.wait(READY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _initdb(binaries: Path, root: Path, run_as: dict) -> None:
    """Create the cluster in ``root``/data (C locale, UTF8, role ``tunerlib``) and its pg_hba.conf."""
    data = root / "data"
    done = subprocess.run([str(binaries / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
                           "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C"],
                          cwd=root, capture_output=True, text=True, timeout=120, **run_as)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise PostgresUnavailable(f"initdb failed: {lines[-1] if lines else done.returncode}")
    (data / "pg_hba.conf").write_text(PG_HBA)


def _connect_when_ready(root: Path, process: subprocess.Popen) -> Any:
    """Poll until the server accepts the superuser (an autocommit connection) or gives up."""
    import psycopg
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            return psycopg.connect(host=str(root), port=PORT, user=SUPERUSER, dbname=DATABASE,
                                   autocommit=True, connect_timeout=5)
        except psycopg.OperationalError:
            if process.poll() is not None:
                raise PostgresUnavailable(f"PostgreSQL server failed to start: "
                                          f"{_last_log_line(root / 'server.log')}") from None
            if time.monotonic() > deadline:
                raise PostgresUnavailable(f"PostgreSQL server not ready after {READY_TIMEOUT_S:.0f} s: "
                                          f"{_last_log_line(root / 'server.log')}") from None
        time.sleep(0.05)


def start_server(binaries: Path) -> PostgresServer:
    """initdb a cluster in a new temporary directory and start it; PostgresUnavailable on failure
    (nothing is left behind then)."""
    run_as = _run_as()
    # a short path: the socket's path must stay under 108 bytes (a deep $TMPDIR could exceed it)
    root = Path(tempfile.mkdtemp(prefix="tlpg-", dir="/tmp" if os.path.isdir("/tmp") else None))
    process = None
    try:
        if run_as:
            os.chown(root, run_as["user"], run_as["group"])
        _initdb(binaries, root, run_as)
        options = [arg for setting in SERVER_SETTINGS for arg in ("-c", setting)]
        with open(root / "server.log", "wb") as log:
            process = subprocess.Popen([str(binaries / "postgres"), "-D", str(root / "data"), "-k", str(root),
                                        "-p", str(PORT), *options],
                                       cwd=root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       **run_as)
        return PostgresServer(root, process, _connect_when_ready(root, process))
    except BaseException as exc:
        if process is not None:
            _stop_process(process)
        shutil.rmtree(root, ignore_errors=True)
        if isinstance(exc, (OSError, subprocess.TimeoutExpired)):  # binaries that cannot run, initdb hung
            raise PostgresUnavailable(f"PostgreSQL could not be started: {exc}") from None
        raise


def unavailable_reason() -> Optional[str]:
    """Why no PostgreSQL server can be started here (one line), or None when it can be tried."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'psycopg[binary]>=3.1.4')"
    if find_binaries() is None:
        return "no PostgreSQL binaries (initdb, postgres) on PATH or under /usr/lib/postgresql/*/bin"
    return None


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL server for the session (skips the test when it cannot be started)."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    try:
        server = start_server(find_binaries())
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """URL of a new empty PostgreSQL database (a schema of its own, dropped after the test)."""
    schema = postgres_server.create_schema()
    yield postgres_server.url(schema)
    postgres_server.drop_schema(schema)
