"""The run loop in-process: exhaustion, compile/run split, records, status line, contract errors."""
import io
import sqlite3

import pytest

from tunerlib import (FixedInputManager, MeasurementInterface, MinimizeAttribute, Result, TuningOptions,
                      TuningRun)
from tunerlib.parameters import BooleanParameter, ConfigurationManipulator, IntegerParameter
from tunerlib.engine.progress import StatusLine
from tunerlib.errors import TunerScriptError


class Small(MeasurementInterface):
    """A 3 x 4 x 2 = 24-point space with one known constraint removing 4 points."""

    calls = 0

    def manipulator(self):
        m = ConfigurationManipulator([IntegerParameter("a", 0, 2), IntegerParameter("b", 0, 3),
                                      BooleanParameter("c")])
        m.add_constraint("not (a == 2 and b >= 2)")
        return m

    def objective(self):
        return MinimizeAttribute("v")

    def input_manager(self):
        return FixedInputManager(input_class="tiny", path="/data/in.bin", size=24)

    def compile(self, config_data, id):
        return config_data["a"] * 10 + config_data["b"] + (100 if config_data["c"] else 0)

    def run_precompiled(self, desired_result, input, limit, compile_result, id):
        type(self).calls += 1
        return Result(extra={"v": float(compile_result), "input": input.path})


def _opts(tmp_path, **kw):
    return TuningOptions(database=str(tmp_path / "r.db"), quiet=True, seed=1, **kw)


@pytest.mark.parametrize("technique", ["PureRandom", "GreedyMutationBandit"])
def test_finite_space_is_exhausted_without_a_limit(tmp_path, technique):
    Small.calls = 0
    opts = _opts(tmp_path, technique=[technique], machine_class="laptop")
    summary = TuningRun(Small(opts), opts).run()
    assert summary.stopped_because == "search space exhausted"
    assert summary.tests == 20 == Small.calls          # 24 points minus 4 infeasible, each measured once
    assert summary.best_value == 0.0 and summary.best_configuration == {"a": 0, "b": 0, "c": False}
    con = sqlite3.connect(tmp_path / "r.db")
    assert con.execute("select count(distinct configuration_id) from result").fetchone()[0] == 20
    mc = con.execute("select mc.name from machine m join machine_class mc on mc.id = m.machine_class_id")
    assert mc.fetchone()[0] == "laptop"
    assert con.execute("select count(*) from result where machine_id is null or input_id is null"
                       ).fetchone()[0] == 0
    assert con.execute("select path from input").fetchone()[0] == "/data/in.bin"


def test_default_cap_applies_without_limits(tmp_path, monkeypatch):
    import tunerlib.engine.run as tr
    monkeypatch.setattr(tr, "DEFAULT_TEST_CAP", 7)

    class Wide(Small):
        def manipulator(self):
            return ConfigurationManipulator([IntegerParameter("a", 0, 10 ** 6), IntegerParameter("b", 0, 3),
                                             BooleanParameter("c")])

    opts = _opts(tmp_path)
    summary = TuningRun(Wide(opts), opts).run()
    assert summary.tests == 7 and summary.stopped_because == "test limit reached"


def test_non_json_extra_is_a_contract_error(tmp_path):
    class Bad(Small):
        def run(self, desired_result, input, limit):
            return Result(extra={"v": 1.0, "obj": object()})

    opts = _opts(tmp_path, test_limit=5)
    with pytest.raises(TunerScriptError, match="not JSON-compatible"):
        TuningRun(Bad(opts), opts).run()


def test_status_line_prints_progress():
    out = io.StringIO()
    line = StatusLine(frequency=0.0001, quiet=False, stream=out)
    line.update(5, 1.25, 2, force=True)
    assert "tests      5" in out.getvalue() and "best 1.25" in out.getvalue()
    quiet = io.StringIO()
    StatusLine(frequency=1, quiet=True, stream=quiet).update(5, 1.0, 0, force=True)
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("technique", ["AUCBanditMetaTechniqueA", "AUCBanditMetaTechniqueG"])
def test_bandit_state_is_recorded_and_restored_on_resume(tmp_path, technique):
    class Wide(Small):
        def manipulator(self):
            return ConfigurationManipulator([IntegerParameter("a", 0, 10 ** 6), IntegerParameter("b", 0, 3),
                                             BooleanParameter("c")])

    opts = _opts(tmp_path, test_limit=40, technique=[technique])
    first = TuningRun(Wide(opts), opts)
    first.run()
    saved = first.db.load_technique_state(first.run_id, first.technique.name)
    assert saved["last_result_id"] == first.search.progress.last_result_id
    bandit = saved["state"]["bandit"]
    assert len(bandit["history"]) >= 40 and bandit["C"] == 0.05 and bandit["window"] == 500
    resumed_opts = _opts(tmp_path, test_limit=80, resume=True, technique=[technique])
    again = TuningRun(Wide(resumed_opts), resumed_opts)
    again.prepare()  # the history is replayed exactly, then the bandit proposes the next one live
    assert again.history_replay == "exact" and again.search.progress.outstanding == 1
    replayed = again.technique.state_dict()["bandit"]
    assert replayed["history"][:len(bandit["history"])] == bandit["history"]
    if technique == "AUCBanditMetaTechniqueA":
        # its first live proposal here is a configuration already measured: answered from the
        # database at once, so the bandit records it before the next one goes out
        assert len(replayed["history"]) == len(bandit["history"]) + 1
    summary = TuningRun(Wide(resumed_opts), resumed_opts).run()
    assert summary.tests == 80 and summary.extra["history_replay"] == "exact"


class Ends(Small):
    """Records which end-of-run hook the loop called; ``fail`` makes every result an ERROR."""

    fail = False

    def __init__(self, options):
        super().__init__(options)
        self.ends = []

    def run_precompiled(self, desired_result, input, limit, compile_result, id):
        return Result(state="ERROR") if self.fail else super().run_precompiled(
            desired_result, input, limit, compile_result, id)

    def save_final_config(self, config):
        self.ends.append(("best", config))

    def finish_without_best(self):
        self.ends.append(("none", None))


@pytest.mark.parametrize("fail", [False, True])
def test_exactly_one_end_hook_is_called(tmp_path, fail):
    opts = _opts(tmp_path, technique=["PureRandom"], test_limit=5)
    interface = Ends(opts)
    interface.fail = fail
    summary = TuningRun(interface, opts).run()
    assert summary.tests == 5
    assert interface.ends == ([("none", None)] if fail else [("best", summary.best_configuration)])


@pytest.mark.parametrize("kw, kind", [({}, "SerialExecutor"), ({"parallelism": 2}, "WorkerPool"),
                                      ({"distributed": True}, "RemoteWorkers"),
                                      ({"distributed": True, "parallelism": 2}, "RemoteWorkers")])
def test_every_run_measures_through_an_executor(tmp_path, kw, kind):
    """One loop for every way of measuring: the options choose only the executor."""
    from tunerlib.engine.loop import make_executor
    from tunerlib.interrupts import Interrupts
    opts = _opts(tmp_path, **kw)
    run = TuningRun(Small(opts), opts)
    executor = make_executor(run, Interrupts())
    assert type(executor).__name__ == kind
    assert executor.pulls_requests == (kind != "SerialExecutor")
    if kw.get("distributed") and kw.get("parallelism"):
        assert type(executor.local).__name__ == "WorkerPool" and executor.capacity() >= 2 * (1 + opts.queue_per_worker)
    run.db.close()


@pytest.mark.parametrize("database", ["sqlite", "memory://"])
def test_a_serial_run_writes_each_request_already_claimed(tmp_path, monkeypatch, database):
    """The in-process executor gets every request written RUNNING for it in the request's own transaction
    (``request_and_claim``): nothing is claimed afterwards, and every request ends COMPLETE by ``main``."""
    from tunerlib.db import MemoryStore, ResultsDB
    claims, claimed = [], []
    for store in (ResultsDB, MemoryStore):
        monkeypatch.setattr(store, "claim_next", lambda self, *a, _f=store.claim_next, **k: claims.append(a) or
                            _f(self, *a, **k))
        monkeypatch.setattr(store, "request_and_claim", lambda self, *a, _f=store.request_and_claim, **k:
                            claimed.append(_f(self, *a, **k)) or claimed[-1])
    opts = TuningOptions(database=str(tmp_path / "r.db") if database == "sqlite" else database, quiet=True, seed=1,
                         technique=["PureRandom"], test_limit=8)
    run = TuningRun(Small(opts), opts)
    summary = run.run()
    assert summary.tests == 8 == len(claimed) and claims == []
    assert {(d.state, d.id) for d in run.db.desired_results(run.run_id)} == {("COMPLETE", c.dr_id) for c in claimed}
    assert {place.worker for place in run.db.result_places(run.run_id).values()} == {"main"}
