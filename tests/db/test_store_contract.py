"""The ResultsStore contract, run against every backend: the SQLAlchemy store on SQLite (its fast path
and its SQLAlchemy-Connection path), on a real PostgreSQL server (tests/helpers/pg.py; skipped where
PostgreSQL or psycopg is missing) and the in-memory store."""
import math
import time

import pytest

from tunerlib.db import (AlreadyCompleteError, DatabaseError, MemoryStore, NotFoundError, ResultPlace, ResultRecord,
                         ResultsDB, ResultsStore, open_store)

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


def _run(store, label=None, seed=7):
    pv = store.program_version_id("proj", "prog", "v1", '{"space": 1}')
    run_id, run_uuid = store.create_run(pv, label, {"technique": ["X"]}, seed, None, "minimize time", "h", 11)
    return pv, run_id, run_uuid


def _requests(store, pv, run_id, n, start=0):
    return [store.request_configuration(run_id, pv, f"{i:064x}", {"x": i, "l": [i, "a"]}, "T", i,
                                        limit=2.0) for i in range(start, start + n)]


def _pending(store, run_id):
    return sum(d.state in ("REQUESTED", "RUNNING") for d in store.desired_results(run_id))


def test_backends_satisfy_the_protocol(store):
    assert isinstance(store, ResultsStore)
    assert isinstance(open_store("memory://"), MemoryStore)


def test_identity_rows_are_get_or_create(store):
    pv = store.program_version_id("p", "q", "1", "{}")
    assert store.program_version_id("p", "q", "1", "{}") == pv
    assert store.program_version_id("p", "q", "1", '{"other": 1}') != pv
    assert store.machine_id("m1") == store.machine_id("m1", "cls", 4) != store.machine_id("m2")
    assert store.input_id(pv, "fixed") == store.input_id(pv, "fixed") != store.input_id(pv, "fixed", "/a")
    assert store.configuration_id(pv, "h" * 64, {"x": 1}) == store.configuration_id(pv, "h" * 64, {"x": 2})


def test_a_configuration_and_its_request_are_written_together(store):
    pv, run_id, _ = _run(store)
    first = store.request_configuration(run_id, pv, "e" * 64, {"x": [1, 2]}, "T", 0, limit=2.0)
    again = store.request_configuration(run_id, pv, "e" * 64, {"x": "ignored"}, "U", 1)   # known configuration
    other = store.request_configuration(run_id, pv, "d" * 64, {"x": 3}, "T", 2)
    rows = store.desired_results(run_id)
    assert [(d.id, d.config_hash, d.requestor, d.generation) for d in rows] == [
        (first, "e" * 64, "T", 0), (again, "e" * 64, "U", 1), (other, "d" * 64, "T", 2)]
    assert store.configuration_id(pv, "e" * 64, None) != store.configuration_id(pv, "d" * 64, None)
    claim = store.claim_next(run_id, "w")
    assert (claim.dr_id, claim.config_data, claim.limit) == (first, {"x": [1, 2]}, 2.0)


def test_runs_selection_and_states(store):
    pv, run_id, run_uuid = _run(store, "a")
    _, other, _ = _run(store, "b")
    [newest, oldest] = store.runs_of(pv)
    assert (newest["id"], oldest["id"]) == (other, run_id)
    assert oldest == {"id": run_id, "uuid": run_uuid, "program_version_id": pv, "label": "a", "seed": 7,
                      "state": "RUNNING", "args": {"technique": ["X"]}, "host": "h", "pid": 11, "tests": 0,
                      "requests": 0, "script_version": None}
    assert [r["id"] for r in store.runs_of(pv, "a")] == [run_id]
    assert [r["id"] for r in store.runs_with_uuid_prefix(run_uuid[:8])] == [run_id]
    store.set_run_state(run_id, "COMPLETE")
    store.take_run(run_id, "h2", 12, script_version="v2")
    info = store.runs_of(pv, "a")[0]
    assert (info["state"], info["host"], info["pid"], info["script_version"]) == ("RUNNING", "h2", 12, "v2")
    with pytest.raises(ValueError):
        store.set_run_state(run_id, "DONE")
    with pytest.raises(NotFoundError):
        store.set_run_state(run_id + 99, "COMPLETE")
    listed = store.list_runs()
    assert [(r["id"], r["program"], r["project"], r["version"], r["seed"]) for r in listed] == \
        [(run_id, "prog", "proj", "v1", 7), (other, "prog", "proj", "v1", 7)]


def test_claims_are_oldest_first_and_each_once(store):
    pv, run_id, _ = _run(store)
    _, other_run, _ = _run(store)
    drs = _requests(store, pv, run_id, 3)
    _requests(store, pv, other_run, 1, start=10)
    claims = [store.claim_next(run_id, "w") for _ in range(4)]
    assert [c.dr_id for c in claims[:3]] == drs and claims[3] is None
    first = claims[0]
    assert (first.run_id, first.config_data, first.limit, first.requestor, first.generation) == \
        (run_id, {"x": 0, "l": [0, "a"]}, 2.0, "T", 0)
    assert store.running_claims(run_id, "w") == drs and store.running_claims(run_id, "v") == []


def test_complete_stores_one_result_and_refuses_twice(store):
    pv, run_id, _ = _run(store)
    [dr] = _requests(store, pv, run_id, 1)
    store.claim_next(run_id, "w")
    record = ResultRecord("OK", 0.25, 0.9, 3.0, 17.0, {"k": [1, 2]}, 0.01, None, None)
    rid = store.complete(dr, record)
    with pytest.raises(DatabaseError):
        store.complete(dr, ResultRecord("OK", 1.0))
    with pytest.raises(NotFoundError):
        store.complete(dr + 99, ResultRecord("OK", 1.0))
    with pytest.raises(ValueError):
        store.complete(dr, ResultRecord("FAST", 1.0))
    [row] = store.run_results(run_id)
    assert (row.id, row.desired_result_id, row.state, row.time, row.accuracy, row.energy, row.size, row.extra,
            row.was_new_best, row.requestor, row.collection_cost, row.config_data) == \
        (rid, dr, "OK", 0.25, 0.9, 3.0, 17.0, {"k": [1, 2]}, False, "T", 0.01, {"x": 0, "l": [0, "a"]})
    store.mark_new_best([rid])
    assert store.results_after(run_id, 0)[0].was_new_best and store.results_after(run_id, rid) == []
    assert store.counts_by_state(run_id) == {"OK": 1}
    assert store.runs_of(pv)[0]["tests"] == 1


def test_results_name_the_machine_that_measured_them(store):
    pv, run_id, _ = _run(store)
    first, second, third = _requests(store, pv, run_id, 3)
    m1, m2 = store.machine_id("host-a"), store.machine_id("host-b", "cls")
    ids = [store.complete(dr, ResultRecord("OK", 1.0, machine_id=m)) for dr, m in
           ((first, m1), (second, m2), (third, None))]
    assert store.result_places(run_id) == {ids[0]: ResultPlace("host-a", None, None),
                                           ids[1]: ResultPlace("host-b", "cls", None)}
    _, other, _ = _run(store)
    assert store.result_places(other) == {}


def test_results_name_the_worker_that_measured_them(store):
    pv, run_id, _ = _run(store)
    first, second = _requests(store, pv, run_id, 2)
    m = store.machine_id("host-c", "gpu-farm")
    ids = [store.complete(first, ResultRecord("OK", 1.0, machine_id=m, worker="host-c:42:w1")),
           store.complete(second, ResultRecord("OK", 2.0, worker="main"))]
    assert store.result_places(run_id) == {ids[0]: ResultPlace("host-c", "gpu-farm", "host-c:42:w1"),
                                           ids[1]: ResultPlace(None, None, "main")}


def test_values_are_not_shared_with_the_caller(store):
    pv, run_id, _ = _run(store)
    data = {"x": [1, 2]}
    store.request_configuration(run_id, pv, "a" * 64, data, "T", 0)
    data["x"].append(3)
    claim = store.claim_next(run_id, "w")
    assert claim.config_data == {"x": [1, 2]}
    claim.config_data["x"].append(9)
    extra = {"e": 1}
    store.complete(claim.dr_id, ResultRecord("ERROR", extra=extra))
    extra["e"] = 2
    assert store.error_results(run_id) == [(store.run_results(run_id)[0].id, {"e": 1})]
    assert store.run_results(run_id)[0].config_data == {"x": [1, 2]}


def test_unfinished_requests_are_cancelled_and_requeued_oldest_first(store):
    pv, run_id, _ = _run(store)
    drs = _requests(store, pv, run_id, 4)
    store.claim_next(run_id, "w")
    store.complete(store.claim_next(run_id, "w").dr_id, ResultRecord("OK", 1.0))
    assert store.cancel_unfinished(run_id) == 3
    assert [d.state for d in store.desired_results(run_id)] == ["CANCELLED", "COMPLETE", "CANCELLED", "CANCELLED"]
    assert store.claim_next(run_id, "w") is None
    assert store.requeue_unfinished(run_id, at_most=2) == 2
    assert [d.state for d in store.desired_results(run_id)] == ["REQUESTED", "COMPLETE", "REQUESTED", "CANCELLED"]
    assert [store.claim_next(run_id, "w").dr_id for _ in range(2)] == [drs[0], drs[2]]
    assert store.claim_next(run_id, "w") is None
    assert store.requeue_unfinished(run_id) == 3  # the two RUNNING and the CANCELLED one
    assert [d.id for d in store.desired_results(run_id)] == drs
    assert store.runs_of(pv)[0]["requests"] == 4


def test_a_resumed_run_leaves_live_leased_claims_with_their_workers(store):
    """A run killed while a remote worker measured: on --resume, the worker's claim (lease still alive)
    stays RUNNING and counts against the cap; a claim without a lease or with an expired one goes back."""
    pv, run_id, _ = _run(store)
    drs = _requests(store, pv, run_id, 4)
    live = store.claim_next(run_id, "remote", lease=300.0)
    expired = store.claim_next(run_id, "gone", lease=300.0)
    local = store.claim_next(run_id, "worker-0")
    assert store.requeue_expired(run_id, now=time.time() + 1000) == [live.dr_id, expired.dr_id]
    store.claim_next(run_id, "remote", lease=300.0)                    # claimed again: drs[0] live
    assert store.claim_next(run_id, "gone", lease=1e-9).dr_id == drs[1]  # this lease is over at once
    time.sleep(0.01)
    assert store.requeue_unfinished(run_id, at_most=2) == 1           # 2 minus the live claim
    states = [(d.id, d.state) for d in store.desired_results(run_id)]
    assert states == [(drs[0], "RUNNING"), (drs[1], "REQUESTED"), (local.dr_id, "CANCELLED"), (drs[3], "REQUESTED")]
    store.complete(drs[0], ResultRecord("OK", 1.0, worker="remote"))  # the worker's result is kept


def test_limits_of_waiting_requests_tighten(store):
    pv, run_id, _ = _run(store)
    drs = _requests(store, pv, run_id, 3)
    store.claim_next(run_id, "w")
    assert store.tighten_limits(run_id, 1.5) == 2
    assert store.tighten_limits(run_id, 1.8) == 0
    assert [store.claim_next(run_id, "w").limit for _ in drs[1:]] == [1.5, 1.5]


def test_floats_keep_double_precision(store):
    pv, run_id, _ = _run(store)
    dr = store.request_configuration(run_id, pv, "f" * 64, {"x": 0.1 + 0.2}, "T", 0, limit=1 / 3)
    store.tighten_limits(run_id, 2 / 7)
    claim = store.claim_next(run_id, "w")
    assert (claim.limit, claim.config_data) == (2 / 7, {"x": 0.1 + 0.2})
    store.complete(dr, ResultRecord("OK", 0.1 + 0.2, 1e-300, math.inf, -1.5e300, {"v": 1 / 3}, 1 / 9))
    [row] = store.run_results(run_id)
    assert (row.time, row.accuracy, row.energy, row.size, row.extra, row.collection_cost) == \
        (0.1 + 0.2, 1e-300, math.inf, -1.5e300, {"v": 1 / 3}, 1 / 9)


def test_technique_state_round_trip(store):
    _, run_id, _ = _run(store)
    assert store.load_technique_state(run_id, "A") is None
    store.save_technique_state(run_id, "A", {"k": [1]})
    store.save_technique_state(run_id, "A", {"k": [2]})
    assert store.load_technique_state(run_id, "A") == {"k": [2]}


def test_long_names_and_labels_are_stored_whole(store):
    """Generated technique names run to hundreds of characters (a bandit's requestor is its path), and
    labels, workers and program names are the user's text: no backend may cut or refuse them."""
    name = "GreedyComposableTechnique;crossover_rate,0.5|" + "|".join(f"k{i};op3_swarm;[[]]" for i in range(40))
    long = "é" * 300
    pv = store.program_version_id(long, long, long, "{}")
    run_id, _ = store.create_run(pv, long, {}, None, store.machine_id(long, long), "o", long)
    dr = store.request_configuration(run_id, pv, "c" * 64, {}, f"AUCBanditMetaTechnique/{name}", 0)
    claim = store.claim_next(run_id, long)
    assert (claim.dr_id, claim.requestor) == (dr, f"AUCBanditMetaTechnique/{name}")
    assert store.running_claims(run_id, long) == [dr]
    store.save_technique_state(run_id, name, {"k": 1})
    assert store.load_technique_state(run_id, name) == {"k": 1}
    [info] = store.runs_of(pv, long)
    assert (info["label"], info["host"]) == (long, long) and len(name) > 600
    assert store.input_id(pv, long, long) == store.input_id(pv, long, long)


def test_worker_url(store):
    if isinstance(store, MemoryStore):
        with pytest.raises(DatabaseError, match="need a database"):
            store.worker_url()
    else:  # a worker process opening the URL sees (and claims from) the same database
        pv, run_id, run_uuid = _run(store)
        [dr] = _requests(store, pv, run_id, 1)
        with ResultsDB(store.worker_url()) as worker:
            assert [r["uuid"] for r in worker.runs_of(pv)] == [run_uuid]
            assert worker.claim_next(run_id, "w").dr_id == dr
        assert store.running_claims(run_id, "w") == [dr]


def test_runs_of_version_and_label_newest_first(store):
    pv = store.program_version_id("proj", "prog", "v1", "{}")
    pv2 = store.program_version_id("proj", "prog", "v2", "{}")
    assert store.runs_of(pv) == []
    a, _ = store.create_run(pv, "x", {}, None, None, "o")
    b, _ = store.create_run(pv, None, {}, None, None, "o")
    c, _ = store.create_run(pv2, "x", {}, None, None, "o")
    assert [r["id"] for r in store.runs_of(pv)] == [b, a]
    assert [r["id"] for r in store.runs_of(pv, "x")] == [a]
    assert [r["id"] for r in store.runs_of(pv2)] == [c]
    assert store.runs_of(pv, "nope") == []


def test_cancel_and_requeue(store):
    pv, run_id, _ = _run(store)
    drs = _requests(store, pv, run_id, 5)
    claimed = [store.claim_next(run_id, "w").dr_id for _ in range(2)]
    assert _pending(store, run_id) == 5
    assert store.requeue_unfinished(run_id) == 2
    assert store.requeue_unfinished(run_id) == 0
    assert store.claim_next(run_id, "w2").dr_id == claimed[0]  # requeued rows are claimable again
    assert store.cancel_unfinished(run_id) == 5
    assert _pending(store, run_id) == 0
    assert {d.state for d in store.desired_results(run_id)} == {"CANCELLED"} and len(drs) == 5


def test_leased_claims_expire_unless_renewed_and_the_first_result_wins(store):
    """Distributed measurement (tunerlib.db.leases): a claim with a lease goes back to REQUESTED once its
    heartbeat is older than the lease; a renewed one stays; claims without a lease never expire; a
    late result of the first claimant is refused once another worker's result is in."""
    pv, run_id, _ = _run(store)
    first, second, third = _requests(store, pv, run_id, 3)
    assert store.claim_next(run_id, "gone", lease=0.2).dr_id == first
    assert store.claim_next(run_id, "alive", lease=60.0).dr_id == second
    assert store.claim_next(run_id, "local").dr_id == third  # no lease: the run's own process
    assert store.beat(run_id, "alive") == 1 and store.beat(run_id, "nobody") == 0
    time.sleep(0.5)
    assert store.requeue_expired(run_id) == [first]
    assert store.requeue_expired(run_id, now=time.time() + 30.0) == []  # renewed: within its lease
    assert store.running_claims(run_id, "gone") == [] and store.running_claims(run_id, "alive") == [second]
    assert store.beat(run_id, "gone") == 0  # the claim is no longer its own
    again = store.claim_next(run_id, "other", lease=5.0)
    assert again.dr_id == first
    store.complete(first, ResultRecord("OK", 1.0, worker="other"))
    with pytest.raises(AlreadyCompleteError):  # the first claimant came back: its result is refused
        store.complete(first, ResultRecord("OK", 2.0, worker="gone"))
    assert store.release(second, "other") is False and store.release(second, "alive") is True
    assert store.claim_next(run_id, "x").dr_id == second
    store.cancel_unfinished(run_id)
    with pytest.raises(AlreadyCompleteError):  # the run stopped: a cancelled request takes no result
        store.complete(third, ResultRecord("OK", 3.0))
    assert [r.time for r in store.run_results(run_id)] == [1.0]


def test_registered_workers_count_while_alive(store):
    _, run_id, _ = _run(store)
    assert store.live_workers(run_id) == 0
    store.register_worker(run_id, "h:1:a", None, 30.0)
    store.register_worker(run_id, "h:2:b", None, 30.0)
    assert store.live_workers(run_id) == 2
    store.unregister_worker(run_id, "h:1:a")
    assert store.live_workers(run_id) == 1
    store.beat(run_id, "h:2:b")
    assert store.live_workers(run_id) == 1
