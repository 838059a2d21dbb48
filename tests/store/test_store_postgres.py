"""The cross-session store on a real PostgreSQL server (skipped with a reason where none can start):
the same contents as on SQLite, idempotent re-upload, and concurrent uploads of the same runs (on
both)."""
import ast
import subprocess
import sys

import pytest

from tunerlib.store import CrossSessionStore
from tunerlib.store.queries import load_affinities
from tunerlib.store.upload import upload

_UPLOAD = "import sys; from tunerlib.store import CrossSessionStore; from tunerlib.store.upload import upload\n" \
          "with CrossSessionStore(sys.argv[2]) as s: print(dict(upload(sys.argv[1], s, progress=None).outcomes))"


def _table(url):
    with CrossSessionStore(url, create=False) as store:
        table = load_affinities(store)
        return store.counts(), {(r.name, r.parameter_info) for r in table.reps.values()}, \
            sorted((n, round(a, 12), q) for rep in table.affinity.values() for n, (a, q) in rep.items())


def test_postgresql_store_matches_sqlite(results_db, tmp_path, postgres_url):
    sqlite_url = str(tmp_path / "s.db")
    for url in (sqlite_url, postgres_url):
        with CrossSessionStore(url) as store:
            assert upload(str(results_db), store, progress=None).outcomes == {"added": 3}
            assert upload(str(results_db), store, progress=None).outcomes == {"unchanged": 3}
    assert _table(postgres_url) == _table(sqlite_url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("postgres_url")


def test_concurrent_uploads_never_duplicate_a_run(results_db, store_url):
    CrossSessionStore(store_url).close()
    procs = [subprocess.Popen([sys.executable, "-c", _UPLOAD, str(results_db), store_url],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    with CrossSessionStore(store_url) as store:
        assert store.counts()["runs"] == 3
    added = sum(parse_counts(out).get("added", 0) for out, _ in outs)
    assert added == 3


def parse_counts(text):
    """{outcome: n} from the child's printed dict (a Python literal, read with ast.literal_eval)."""
    return ast.literal_eval(text.strip().splitlines()[-1])
