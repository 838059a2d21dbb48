"""Helpers of the dashboard tests (tests/dashboard; the fixture registered by its conftest): a run written straight through ResultsDB (so a test controls every
value, the objective text included) and the dashboard served in a thread of the test process."""
import json
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager

import pytest

from tunerlib.dashboard.board import Board
from tunerlib.dashboard.server import DashboardServer
from tunerlib.dashboard.source import ReadOnlyDatabase
from tunerlib.db import ResultRecord, ResultsDB

SPACE = {"parameters": [{"name": "kind", "kind": "enum", "options": ["fast", "<script>alert(1)</script>"]},
                        {"name": "n", "kind": "int"}]}


class RunWriter:
    """One run of ``url`` that a test fills result by result, as a tuning run would."""

    def __init__(self, url, objective="minimize time", label=None, args=None):
        self.db = ResultsDB(url)
        self.pv = self.db.program_version_id("tests", "writer", "1", json.dumps(SPACE))
        self.run_id, self.uuid = self.db.create_run(self.pv, label=label, args=args or {"objective_unit": "s"},
                                                    seed=7, objective=objective)
        self.count = 0

    def add(self, n, kind="fast", state="OK", requestor="auto/PureRandom", **metrics):
        """Request and complete one configuration; returns the result id."""
        self.count += 1
        config = {"kind": kind, "n": n}
        dr = self.db.request_configuration(self.run_id, self.pv, f"h{n}-{kind}-{self.count}", config, requestor, 0)
        if state == "OK" and not metrics:
            metrics = {"time": float(n)}
        extra = metrics.pop("extra", None)
        return self.db.complete(dr, ResultRecord(state=state, extra=extra, **metrics))

    def close(self, state="COMPLETE"):
        self.db.set_run_state(self.run_id, state)
        self.db.close()


@pytest.fixture
def writer(tmp_path):
    made = []

    def make(url=None, **kwargs):
        made.append(RunWriter(url or str(tmp_path / "results.db"), **kwargs))
        return made[-1]
    yield make
    for w in made:
        w.db.close()


@contextmanager
def serving(*urls, bundle=None):
    """The dashboard of ``urls`` served on a free port in a thread; yields its base URL."""
    board = Board([ReadOnlyDatabase(url) for url in urls])
    server = DashboardServer(("127.0.0.1", 0), board, bundle)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.url.rstrip("/")
    finally:
        server.shutdown()
        server.server_close()
        board.close()
        thread.join(30)


def get(url, headers=None):
    """(status, content type, body bytes) of GET ``url``."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.headers.get("Content-Type"), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type"), exc.read()


def get_json(url):
    status, kind, body = get(url)
    assert kind.startswith("application/json"), kind
    return status, json.loads(body)
