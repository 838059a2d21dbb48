"""The live view of a run: a tqdm progress bar in a (pseudo-)terminal, periodic log lines elsewhere,
nothing with --quiet; tests done of the limit, time left, best value, evaluations per second, failures."""
import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import zygote

from tunerlib.engine.progress import StatusLine

SCRIPT = Path(__file__).parent / "scripts" / "toy_tuner.py"
LINE = re.compile(r"^\[\s*[\d.]+s\] tests\s+(\d+)/30  best (\S+)  ([\d.e+]+) evals/s  failures (\d+)  in flight \d+$")


def _in_pty(args, size=None, timeout=120):
    """Run the toy tuner with stderr on a pseudo-terminal; (stderr bytes, stdout text, exit code)."""
    master, slave = pty.openpty()
    if size:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    proc = subprocess.Popen([sys.executable, str(SCRIPT), *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:            # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    stdout = proc.stdout.read().decode()
    return out.decode("utf-8", "replace"), stdout, proc.wait(timeout)


def _args(tmp_path, *extra):
    return ["--test-limit", "30", "--sleep", "0.02", "--seed", "1", "--database", str(tmp_path / "t.db"),
            "--display-frequency", "0.05", "--mode", "raise", *extra]


@pytest.mark.parametrize("size", [(30, 120), None], ids=["sized-terminal", "bare-pty"])
def test_a_terminal_gets_a_progress_bar(tmp_path, size):
    pytest.importorskip("tqdm", reason="the [progress] extra (tqdm) is not installed")
    err, out, code = _in_pty(_args(tmp_path), size)
    assert code == 0
    frames = [f for f in err.split("\r") if f.strip()]
    assert len(frames) >= 3 and all(f.startswith("tuning:") for f in frames)        # redrawn in place
    last = frames[-1]
    # the rate reads eval/s or s/eval (under one evaluation a second, as on a loaded machine)
    assert re.search(r"100%\|.*\| 30/30 \[", last) and re.search(r"eval/s|s/eval", last)
    failures = int(re.search(r"failures (\d+)", last).group(1))
    assert "results: ERROR" in out and f"ERROR {failures}," in out                    # the run's own count
    best = float(re.search(r"best ([\d.e+-]+)", last).group(1))
    assert f"best minimize cost: {best:.6g}" in out
    assert "tuning:" not in out                                                     # stdout stays clean


def test_without_a_terminal_it_logs_lines(tmp_path):
    proc = zygote.run([sys.executable, str(SCRIPT), *_args(tmp_path)], capture_output=True, text=True,
                      timeout=120)
    assert proc.returncode == 0 and "\r" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert len(lines) >= 2 and all(LINE.match(line) for line in lines), proc.stderr
    done = [int(LINE.match(line).group(1)) for line in lines]
    assert done == sorted(done) and done[-1] <= 30
    assert "tuning:" not in proc.stderr


def test_the_lines_give_the_objectives_unit(tmp_path):
    proc = zygote.run([sys.executable, str(SCRIPT), *_args(tmp_path, "--cost-unit", "J")], capture_output=True,
                      text=True, timeout=120)
    assert proc.returncode == 0
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[") and "best -" not in line]
    assert lines and all(re.search(r"  best [\d.e+-]+ J  ", line) for line in lines), proc.stderr
    assert re.search(r"best minimize cost: [\d.e+-]+ J", proc.stdout)           # as the summary does


@pytest.mark.parametrize("terminal", [True, False])
def test_quiet_silences_it(tmp_path, terminal):
    args = _args(tmp_path, "--quiet")
    if terminal:
        err, out, code = _in_pty(args, (30, 120))
    else:
        proc = zygote.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)
        err, out, code = proc.stderr, proc.stdout, proc.returncode
    assert code == 0 and err.strip() == "" and "best minimize cost" in out


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _run(states, outstanding=0):   # the read-only view of the run a callback gets
    return SimpleNamespace(states=states, outstanding=outstanding)


def test_fields_count_failures_of_every_kind_and_time_left():
    out = io.StringIO()
    line = StatusLine(frequency=0.0001, quiet=False, stream=out, total=40, stop_after=3600)
    line.begin(0)
    time.sleep(0.01)                          # past the first display time
    line(_run({"OK": 7, "ERROR": 2, "TIMEOUT": 1, "INFEASIBLE": 3}, 2),
         SimpleNamespace(tests=13, best=2.5, state="OK"))
    text = out.getvalue()
    assert "tests     13/40  best 2.5" in text and "failures 6  in flight 2" in text
    assert re.search(r"time left (\d+)s", text) and int(re.search(r"time left (\d+)s", text).group(1)) >= 3590


@pytest.mark.parametrize("unit, shown", [("s", "best 0.00042 s  "), (None, "best 0.00042  ")])
def test_the_best_value_has_the_objectives_unit(unit, shown):
    out = io.StringIO()                       # plain lines
    line = StatusLine(frequency=0.0001, quiet=False, stream=out, total=10, unit=unit)
    line.begin(0)
    line.update(3, 0.00042, 0, force=True)
    assert shown in out.getvalue()
    assert StatusLine(1.0, False, stream=io.StringIO(), unit=unit).best_text(None) == "-"


@pytest.mark.parametrize("unit, shown", [("s", "best 0.00042 s  "), (None, "best 0.00042  ")])
def test_the_bars_postfix_has_the_objectives_unit(unit, shown):
    pytest.importorskip("tqdm", reason="the [progress] extra (tqdm) is not installed")
    out = _Terminal()
    line = StatusLine(frequency=0.0001, quiet=False, stream=out, total=10, unit=unit)
    line.begin(0)
    assert line.bar is not None
    line.update(3, 0.00042, 0)
    line.close()
    assert shown in out.getvalue()


def test_terminal_without_tqdm_rewrites_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    out = _Terminal()
    line = StatusLine(frequency=0.0001, quiet=False, stream=out, total=10)
    line.begin(0)
    assert line.bar is None
    line.update(4, 1.5, 0, force=True)
    line.update(5, 1.25, 0, force=True)
    line.close()
    text = out.getvalue()
    assert text.startswith("\r[") and text.count("\r") == 2 and text.endswith("\n")
    assert "tests      5/10  best 1.25" in text


def test_a_resumed_run_starts_the_bar_at_its_tests(monkeypatch):
    pytest.importorskip("tqdm")
    out = _Terminal()
    line = StatusLine(frequency=0.0001, quiet=False, stream=out, total=20)
    line.begin(12)
    line(_run({"OK": 13}), SimpleNamespace(tests=13, best=1.0, state="OK"))
    line.close()
    assert "12/20" in out.getvalue() and "13/20" in out.getvalue() and "best 1" in out.getvalue()


def test_quiet_or_frequency_zero_print_nothing():
    for quiet, frequency in ((True, 1.0), (False, 0.0)):
        out = _Terminal()
        line = StatusLine(frequency=frequency, quiet=quiet, stream=out, total=5)
        line.begin(0)
        line.update(3, 1.0, 0, force=True)
        line.close()
        assert out.getvalue() == ""
