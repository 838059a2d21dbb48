"""The dashboard in a real headless browser (Chromium, driven over the DevTools pipe: livepage.py)
following live runs: a ``--parallelism 2`` run on SQLite and a ``--distributed`` run on PostgreSQL
measured by two ``tunerlib worker`` processes. The page loads, shows the run, its chart shows N
results while the run is held, then every result once it is let go; labels, configuration values and
error texts that are HTML are shown as text and run nothing.

The run is held by a pause file its measurements wait on (paced_tuner.py), so that it cannot end
before the page has read it: no step depends on how fast the machine is, and every wait is generous.
"""
import json
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import zygote
from browser import chromium
from livepage import LivePage
from procs import wait_until

from tunerlib.dashboard.cli import DashboardError, plotly_bundle

PACED = Path(__file__).parent / "scripts" / "paced_tuner.py"
sys.path.insert(0, str(PACED.parent))
from paced_tuner import ERROR_TEXT  # noqa: E402

WAIT = int(os.environ.get("TUNERLIB_TEST_WAIT", "300"))
LIMIT = 36
LABEL = "<b>watched</b>"
#: results the best-so-far chart draws: its OK results (trace 0) and failures (trace 2)
CHART_RESULTS = ("(() => { const d = document.getElementById('chart-evals');"
                 " return d && d.data ? d.data[0].x.length + d.data[2].x.length : null; })()")
SHOTS = os.environ.get("TUNERLIB_DASHBOARD_SHOTS")   # a folder: save screenshots of the page there


@pytest.fixture(autouse=True)
def _needs_browser_and_plotly():
    chromium()
    try:
        plotly_bundle()
    except DashboardError as exc:
        pytest.skip(str(exc))


def _start_dashboard(log, *urls):
    """(process, page URL) of ``tunerlib dashboard URLS --port 0``, its stderr written to the file ``log``
    (read by :func:`_dashboard_end` when a wait fails: a pipe nobody reads could stall it)."""
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "tunerlib.cli", "dashboard", *urls,
                                 "--port", "0"], stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True)
    end, line = time.monotonic() + WAIT, ""
    while "\n" not in line and time.monotonic() < end and proc.poll() is None:
        if select.select([proc.stdout], [], [], 1.0)[0]:
            line += proc.stdout.readline()
    found = re.search(r"http://\S+/", line)
    if found is None:
        _stop(proc)
        pytest.fail(f"the dashboard did not start: {line!r} {_dashboard_end(proc, log)}")
    return proc, found.group(0)


def _dashboard_end(proc, log):
    """What the dashboard process says of itself: running or its exit status, and its stderr's end (from
    its last fatal error on, where it has one: -X faulthandler writes every thread's stack there)."""
    code = proc.poll()
    state = "running" if code is None else f"exited with status {code}"
    text = Path(log).read_text(errors="replace")
    fatal = text.rfind("Fatal Python error")
    return f"dashboard {state}; its stderr ends: {text[fatal:][:4000] if fatal >= 0 else text[-3000:]!r}"


def _stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


def _sqlite_results(path):
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT count(*) FROM result").fetchone()[0]
    except sqlite3.Error:
        return 0


def _pg_count(url, sql):
    from sqlalchemy import text
    from tunerlib.db.migrations import open_engine
    engine, _ = open_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text(sql)).scalar()
    except Exception:  # noqa: BLE001  (the run has not created the tables yet)
        return 0
    finally:
        engine.dispose()


def _both_workers_serve(url):
    """Both workers are registered and the run has results (held then, each worker holds a claim)."""
    return (_pg_count(url, "SELECT count(*) FROM measurement_worker WHERE stopped IS NULL") == 2
            and _pg_count(url, "SELECT count(*) FROM result") >= 3)


def _api_text(url, seconds=WAIT):
    """The body of a GET of the dashboard's API, retried while the server is too busy to answer (a loaded
    machine can refuse or drop a connection; only a lasting failure fails the test)."""
    end = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=60) as answer:
                return answer.read().decode()
        except urllib.error.URLError:
            if time.monotonic() > end:
                raise
            time.sleep(1)


class _Watched:
    """The page, whose waits say what the page, its API and the dashboard process showed when one fails."""

    def __init__(self, page, api, dashboard, log):
        self.page, self.api, self.dashboard, self.log = page, api, dashboard, log

    def wait_for(self, expression, until, seconds=WAIT):
        try:
            return self.page.wait_for(expression, until, seconds)
        except AssertionError as exc:
            status = self.page.evaluate("document.getElementById('status').textContent")
            try:
                runs = _api_text(self.api, WAIT if self.dashboard.poll() is None else 0)[:3000]
            except urllib.error.URLError as error:
                runs = f"(no answer: {error})"
            raise AssertionError(f"{exc}\npage status: {status}\n/api/runs: {runs}\n"
                                 f"{_dashboard_end(self.dashboard, self.log)}") from None


def _follow(url, pause, results, tuner, shots_prefix):
    """Hold the run, open the page, check it shows the run and N results, let the run go, check it
    shows all of them (and what the run recorded: decisions, errors as text); ``results()`` is true
    once the run can be held."""
    assert wait_until(results, WAIT), "the run stored no results"
    pause.touch()
    log = pause.with_name("dashboard.err")
    dashboard, page_url = _start_dashboard(log, url)
    try:
        with LivePage(page_url + "?interval=500") as live:
            page = _Watched(live, page_url + "api/runs", dashboard, log)
            shown = page.wait_for(CHART_RESULTS, lambda v: isinstance(v, int) and v >= 3)
            assert shown < LIMIT and tuner.poll() is None
            assert live.evaluate("document.querySelector('#runs tbody td:nth-child(2)').textContent") == LABEL
            assert live.evaluate("document.getElementById('run-title').textContent").endswith(LABEL)
            pause.unlink()
            page.wait_for(CHART_RESULTS, lambda v: v == LIMIT)
            page.wait_for("document.querySelector('#runs tbody td:nth-child(4)').textContent",
                          lambda v: v == "COMPLETE")
            page.wait_for("document.querySelectorAll('#decisions tbody tr').length", lambda v: v > 0)
            page.wait_for("document.getElementById('importance-note').textContent",
                          lambda v: "random forest" in v)
            errors = live.evaluate("document.getElementById('errors').textContent")
            assert ERROR_TEXT in errors
            assert live.evaluate("document.querySelectorAll('#errors img, #runs b, #run-title b').length") == 0
            assert live.evaluate("window.__xss === undefined")
            assert live.evaluate("document.querySelectorAll('#slices .main-svg').length") > 0
            assert live.evaluate("document.querySelectorAll('#chart-parcoords .parcoords').length") == 1
            if SHOTS:
                live.screenshot(Path(SHOTS) / f"{shots_prefix}-page.png")
            return json.loads(_api_text(page_url + "api/runs/" + live.evaluate("location.hash.slice(5)")))["workers"]
    finally:
        _stop(dashboard)


def _finish(proc):
    try:
        out, err = proc.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


def test_the_page_follows_a_live_parallel_run_on_sqlite(tmp_path):
    db, pause = tmp_path / "live.db", tmp_path / "pause"
    tuner = zygote.popen([sys.executable, str(PACED), "--database", str(db), "--parallelism", "2", "--test-limit",
                          str(LIMIT), "--seed", "4", "--label", LABEL, "--pause", str(pause), "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _follow(str(db), pause, lambda: _sqlite_results(db) >= 3, tuner, "sqlite")
        code, _, err = _finish(tuner)
        assert code == 0, err
    finally:
        pause.unlink(missing_ok=True)
        _stop(tuner)


def test_the_page_follows_a_postgresql_run_measured_by_two_workers(tmp_path, postgres_url):
    pause = tmp_path / "pause"
    workers = [zygote.popen([sys.executable, "-m", "tunerlib.cli", "worker", "--database", postgres_url,
                             "--interface", f"{PACED}:PacedTuner", "--lease", "30", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
               for _ in range(2)]
    tuner = zygote.popen([sys.executable, str(PACED), "--database", postgres_url, "--distributed", "--test-limit",
                          str(LIMIT), "--seed", "4", "--label", LABEL, "--pause", str(pause), "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        shown_workers = _follow(postgres_url, pause, lambda: _both_workers_serve(postgres_url), tuner, "postgresql")
        code, _, err = _finish(tuner)
        assert code == 0, err
        for worker in workers:
            assert _finish(worker)[0] == 0
        assert _pg_count(postgres_url, "SELECT count(DISTINCT worker) FROM result") == 2
        assert len(shown_workers) == 2 and sum(w["results"] for w in shown_workers) == LIMIT
    finally:
        pause.unlink(missing_ok=True)
        for proc in [tuner, *workers]:
            _stop(proc)
