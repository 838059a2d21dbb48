"""The zygote (tests/helpers/zygote.py) starts a command as a new interpreter would: the tests that use it
for tuner processes rely on each point checked here, against a real ``python SCRIPT`` of the same script."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import zygote

pytestmark = pytest.mark.skipif(os.environ.get("TUNERLIB_TEST_ZYGOTE") == "0",
                                reason="TUNERLIB_TEST_ZYGOTE=0: every command starts a new interpreter")

PROBE = textwrap.dedent("""
    import json, os, sys
    mode = sys.argv[1]
    print(json.dumps({"argv": sys.argv, "path0": sys.path[0], "cwd": os.getcwd(),
                      "env": os.environ.get("ZYGOTE_PROBE"), "session": os.getsid(0) == os.getpid(),
                      "name": __name__, "tty": sys.stdout.isatty()}))
    sys.stdout.flush()
    if mode == "exit":
        sys.exit(7)
    if mode == "message":
        sys.exit("a one-line error")
    if mode == "raise":
        raise ValueError("boom")
    if mode == "interrupt":
        raise KeyboardInterrupt
    if mode == "atexit":
        import atexit
        atexit.register(lambda: print("atexit ran"))
    if mode == "stdin":
        print(sys.stdin.read().upper())
""")


@pytest.fixture
def probe(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    return script


def _both(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 60)
    return subprocess.run(args, **kw), zygote.run(args, **kw)


@pytest.mark.parametrize("mode", ["ok", "exit", "message", "raise", "interrupt", "atexit"])
def test_a_zygote_child_ends_as_a_new_interpreter_does(probe, tmp_path, mode):
    env = {**os.environ, "ZYGOTE_PROBE": mode}
    fresh, child = _both([sys.executable, str(probe), mode], cwd=tmp_path, env=env, start_new_session=True)
    assert isinstance(child, subprocess.CompletedProcess)
    assert child.returncode == fresh.returncode
    assert child.stdout == fresh.stdout
    assert child.stderr.splitlines()[-1:] == fresh.stderr.splitlines()[-1:]
    if mode == "interrupt":
        assert child.returncode == -signal.SIGINT


def test_module_runs_and_stdin_reach_the_child(probe, tmp_path):
    fresh, child = _both([sys.executable, "-m", "tunerlib.cli", "--no-such-option"])
    assert (child.returncode, child.stderr) == (fresh.returncode, fresh.stderr)
    fresh, child = _both([sys.executable, str(probe), "stdin"], input="hello")
    assert child.stdout == fresh.stdout and child.stdout.endswith("HELLO\n")


def test_a_signal_reaches_the_child_and_its_status_is_a_popen_status(probe, tmp_path):
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text("import time\nprint('up', flush=True)\ntime.sleep(60)\n")
    proc = zygote.popen([sys.executable, str(sleeper)], stdout=subprocess.PIPE, start_new_session=True)
    assert isinstance(proc, zygote.ZygoteProcess)
    assert proc.stdout.readline() == b"up\n" and proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0.1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == -signal.SIGTERM


def test_what_a_zygote_child_cannot_be_goes_to_a_new_interpreter():
    proc = zygote.popen([sys.executable, "-c", "pass"])
    assert isinstance(proc, subprocess.Popen) and proc.wait(60) == 0


@pytest.mark.parametrize("seed", ["123", "7"])
def test_a_start_up_environment_gets_a_zygote_of_its_own(tmp_path, seed):
    script = tmp_path / "hashes.py"
    script.write_text("import sys\nprint(hash('tunerlib'), sys.path)\n")
    env = {**os.environ, "PYTHONHASHSEED": seed}
    fresh, child = _both([sys.executable, str(script)], env=env)
    assert child.stdout == fresh.stdout and child.returncode == 0
