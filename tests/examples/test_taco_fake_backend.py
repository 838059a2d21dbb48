"""The TACO example with a fake ``taco`` executable (tests/helpers/taco_fakes.py): the taco backend's
argv, temp-folder clean-up and error states, and the isolated worker that measures TACO's kernels
(hangs, crashes, slow start-up)."""
import json
import os
import tempfile
from types import SimpleNamespace

import pytest

from taco_fakes import QUICK, compiler, fake_taco, leftovers, small_problem  # noqa: F401  (compiler: a fixture)

import taco_backends  # noqa: E402  (examples/taco is on the path: taco_fakes put it there)
import taco_isolate  # noqa: E402
import taco_spaces as spaces  # noqa: E402
import taco_tuner  # noqa: E402
from taco_backends import Evaluator  # noqa: E402
from taco_cli import TacoCli  # noqa: E402


@pytest.mark.parametrize("mode, state, phase, fragment", [
    ("valid", "OK", None, None),
    ("abort", "INFEASIBLE", "taco", "SIGABRT"),
    ("garbage", "INFEASIBLE", "compile", "error"),
])
def test_fake_taco_backend(tmp_path, monkeypatch, compiler, mode, state, phase, fragment):
    private = tmp_path / "tmp"              # a temporary folder of this test's own: parallel tests make theirs
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", None)      # gettempdir() reads TMPDIR again
    before = leftovers()
    cli = TacoCli(fake_taco(tmp_path, mode), timeout_s=20)
    cli.check()
    ev = Evaluator("spmv", small_problem("spmv"), "taco", compiler, QUICK, 5.0, cli)
    res = ev.evaluate(spaces.expert_config("spmv"))
    assert res.state == state, res.extra
    if phase:
        assert res.extra["phase"] == phase and fragment in res.extra["error"] and "\n" not in res.extra["error"]
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[0] == "y(i) = A(i,j) * x(j)" and "-f=A:ds" in argv and "-nthreads=32" in argv
    assert "-schedule=static,1" in argv and any(a.startswith("-s=split(i,i0,i1,16)") for a in argv)
    assert leftovers() == before                       # temp folder (and TACO's leftovers) removed


@pytest.mark.parametrize("mode, state, fragment", [("hang", "TIMEOUT", "killed"), ("crash", "ERROR", "SIGSEGV")])
def test_taco_kernels_that_hang_or_crash_do_not_stop_the_run(tmp_path, compiler, monkeypatch, mode, state, fragment):
    """TACO's code has no deadline check: the measurement runs in a worker process that is killed."""
    monkeypatch.setattr(taco_backends, "ISOLATION_SLACK_S", 1.0)
    cli = TacoCli(fake_taco(tmp_path, mode), timeout_s=20)
    ev = Evaluator("spmv", small_problem("spmv"), "taco", compiler, QUICK, 0.2, cli)
    res = ev.evaluate(spaces.expert_config("spmv"))
    assert res.state == state and fragment in res.extra["error"], res.extra
    assert ev.evaluate(spaces.expert_config("spmv")).state == state   # and again: this process is fine
    assert ev._isolated.restarts == 1                                  # on a new worker
    ev.close()


@pytest.mark.parametrize("mode, state, fragment, slack, deadline", [
    ("hang", "TIMEOUT", "killed", 0.2, "1.25 s"),     # deadline 5*0.2 + 0.05 + 0.2 s
    ("crash", "ERROR", "SIGSEGV", 2.0, "3.05 s"),     # room for the crash to be seen on a busy machine
])
def test_isolated_deadline_does_not_include_worker_start_up(tmp_path, compiler, monkeypatch, mode, state, fragment,
                                                            slack, deadline):
    """A worker that takes far longer to start (a loaded machine) than the whole measurement
    deadline: the deadline starts at its "ready", so a crash is still ERROR, a hang still TIMEOUT."""
    monkeypatch.setattr(taco_backends, "ISOLATION_SLACK_S", slack)
    monkeypatch.setattr(taco_isolate, "START_DELAY_S", float(deadline.split()[0]) + 1.0)  # start-up > deadline
    cli = TacoCli(fake_taco(tmp_path, mode), timeout_s=20)
    ev = Evaluator("spmv", small_problem("spmv"), "taco", compiler, QUICK, 0.2, cli)
    for _ in range(2):                                                  # the restarted worker too
        res = ev.evaluate(spaces.expert_config("spmv"))
        assert res.state == state and fragment in res.extra["error"], res.extra
    if mode == "hang":
        assert deadline in res.extra["error"]                          # the deadline, start-up not in it
    ev.close()


def test_isolated_worker_start_up_timeout_and_recovery(tmp_path, compiler, monkeypatch):
    monkeypatch.setattr(taco_isolate, "START_DELAY_S", 60.0)         # never ready within the limit
    monkeypatch.setattr(taco_isolate, "STARTUP_TIMEOUT_S", 0.5)
    cli = TacoCli(fake_taco(tmp_path, "valid"), timeout_s=20)
    ev = Evaluator("spmv", small_problem("spmv"), "taco", compiler, QUICK, 5.0, cli)
    res = ev.evaluate(spaces.expert_config("spmv"))
    assert res.state == "TIMEOUT" and "start-up timed out after 0.5 s" in res.extra["error"], res.extra
    assert ev._isolated.worker.pid is None and ev.counts.timeouts == 1   # the worker was killed
    monkeypatch.setattr(taco_isolate, "START_DELAY_S", 0.0)
    monkeypatch.setattr(taco_isolate, "STARTUP_TIMEOUT_S", 120.0)
    res = ev.evaluate(spaces.expert_config("spmv"))                     # the next worker starts normally
    assert res.state == "OK", res.extra
    assert ev._isolated.restarts == 1
    ev.close()


class _ExitsWhenUnpickled:
    """Stands for a problem whose unpickling kills the worker (start-up dies before "ready")."""

    def __reduce__(self):
        return os._exit, (3,)


def test_isolated_worker_that_dies_during_start_up_is_an_error():
    m = taco_isolate.IsolatedMeasurer(_ExitsWhenUnpickled(), "taco", QUICK, slack_s=1.0)
    kernel = SimpleNamespace(path="never-loaded.so", compile_s=0.0)    # never sent: start-up fails first
    for _ in range(2):
        res = m.measure(kernel, (0, 1, 1), 0.2)
        assert res.state == "ERROR", res.extra
        assert res.extra["error"] == "measurement worker died during start-up (exit status 3)"
    assert m.restarts == 1
    m.close()


def test_fake_taco_timeout_and_end_to_end(tmp_path, capsys):
    cli = TacoCli(fake_taco(tmp_path, "sleep"), timeout_s=0.5)
    with pytest.raises(Exception) as info:
        cli.generate("spmv", spaces.expert_config("spmv"))
    assert "timed out" in str(info.value)
    args = ["--kernel", "spmv", "--backend", "taco", "--taco", fake_taco(tmp_path, "valid"), "--rows", "80",
            "--density", "0.05", "--test-limit", "4", "--database", str(tmp_path / "t.db"), "--quiet",
            "--compare-rounds", "2"]
    assert taco_tuner.TacoTuner.main(args) == 0
    assert "taco backend" in capsys.readouterr().out
