"""The storage contract's check of requests written already claimed (``request_and_claim``: the serial run's
in-process executor), a part of :data:`tunerlib.testing.storage.STORAGE_CHECKS`."""
from __future__ import annotations

from typing import Any

from ..db import ResultRecord

__all__ = ["check_a_request_can_be_written_claimed"]


def check_a_request_can_be_written_claimed(store: Any) -> None:
    """request_and_claim gets or creates the configuration and writes its request RUNNING for the worker in one
    step: the claim holds a copy of the stored configuration (the first one written for a known hash), and
    nothing is queued for other workers."""
    pv = store.program_version_id("proj", "prog", "v1", '{"space": 1}')
    run_id, _ = store.create_run(pv, None, {}, 7, None, "minimize time", "h", 11)
    waiting = store.request_configuration(run_id, pv, "e" * 64, {"x": [1, 2]}, "T", 0)
    data = {"x": [4]}
    new, known = (store.request_and_claim(run_id, pv, h, data, "V", 3, 1.5, "main") for h in ("c" * 64, "e" * 64))
    data["x"].append(5)
    new.config_data["x"].append(6)
    assert (new.run_id, new.config_hash, new.config_data, new.limit, new.requestor, new.generation) == \
        (run_id, "c" * 64, {"x": [4, 6]}, 1.5, "V", 3)
    assert (known.config_hash, known.config_data, known.configuration_id) == \
        ("e" * 64, {"x": [1, 2]}, store.configuration_id(pv, "e" * 64, {}))
    assert store.configuration_id(pv, "c" * 64, {}) == new.configuration_id
    assert [(d.id, d.state, d.requestor, d.generation) for d in store.desired_results(run_id)] == [
        (waiting, "REQUESTED", "T", 0), (new.dr_id, "RUNNING", "V", 3), (known.dr_id, "RUNNING", "V", 3)]
    assert store.running_claims(run_id, "main") == [new.dr_id, known.dr_id]
    store.complete(new.dr_id, ResultRecord("OK", 1.0))
    [row] = store.run_results(run_id)
    assert (row.desired_result_id, row.configuration_id, row.config_data) == (new.dr_id, new.configuration_id,
                                                                             {"x": [4]})

