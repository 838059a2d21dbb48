"""The storage contract kit (:mod:`tunerlib.testing.storage`), run against every backend: the SQLAlchemy
store on SQLite (its fast path and its SQLAlchemy-Connection path), on a real PostgreSQL server
(tests/helpers/pg.py; skipped where PostgreSQL or psycopg is missing) and the in-memory store; one
test per check and backend."""
import pytest

from tunerlib.db import DatabaseError, MemoryStore, ResultsDB, open_store
from tunerlib.testing import ConformanceError
from tunerlib.testing.storage import STORAGE_CHECKS, check_storage

from kit import core_path


@pytest.fixture(params=["sqlite-fast", "sqlite-core", "postgresql", "memory"])
def store(request, tmp_path):
    if request.param == "memory":
        backend = MemoryStore()
    elif request.param == "postgresql":
        backend = ResultsDB(request.getfixturevalue("postgres_url"))
    else:
        backend = ResultsDB(str(tmp_path / "c.db"))
        if request.param == "sqlite-core":
            core_path(backend)
    yield backend
    backend.close()


@pytest.mark.parametrize("check", STORAGE_CHECKS, ids=lambda c: c.__name__[len("check_"):])
def test_storage_contract(check, store):
    check(store)


def test_open_store_picks_the_backend(tmp_path):
    assert isinstance(open_store("memory://"), MemoryStore)
    with open_store(str(tmp_path / "x.db")) as db:
        assert isinstance(db, ResultsDB)


def test_the_memory_store_is_not_shared_and_a_database_is(tmp_path):
    with pytest.raises(DatabaseError, match="need a database"):
        MemoryStore().worker_url()
    with ResultsDB(str(tmp_path / "w.db")) as db, ResultsDB(db.worker_url()) as other:
        pv = db.program_version_id("p", "q", "1", "{}")
        run_id, run_uuid = db.create_run(pv, None, {}, None, None, "o")
        assert [r["uuid"] for r in other.runs_of(pv)] == [run_uuid]


class _LimitsStayStore(MemoryStore):
    """A broken backend: the limits of waiting requests never tighten."""

    def tighten_limits(self, run_id, limit):
        return 0


def test_check_storage_passes_a_backend_and_names_the_broken_rule_of_another(tmp_path):
    check_storage(MemoryStore)
    check_storage(lambda: ResultsDB(str(tmp_path / f"k{len(list(tmp_path.iterdir()))}.db")))
    with pytest.raises(ConformanceError, match="check_limits_of_waiting_requests_tighten"):
        check_storage(_LimitsStayStore)
