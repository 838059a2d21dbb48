"""The results-storage contract kit, shipped so that a storage backend of one's own can be checked.

Every backend of the storage protocol (:class:`tunerlib.db.ResultsStore`) must pass every check:
``check_storage(lambda: MyStore(...))`` runs them all, each on a fresh, empty store, and raises
ConformanceError naming the first that fails; a pytest suite can parametrize one test per check over
:data:`STORAGE_CHECKS` (tests/db/test_store_contract.py does, for SQLite, PostgreSQL and memory).

The checks cover what the run, its executors and ``--resume`` rely on: identity rows are get-or-create;
runs are created, listed, selected and resumed; requests are claimed oldest first, each once, also by
concurrent handles on one database; the first result of a request wins; unfinished requests are
cancelled and requeued; leases expire unless renewed; values are copies, floats keep double precision,
long text is kept whole; technique state and run artifacts round-trip, apart from each other.
"""
from __future__ import annotations

import contextlib
import math
import threading
import time
from typing import Any, Callable, Iterator, List, Tuple, Type

from ..db import (AlreadyCompleteError, DatabaseError, NotFoundError, ResultPlace, ResultRecord, ResultsStore,
                  open_store)
from . import ConformanceError, storage_claimed

__all__ = ["STORAGE_CHECKS", "check_storage"]


@contextlib.contextmanager
def _raises(error: Type[BaseException]) -> Iterator[None]:
    try:
        yield
    except error:
        return
    raise AssertionError(f"expected {error.__name__}")


def _run(store: Any, label: Any = None, seed: int = 7) -> Tuple[int, int, str]:
    pv = store.program_version_id("proj", "prog", "v1", '{"space": 1}')
    run_id, run_uuid = store.create_run(pv, label, {"technique": ["X"]}, seed, None, "minimize time", "h", 11)
    return pv, run_id, run_uuid


def _requests(store: Any, pv: int, run_id: int, n: int, start: int = 0) -> List[int]:
    return [store.request_configuration(run_id, pv, f"{i:064x}", {"x": i, "l": [i, "a"]}, "T", i, limit=2.0)
            for i in range(start, start + n)]


# ---- identity rows and runs ----------------------------------------------------------------------
def check_protocol(store: Any) -> None:
    """The store is a :class:`~tunerlib.db.ResultsStore` and names itself for messages."""
    assert isinstance(store, ResultsStore) and isinstance(store.display_url, str)


def check_identity_rows_are_get_or_create(store: Any) -> None:
    """Program versions, machines, inputs and configurations are created once and found again."""
    pv = store.program_version_id("p", "q", "1", "{}")
    assert store.program_version_id("p", "q", "1", "{}") == pv
    assert store.program_version_id("p", "q", "1", '{"other": 1}') != pv
    assert store.machine_id("m1") == store.machine_id("m1", "cls", 4) != store.machine_id("m2")
    assert store.input_id(pv, "fixed") == store.input_id(pv, "fixed") != store.input_id(pv, "fixed", "/a")
    assert store.configuration_id(pv, "h" * 64, {"x": 1}) == store.configuration_id(pv, "h" * 64, {"x": 2})


def check_runs_are_selected_and_resumed(store: Any) -> None:
    """runs_of (newest first, by label), uuid prefixes, states, take_run and list_runs."""
    pv, run_id, run_uuid = _run(store, "a")
    _, other, _ = _run(store, "b")
    [newest, oldest] = store.runs_of(pv)
    assert (newest["id"], oldest["id"]) == (other, run_id)
    assert oldest == {"id": run_id, "uuid": run_uuid, "program_version_id": pv, "label": "a", "seed": 7,
                      "state": "RUNNING", "args": {"technique": ["X"]}, "host": "h", "pid": 11, "tests": 0,
                      "requests": 0, "script_version": None}
    assert [r["id"] for r in store.runs_of(pv, "a")] == [run_id] and store.runs_of(pv, "nope") == []
    assert [r["id"] for r in store.runs_with_uuid_prefix(run_uuid[:8])] == [run_id]
    store.set_run_state(run_id, "COMPLETE")
    store.take_run(run_id, "h2", 12, script_version="v2")
    info = store.runs_of(pv, "a")[0]
    assert (info["state"], info["host"], info["pid"], info["script_version"]) == ("RUNNING", "h2", 12, "v2")
    with _raises(ValueError):
        store.set_run_state(run_id, "DONE")
    with _raises(NotFoundError):
        store.set_run_state(run_id + 99, "COMPLETE")
    assert [(r["id"], r["program"], r["project"], r["version"], r["seed"]) for r in store.list_runs()] == \
        [(run_id, "prog", "proj", "v1", 7), (other, "prog", "proj", "v1", 7)]
    assert store.run_export(run_id)["uuid"] == run_uuid


# ---- requests, claims and results ----------------------------------------------------------------
def check_a_configuration_and_its_request_are_written_together(store: Any) -> None:
    """request_configuration gets or creates the configuration and queues a request in one step."""
    pv, run_id, _ = _run(store)
    first = store.request_configuration(run_id, pv, "e" * 64, {"x": [1, 2]}, "T", 0, limit=2.0)
    again = store.request_configuration(run_id, pv, "e" * 64, {"x": "ignored"}, "U", 1)
    other = store.request_configuration(run_id, pv, "d" * 64, {"x": 3}, "T", 2)
    assert [(d.id, d.config_hash, d.requestor, d.generation) for d in store.desired_results(run_id)] == [
        (first, "e" * 64, "T", 0), (again, "e" * 64, "U", 1), (other, "d" * 64, "T", 2)]
    claim = store.claim_next(run_id, "w")
    assert (claim.dr_id, claim.config_data, claim.limit) == (first, {"x": [1, 2]}, 2.0)


def check_claims_are_oldest_first_and_each_once(store: Any) -> None:
    """claim_next hands out the run's requests oldest first, each once, and never another run's."""
    pv, run_id, _ = _run(store)
    _, other_run, _ = _run(store)
    drs = _requests(store, pv, run_id, 3)
    _requests(store, pv, other_run, 1, start=10)
    claims = [store.claim_next(run_id, "w") for _ in range(4)]
    assert [c.dr_id for c in claims[:3]] == drs and claims[3] is None
    assert (claims[0].run_id, claims[0].config_data, claims[0].limit, claims[0].requestor,
            claims[0].generation) == (run_id, {"x": 0, "l": [0, "a"]}, 2.0, "T", 0)
    assert store.running_claims(run_id, "w") == drs and store.running_claims(run_id, "v") == []


def check_the_first_result_wins(store: Any) -> None:
    """complete stores one result per request; a second, an unknown request or a bad state is refused."""
    pv, run_id, _ = _run(store)
    [dr] = _requests(store, pv, run_id, 1)
    store.claim_next(run_id, "w")
    rid = store.complete(dr, ResultRecord("OK", 0.25, 0.9, 3.0, 17.0, {"k": [1, 2]}, 0.01, None, None))
    with _raises(AlreadyCompleteError):
        store.complete(dr, ResultRecord("OK", 1.0))
    with _raises(NotFoundError):
        store.complete(dr + 99, ResultRecord("OK", 1.0))
    with _raises(ValueError):
        store.complete(dr, ResultRecord("FAST", 1.0))
    [row] = store.run_results(run_id)
    assert (row.id, row.desired_result_id, row.state, row.time, row.accuracy, row.energy, row.size, row.extra,
            row.was_new_best, row.requestor, row.collection_cost, row.config_data) == \
        (rid, dr, "OK", 0.25, 0.9, 3.0, 17.0, {"k": [1, 2]}, False, "T", 0.01, {"x": 0, "l": [0, "a"]})
    store.mark_new_best([rid])
    assert store.results_after(run_id, 0)[0].was_new_best and store.results_after(run_id, rid) == []
    assert store.counts_by_state(run_id) == {"OK": 1} and store.runs_of(pv)[0]["tests"] == 1


def check_results_name_their_machine_and_worker(store: Any) -> None:
    """result_places names the machine and worker of the results that have one."""
    pv, run_id, _ = _run(store)
    first, second, third = _requests(store, pv, run_id, 3)
    m1, m2 = store.machine_id("host-a"), store.machine_id("host-b", "cls")
    ids = [store.complete(first, ResultRecord("OK", 1.0, machine_id=m1)),
           store.complete(second, ResultRecord("OK", 1.0, machine_id=m2, worker="host-b:42:w1")),
           store.complete(third, ResultRecord("OK", 2.0, worker="main"))]
    assert store.result_places(run_id) == {ids[0]: ResultPlace("host-a", None, None),
                                           ids[1]: ResultPlace("host-b", "cls", "host-b:42:w1"),
                                           ids[2]: ResultPlace(None, None, "main")}
    assert store.result_places(_run(store)[1]) == {}


def check_unfinished_requests_are_cancelled_and_requeued(store: Any) -> None:
    """cancel_unfinished and requeue_unfinished (oldest first, at most N) for stop and ``--resume``."""
    pv, run_id, _ = _run(store)
    drs = _requests(store, pv, run_id, 4)
    store.claim_next(run_id, "w")
    store.complete(store.claim_next(run_id, "w").dr_id, ResultRecord("OK", 1.0))
    assert store.cancel_unfinished(run_id) == 3 and store.claim_next(run_id, "w") is None
    assert [d.state for d in store.desired_results(run_id)] == ["CANCELLED", "COMPLETE", "CANCELLED", "CANCELLED"]
    assert store.requeue_unfinished(run_id, at_most=2) == 2
    assert [store.claim_next(run_id, "w").dr_id for _ in range(2)] == [drs[0], drs[2]]
    assert store.requeue_unfinished(run_id) == 3 and store.requeue_unfinished(run_id) == 0
    assert [d.id for d in store.desired_results(run_id)] == drs and store.runs_of(pv)[0]["requests"] == 4
    assert store.cancel_unfinished(run_id) == 3
    with _raises(AlreadyCompleteError):   # a cancelled request takes no result
        store.complete(drs[3], ResultRecord("OK", 3.0))


def check_limits_of_waiting_requests_tighten(store: Any) -> None:
    """tighten_limits lowers the limit of waiting requests only."""
    pv, run_id, _ = _run(store)
    drs = _requests(store, pv, run_id, 3)
    store.claim_next(run_id, "w")
    assert store.tighten_limits(run_id, 1.5) == 2 and store.tighten_limits(run_id, 1.8) == 0
    assert [store.claim_next(run_id, "w").limit for _ in drs[1:]] == [1.5, 1.5]


def check_leases_expire_unless_renewed(store: Any) -> None:
    """A leased claim goes back to REQUESTED once its heartbeat is older than its lease; a renewed one
    and one without a lease stay; release gives a claim back; the first result wins over a late one."""
    pv, run_id, _ = _run(store)
    first, second, third = _requests(store, pv, run_id, 3)
    assert store.claim_next(run_id, "gone", lease=0.2).dr_id == first
    assert store.claim_next(run_id, "alive", lease=60.0).dr_id == second
    assert store.claim_next(run_id, "local").dr_id == third
    assert store.beat(run_id, "alive") == 1 and store.beat(run_id, "nobody") == 0
    assert store.requeue_expired(run_id, now=time.time() + 30.0) == [first]
    assert store.running_claims(run_id, "gone") == [] and store.running_claims(run_id, "alive") == [second]
    assert store.beat(run_id, "gone") == 0
    assert store.claim_next(run_id, "other", lease=5.0).dr_id == first
    store.complete(first, ResultRecord("OK", 1.0, worker="other"))
    with _raises(AlreadyCompleteError):
        store.complete(first, ResultRecord("OK", 2.0, worker="gone"))
    assert store.release(second, "other") is False and store.release(second, "alive") is True
    assert store.claim_next(run_id, "x").dr_id == second
    assert [r.time for r in store.run_results(run_id)] == [1.0]


def check_a_resume_leaves_live_leased_claims_with_their_workers(store: Any) -> None:
    """requeue_unfinished leaves a claim whose lease is alive RUNNING (it counts against at_most)."""
    pv, run_id, _ = _run(store)
    drs = _requests(store, pv, run_id, 4)
    live = store.claim_next(run_id, "remote", lease=300.0)
    assert store.claim_next(run_id, "gone", lease=1e-9).dr_id == drs[1]   # over at once
    local = store.claim_next(run_id, "worker-0")
    time.sleep(0.01)
    assert store.requeue_unfinished(run_id, at_most=2) == 1
    assert [(d.id, d.state) for d in store.desired_results(run_id)] == [
        (live.dr_id, "RUNNING"), (drs[1], "REQUESTED"), (local.dr_id, "CANCELLED"), (drs[3], "REQUESTED")]
    store.complete(live.dr_id, ResultRecord("OK", 1.0, worker="remote"))


def check_registered_workers_count_while_alive(store: Any) -> None:
    """register_worker / unregister_worker / live_workers."""
    _, run_id, _ = _run(store)
    assert store.live_workers(run_id) == 0
    store.register_worker(run_id, "h:1:a", None, 30.0)
    store.register_worker(run_id, "h:2:b", None, 30.0)
    assert store.live_workers(run_id) == 2
    store.unregister_worker(run_id, "h:1:a")
    store.beat(run_id, "h:2:b")
    assert store.live_workers(run_id) == 1


def check_values_are_copies(store: Any) -> None:
    """JSON values going in or coming out are never shared with the caller."""
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


def check_floats_keep_double_precision(store: Any) -> None:
    """Limits, values, extras and costs come back bit for bit (also inf and tiny or huge numbers)."""
    pv, run_id, _ = _run(store)
    dr = store.request_configuration(run_id, pv, "f" * 64, {"x": 0.1 + 0.2}, "T", 0, limit=1 / 3)
    store.tighten_limits(run_id, 2 / 7)
    claim = store.claim_next(run_id, "w")
    assert (claim.limit, claim.config_data) == (2 / 7, {"x": 0.1 + 0.2})
    store.complete(dr, ResultRecord("OK", 0.1 + 0.2, 1e-300, math.inf, -1.5e300, {"v": 1 / 3}, 1 / 9))
    [row] = store.run_results(run_id)
    assert (row.time, row.accuracy, row.energy, row.size, row.extra, row.collection_cost) == \
        (0.1 + 0.2, 1e-300, math.inf, -1.5e300, {"v": 1 / 3}, 1 / 9)


def check_long_text_is_stored_whole(store: Any) -> None:
    """Generated technique names (hundreds of characters) and users' labels are never cut or refused."""
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


def check_technique_state_round_trips(store: Any) -> None:
    """save_technique_state replaces, load_technique_state returns the latest or None."""
    _, run_id, _ = _run(store)
    assert store.load_technique_state(run_id, "A") is None
    store.save_technique_state(run_id, "A", {"k": [1]})
    store.save_technique_state(run_id, "A", {"k": [2]})
    assert store.load_technique_state(run_id, "A") == {"k": [2]}


def check_run_artifacts_round_trip(store: Any) -> None:
    """save_run_artifact replaces (None removes), load_run_artifact returns the latest or None; artifacts
    and technique state are apart even under one name."""
    _, run_id, _ = _run(store)
    _, other, _ = _run(store)
    assert store.load_run_artifact(run_id, "final_config") is None
    store.save_run_artifact(run_id, "final_config", {"text": "a"})
    store.save_run_artifact(run_id, "final_config", {"text": "b"})
    store.save_technique_state(run_id, "final_config", {"k": 1})
    assert store.load_run_artifact(run_id, "final_config") == {"text": "b"}
    assert store.load_technique_state(run_id, "final_config") == {"k": 1}
    assert store.load_run_artifact(other, "final_config") is None
    store.save_run_artifact(run_id, "final_config", None)
    store.save_run_artifact(other, "final_best", None)
    assert store.load_run_artifact(run_id, "final_config") is None


def check_concurrent_handles_claim_each_request_once(store: Any, threads: int = 4, requests: int = 40) -> None:
    """Handles opened on ``worker_url()`` (one per thread, as worker processes do) see the run and claim
    every request exactly once between them; a store that is not shared refuses ``worker_url`` with a
    DatabaseError."""
    try:
        url = store.worker_url()
    except DatabaseError:
        return
    pv, run_id, _ = _run(store)
    drs = _requests(store, pv, run_id, requests)
    claimed: List[List[int]] = [[] for _ in range(threads)]
    errors: List[BaseException] = []

    def claim_all(slot: int) -> None:
        try:
            handle = open_store(url)
            try:
                while (claim := handle.claim_next(run_id, f"w{slot}")) is not None:
                    claimed[slot].append(claim.dr_id)
                    handle.complete(claim.dr_id, ResultRecord("OK", float(claim.dr_id), worker=f"w{slot}"))
            finally:
                handle.close()
        except BaseException as exc:  # reported below, in the calling thread
            errors.append(exc)

    workers = [threading.Thread(target=claim_all, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors, f"a handle failed: {errors[0]!r}"
    assert sorted(d for slot in claimed for d in slot) == drs
    assert sorted(r.desired_result_id for r in store.run_results(run_id)) == drs


STORAGE_CHECKS: Tuple[Callable[[Any], None], ...] = (
    check_protocol, check_identity_rows_are_get_or_create, check_runs_are_selected_and_resumed,
    check_a_configuration_and_its_request_are_written_together, check_claims_are_oldest_first_and_each_once,
    check_the_first_result_wins, check_results_name_their_machine_and_worker,
    check_unfinished_requests_are_cancelled_and_requeued, check_limits_of_waiting_requests_tighten,
    check_leases_expire_unless_renewed, check_a_resume_leaves_live_leased_claims_with_their_workers,
    check_registered_workers_count_while_alive, check_values_are_copies, check_floats_keep_double_precision,
    check_long_text_is_stored_whole, check_technique_state_round_trips, check_run_artifacts_round_trip,
    check_concurrent_handles_claim_each_request_once, storage_claimed.check_a_request_can_be_written_claimed)


def check_storage(make_store: Callable[[], Any]) -> None:
    """Run every check of :data:`STORAGE_CHECKS`, each on a fresh store from ``make_store`` (closed
    afterwards); raises ConformanceError naming the first check that fails."""
    for check in STORAGE_CHECKS:
        store = make_store()
        try:
            check(store)
        except AssertionError as exc:
            raise ConformanceError(f"storage contract: {check.__name__}: {exc or 'assertion failed'}") from exc
        finally:
            store.close()
