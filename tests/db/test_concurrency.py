"""Multi-process tests of tunerlib.db: atomic claims, race-safe creation, durability after SIGKILL, fork.
Claims and creation also run against a real PostgreSQL server (tests/helpers/pg.py)."""
import multiprocessing
import os
import signal
import time

import pytest
from sqlalchemy import text

from tunerlib.db import ResultsDB, ResultRecord
from tunerlib.db.migrations import open_engine

from kit import pending_count

# Fresh processes that share nothing with the test process (no inherited connection or engine): a fork
# server started without them forks each one, with tunerlib.db imported once instead of per process.
SPAWN = multiprocessing.get_context("forkserver")
SPAWN.set_forkserver_preload(["tunerlib.db"])
WORKERS = 4
ROWS = 200


@pytest.fixture(params=["sqlite", "postgresql"])
def new_url(request, tmp_path):
    """Where a new database goes: a SQLite file in a folder not yet created, or an empty PostgreSQL one."""
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_url")
    return str(tmp_path / "fresh" / "new.db")


def _count(url, table):
    engine, _ = open_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text(f"SELECT count(*) FROM {table}")).scalar()
    finally:
        engine.dispose()


def _setup_run(path, rows):
    db = ResultsDB(path)
    pv = db.program_version_id("proj", "prog", "v1", '{"x":"int"}')
    run_id, _ = db.create_run(pv, None, {}, 1, None, "MinimizeTime()")
    for i in range(rows):
        db.request_configuration(run_id, pv, f"{i:064x}", {"x": i}, "T", 0)
    db.close()
    return run_id


def _claim_worker(path, run_id, name, start, out, ready):
    """Claim (and complete) until nothing is left; report the claimed desired-result ids."""
    db = ResultsDB(path)
    ready.put(name)        # imported and connected: the parent starts everyone at once
    start.wait(30)
    claimed = []
    try:
        while (claim := db.claim_next(run_id, name)) is not None:
            claimed.append(claim.dr_id)
            time.sleep(0.0005)  # a little "measurement" so that the workers overlap
            db.complete(claim.dr_id, ResultRecord("OK", 0.001, extra={"worker": name}))
    except Exception as exc:  # reported at once: the parent would wait 120 s for a dead worker
        claimed.append(f"{type(exc).__name__}: {exc}")
    db.close()
    out.put((name, claimed))


def _ready_claim_workers(path, run_id):
    """WORKERS spawned claim workers, imported and waiting for ``start``: (procs, start, out)."""
    start, out, ready = SPAWN.Event(), SPAWN.Queue(), SPAWN.Queue()
    procs = [SPAWN.Process(target=_claim_worker, args=(path, run_id, f"w{i}", start, out, ready))
             for i in range(WORKERS)]
    for p in procs:
        p.start()
    for _ in procs:        # spawned workers import slowly on a loaded machine: wait for all
        ready.get(timeout=120)
    return procs, start, out


def test_every_row_claimed_exactly_once_by_concurrent_processes(new_url):
    path = new_url
    run_id = _setup_run(path, ROWS)
    procs, start, out = _ready_claim_workers(path, run_id)
    start.set()
    reports = dict(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    claimed = [dr for ids in reports.values() for dr in ids]
    db = ResultsDB(path)
    everything = [d.id for d in db.desired_results(run_id)]
    assert len(claimed) == ROWS and sorted(claimed) == everything  # each row once, none lost
    assert sum(1 for ids in reports.values() if ids) >= 2  # the claims really were concurrent
    assert pending_count(db, run_id) == 0 and db.counts_by_state(run_id) == {"OK": ROWS}
    by_worker = {r.desired_result_id: r.extra["worker"] for r in db.run_results(run_id)}
    assert all(by_worker[dr] == name for name, ids in reports.items() for dr in ids)
    db.close()


def _open_worker(path, start, out, ready):
    ready.put(True)  # imported: the parent starts everyone at once
    start.wait(30)
    try:
        with ResultsDB(path) as db:
            pv = db.program_version_id("proj", "prog", "v1", "{}")
            cfg = db.configuration_id(pv, "f" * 64, {"x": 1})
            out.put((pv, cfg, db.machine_id("host", "cls", 2)))
    except Exception as exc:  # reported at once: the parent would wait 120 s for a dead worker
        out.put(f"{type(exc).__name__}: {exc}")


def test_concurrent_creation_and_get_or_create_agree(new_url):
    path = new_url
    start, out, ready = SPAWN.Event(), SPAWN.Queue(), SPAWN.Queue()
    procs = [SPAWN.Process(target=_open_worker, args=(path, start, out, ready)) for _ in range(WORKERS)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=120)
    start.set()
    answers = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert len(set(answers)) == 1
    assert _count(path, "tunerlib_meta") == 1 and _count(path, "configuration") == 1


def _complete_forever(path, run_id, out):
    """Complete results one by one, reporting each id after complete() returned; never exits."""
    db = ResultsDB(path)
    while (claim := db.claim_next(run_id, "doomed")) is not None:
        out.put(db.complete(claim.dr_id, ResultRecord("OK", 0.5, extra={"i": claim.dr_id})))
    out.put(None)
    time.sleep(600)


def test_completed_results_survive_sigkill(tmp_path):
    path = str(tmp_path / "durable.db")
    run_id = _setup_run(path, 5000)
    out = SPAWN.Queue()
    child = SPAWN.Process(target=_complete_forever, args=(path, run_id, out))
    child.start()
    reported = [out.get(timeout=120) for _ in range(50)]  # ids returned by complete() in the child
    os.kill(child.pid, signal.SIGKILL)  # while it keeps completing more
    child.join(30)
    assert child.exitcode == -signal.SIGKILL
    db = ResultsDB(path)  # a fresh process-level view after the crash
    rows = db.results_after(run_id, 0)
    seen = {r.id for r in rows}
    assert set(reported) <= seen
    # atomic complete(): every stored result's desired result is COMPLETE and points at it, and vice versa
    desired = {d.id: d for d in db.desired_results(run_id)}
    assert all(desired[r.desired_result_id].result_id == r.id for r in rows)
    assert sum(d.state == "COMPLETE" for d in desired.values()) == len(rows)
    assert db.requeue_unfinished(run_id) <= 1  # the claim in flight at the kill, if any, can be resumed
    assert pending_count(db, run_id) == 5000 - len(rows)
    db.close()


def test_instance_inherited_through_fork_reconnects_and_parent_keeps_working(tmp_path):
    path = str(tmp_path / "fork.db")
    run_id = _setup_run(path, 10)
    db = ResultsDB(path)
    first = db.claim_next(run_id, "parent")  # the parent holds an open connection when it forks
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()

    def child():
        claim = db.claim_next(run_id, "child")
        out.put(db.complete(claim.dr_id, ResultRecord("OK", 1.0)))

    proc = ctx.Process(target=child)
    proc.start()
    child_result = out.get(timeout=60)
    proc.join(30)
    assert proc.exitcode == 0
    parent_result = db.complete(first.dr_id, ResultRecord("OK", 2.0))
    assert {r.id for r in db.results_after(run_id, 0)} == {child_result, parent_result}
    assert db.claim_next(run_id, "parent") is not None
    db.close()


@pytest.mark.parametrize("method", ["dispose"])
def test_dispose_then_keep_using(tmp_path, method):
    path = str(tmp_path / "d.db")
    run_id = _setup_run(path, 2)
    db = ResultsDB(path)
    assert db.claim_next(run_id, "a") is not None
    getattr(db, method)()
    assert db.claim_next(run_id, "a") is not None
    db.close()


def test_a_poller_sees_every_result_of_concurrent_workers(new_url):
    """The search driver polls ``results_after(last id seen)`` while workers complete at once: it must
    see every result (PostgreSQL draws ids before commit; results of a run commit in id order)."""
    path = new_url
    run_id = _setup_run(path, ROWS)
    procs, start, out = _ready_claim_workers(path, run_id)
    db = ResultsDB(path)
    seen, last = [], 0
    start.set()
    deadline = time.monotonic() + 120  # a missed result would keep this loop waiting to the end
    while len(seen) < ROWS and time.monotonic() < deadline:
        rows = db.results_after(run_id, last)
        seen += [r.id for r in rows]
        last = max([last] + [r.id for r in rows])
    for _ in procs:
        out.get(timeout=120)
    for p in procs:
        p.join(30)
    assert sorted(seen) == sorted(r.id for r in db.run_results(run_id)) and len(seen) == ROWS
    db.close()
