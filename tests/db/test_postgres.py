"""What only a database server shows (tests/helpers/pg.py starts one; skipped without PostgreSQL): a
password in the URL is given to workers but never shown, a lost connection is a one-line error after
which the next call reconnects, and an insert that another process made first gives no id. The store
contract itself runs on PostgreSQL in test_store_contract.py."""
import pytest
from sqlalchemy import make_url

from tunerlib.db import DatabaseError, ResultsDB
from tunerlib.db.admin import display_url, list_runs

from kit import core_path

#: a password that must be escaped in a URL (":", "@", "/", "%", "?", "#", a space, non-ASCII)
PASSWORD = "s3:cr@t/%?#é p"


@pytest.fixture
def alice_url(postgres_server):
    """URL of a new empty database owned by role alice, who logs in with PASSWORD."""
    postgres_server.create_role("alice", PASSWORD)
    schema = postgres_server.create_schema(owner="alice")
    yield postgres_server.url(schema, "alice", PASSWORD)
    postgres_server.drop_schema(schema)
    postgres_server.admin.execute("DROP ROLE alice")


def test_password_reaches_workers_but_is_never_shown(alice_url):
    with ResultsDB(alice_url) as database:
        pv = database.program_version_id("proj", "prog", "v1", "{}")
        database.create_run(pv, "a", {}, None, None, "o")
        assert "***" in database.display_url and "s3" not in database.display_url
        assert display_url(alice_url) == database.display_url
        with ResultsDB(database.worker_url()) as worker:  # a worker logs in with the password
            assert [r["label"] for r in worker.runs_of(pv)] == ["a"]
    assert [r["label"] for r in list_runs(alice_url)] == ["a"]


def test_wrong_password_is_a_one_line_error_without_the_password(alice_url):
    wrong = make_url(alice_url).set(password="not-it").render_as_string(hide_password=False)
    with pytest.raises(DatabaseError) as info:
        ResultsDB(wrong)
    text = str(info.value)
    assert "\n" not in text and "password authentication failed" in text
    assert "not-it" not in text and "alice:***@" in text


def test_lost_connection_is_a_one_line_error_and_the_next_call_reconnects(postgres_server, postgres_url):
    with ResultsDB(postgres_url) as database:
        pv = database.program_version_id("proj", "prog", "v1", "{}")
        run_id, _ = database.create_run(pv, None, {}, None, None, "o")
        database.request_configuration(run_id, pv, "a" * 64, {"x": 1}, "T", 0)
        assert postgres_server.end_sessions(make_url(postgres_url).query["application_name"]) == 1
        with pytest.raises(DatabaseError) as info:
            database.claim_next(run_id, "w")
        text = str(info.value)
        assert "\n" not in text and "terminating connection" in text and "server is running" in text
        assert database.claim_next(run_id, "w").config_data == {"x": 1}  # nothing was lost


@pytest.fixture(params=["sqlite-core", "postgresql"])
def core_db(request, tmp_path):
    """A ResultsDB whose statements run through SQLAlchemy Connections (the path of every server)."""
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else str(tmp_path / "c.db")
    database = core_path(ResultsDB(url))
    yield database
    database.close()


def test_insert_that_does_nothing_gives_no_id(core_db):
    """configuration_id's path when another process inserted the same configuration between its SELECT
    and its INSERT ... ON CONFLICT DO NOTHING (PostgreSQL gives no primary key and rowcount -1 then)."""
    pv = core_db.program_version_id("proj", "prog", "v1", "{}")
    values = {"program_version_id": pv, "hash": "a" * 64, "data": {"x": 1}}
    with core_db._tx() as runner:  # white box: the race, without a second process
        first = runner.insert(core_db._ins_config, values)
        again = runner.insert(core_db._ins_config, values)
    assert isinstance(first, int) and again is None
    assert core_db.configuration_id(pv, "a" * 64, {"x": 1}) == first


def test_a_stored_result_wakes_the_listener_of_its_run(postgres_url, tmp_path):
    """LISTEN/NOTIFY: the run loop's wait ends when a worker's result commits, not after its timeout."""
    import threading
    import time

    from tunerlib.db import ResultRecord
    with ResultsDB(postgres_url) as database, ResultsDB(postgres_url) as worker:
        pv = database.program_version_id("proj", "prog", "v1", "{}")
        run_id, _ = database.create_run(pv, None, {}, None, None, "o")
        dr = database.request_configuration(run_id, pv, "a" * 64, {"x": 1}, "T", 0)
        listener = database.listen(run_id)
        try:
            assert listener.wait(0.2) is False  # nothing stored yet: the timeout ends the wait
            threading.Timer(0.5, lambda: worker.complete(dr, ResultRecord("OK", 1.0))).start()
            start = time.monotonic()
            assert listener.wait(60.0) is True
            assert time.monotonic() - start < 30.0
        finally:
            listener.close()
        assert [r.time for r in database.results_after(run_id, 0)] == [1.0]
    with ResultsDB(str(tmp_path / "l.db")) as sqlite_db:
        assert sqlite_db.listen(1) is None  # SQLite cannot notify: the loop polls
