"""``tunerlib dashboard`` on the command line: what keeps it from starting is one line and exit code 2
(no plotly, no database, a bad URL or port); started, it serves the page and Plotly's bundle from the
installed package, and Ctrl-C stops it."""
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tunerlib.cli import main
from tunerlib.dashboard import cli as dashboard_cli
from tunerlib.dashboard.cli import DashboardError, plotly_bundle


def _fake_bundle(monkeypatch, tmp_path):
    bundle = tmp_path / "plotly.min.js"
    bundle.write_text("/* plotly */")
    monkeypatch.setattr(dashboard_cli, "plotly_bundle", lambda: bundle)


def _one_line_error(capsys, *argv):
    code = main(["dashboard", *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("tunerlib dashboard: error: "), err
    return err


def test_without_plotly_it_names_the_extra(monkeypatch, writer, capsys):
    run = writer()
    monkeypatch.setattr(dashboard_cli, "find_spec", lambda name: None)
    with pytest.raises(DashboardError, match=re.escape("pip install 'tunerlib[dashboard]'")):
        plotly_bundle()
    assert "tunerlib[dashboard]" in _one_line_error(capsys, run.db.display_url, "--port", "0")


def test_a_missing_database_or_bad_url_is_one_line(monkeypatch, tmp_path, capsys):
    _fake_bundle(monkeypatch, tmp_path)
    assert "no results database at" in _one_line_error(capsys, str(tmp_path / "nothing.db"))
    assert not (tmp_path / "nothing.db").exists()
    assert "malformed database URL" in _one_line_error(capsys, "sqlite:/nothing.db")
    assert "cannot read" in _one_line_error(capsys, f"postgresql+psycopg://nobody@/db?host={tmp_path}/nosocket")


def test_a_port_in_use_or_out_of_range_is_one_line(monkeypatch, writer, tmp_path, capsys):
    _fake_bundle(monkeypatch, tmp_path)
    run = writer()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert "pass another --port" in _one_line_error(capsys, run.db.display_url, "--port", str(port))
    assert "from 0 to 65535" in _one_line_error(capsys, run.db.display_url, "--port", "70000")


def _ctrl_c_default() -> None:
    """In the child before it starts: SIGINT as in a terminal's foreground. A test run started in the
    background inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_started_it_serves_the_page_and_plotly_and_stops_on_ctrl_c(writer):
    try:
        bundle = plotly_bundle()
    except DashboardError as exc:
        pytest.skip(str(exc))
    run = writer()
    run.add(3)
    proc = subprocess.Popen([sys.executable, "-m", "tunerlib.cli", "dashboard", run.db.display_url, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_ctrl_c_default)
    try:
        end, line = time.monotonic() + 300, ""
        while "\n" not in line and time.monotonic() < end and proc.poll() is None:
            if select.select([proc.stdout], [], [], 1.0)[0]:
                line += proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        assert f"following the runs of {run.db.display_url}" in line
        with urllib.request.urlopen(url, timeout=120) as page:
            assert b"tunerlib dashboard" in page.read()
        with urllib.request.urlopen(url + "static/plotly.min.js", timeout=120) as js:
            assert js.read() == bundle.read_bytes()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(120) == 0
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def test_the_built_package_ships_the_page(tmp_path):
    """setuptools' build_py (what a wheel and ``pip install .`` copy) ships the page's static files."""
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                           "--build-lib", str(tmp_path / "lib")], cwd=repo, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    static = tmp_path / "lib" / "tunerlib" / "dashboard" / "static"
    assert sorted(p.name for p in static.iterdir()) == ["dashboard.css", "dashboard.js", "index.html"], \
        "add static/* to [options.package_data] tunerlib.dashboard in setup.cfg"
