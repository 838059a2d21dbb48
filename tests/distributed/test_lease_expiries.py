"""A request whose lease expires again and again (each worker measuring it dies: a configuration that
gets its process OOM-killed) is recorded ERROR after MAX_EXPIRIES expiries instead of taking down the
workers one after the other; before that it is measured again, as a worker cut off from the network
loses nothing."""
import time

import tunerlib.executors.leases as distributed
from tunerlib.db import ResultsDB
from tunerlib.executors.leases import MAX_EXPIRIES, RemoteCoordinator


def test_a_request_whose_lease_expired_max_times_is_an_error_and_the_others_go_on(tmp_path, monkeypatch):
    monkeypatch.setattr(distributed, "REQUEUE_EVERY", 0.0)
    db = ResultsDB(str(tmp_path / "l.db"))
    try:
        pv = db.program_version_id("proj", "prog", "v1", '{"x":"int"}')
        run_id, _ = db.create_run(pv, None, {}, 1, None, "MinimizeTime()")
        for i in range(2):
            db.request_configuration(run_id, pv, f"{i:064x}", {"x": i}, "T", 0)
        killer, other = [d.id for d in db.desired_results(run_id)]
        coordinator = RemoteCoordinator(db, run_id, 1)
        later = time.time() + 1000          # every lease below is over by then
        for attempt in range(1, MAX_EXPIRIES + 1):
            assert db.claim_next(run_id, f"worker-{attempt}", lease=30.0).dr_id == killer
            assert coordinator.maintain(now=later) == 1
            state = {d.id: d.state for d in db.desired_results(run_id)}[killer]
            assert state == ("COMPLETE" if attempt == MAX_EXPIRIES else "REQUESTED")
        (result_id, extra), = db.error_results(run_id)
        assert f"expired {MAX_EXPIRIES} times" in extra["error"] and "--parallelism 2" in extra["error"]
        assert db.claim_next(run_id, "worker-9", lease=30.0).dr_id == other
    finally:
        db.close()
