"""The dashboard's HTTP server (standard library ``ThreadingHTTPServer``): the page, its static files,
Plotly's bundle from the installed ``plotly`` package, and the JSON API under ``/api/``.

* ``GET /api/runs``: ``{"databases": [...], "runs": [summary, ...]}``
* ``GET /api/runs/<id>``: one run's details (``<id>``: its UUID or a unique prefix)
* ``GET /api/runs/<id>/results?since=<result id>``: its results with a larger id, and ``last_id``
* ``GET /api/runs/<id>/importance``: parameter importance of its OK results

Only GET (and HEAD) are served: the dashboard changes nothing. JSON escapes ``<``, ``>`` and ``&``, and
every response forbids MIME sniffing and inline scripts (Content-Security-Policy). A server bound to a
loopback address answers only requests whose Host names a loopback address, so a web page that
rebinds its own name to 127.0.0.1 cannot read the API.
"""
from __future__ import annotations

import ipaddress
import json
import math
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple
from urllib.parse import parse_qs, unquote, urlsplit

from ..db import DatabaseError
from .board import Board, UnknownRun
from .views import importance_doc, results_doc, run_detail, run_summary

__all__ = ["DashboardServer", "json_bytes"]

_STATIC = {"/": ("index.html", "text/html; charset=utf-8"),
           "/static/dashboard.js": ("dashboard.js", "text/javascript; charset=utf-8"),
           "/static/dashboard.css": ("dashboard.css", "text/css; charset=utf-8")}
_PLOTLY = "/static/plotly.min.js"
_CSP = ("default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'; form-action 'none'")
_LOOPBACK_NAMES = ("localhost",)


def json_bytes(doc: Any) -> bytes:
    """``doc`` as UTF-8 JSON text in which ``<``, ``>`` and ``&`` are escaped (``\\u003c``...), so that
    no value can close a tag wherever the text ends up; NaN and infinities become null."""
    try:
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(doc), ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode("utf-8")


def _finite(doc: Any) -> Any:
    """``doc`` with every NaN or infinite float replaced by None."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {key: _finite(value) for key, value in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_finite(value) for value in doc]
    return doc


class _ApiError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def _since(query: Dict[str, list]) -> int:
    raw = query.get("since", ["0"])[-1]
    try:
        value = int(raw)
    except ValueError:
        raise _ApiError(HTTPStatus.BAD_REQUEST, f"since={raw!r}: pass a result id (a whole number)") from None
    return max(0, value)


def _is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class DashboardServer(ThreadingHTTPServer):
    """Serves one :class:`Board`; ``plotly_js`` is the path of Plotly's offline bundle."""

    daemon_threads = True

    def __init__(self, address: Tuple[str, int], board: Board, plotly_js: Optional[Path]) -> None:
        """Bind ``address`` (port 0: any free port; see :attr:`url`) and serve ``board`` (the API alone,
        without the charts' bundle, when ``plotly_js`` is None)."""
        self.board, self.plotly_js = board, plotly_js
        self.local_only = _is_loopback(address[0])
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that closed the connection mid-answer is no error; anything else is printed."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        """The page's address, e.g. ``http://127.0.0.1:8050/``."""
        host, port = self.server_address[:2]
        if isinstance(host, bytes):
            host = host.decode()
        shown = f"[{host}]" if ":" in str(host) else host
        return f"http://{shown}:{port}/"

    def api(self, path: str, query: Dict[str, list]) -> Any:
        """The JSON document of ``GET path?query`` under ``/api/``; _ApiError (404, 400) otherwise."""
        parts = [unquote(p) for p in path.strip("/").split("/")][1:]
        if parts == ["runs"]:
            sources, runs = self.board.runs()
            return {"databases": sources, "runs": [self._locked(f, run_summary, db.display_url) for db, f in runs]}
        if len(parts) in (2, 3) and parts[0] == "runs":
            try:
                db, follower = self.board.run(parts[1])
            except UnknownRun as exc:
                raise _ApiError(HTTPStatus.NOT_FOUND, str(exc)) from None
            if len(parts) == 2:
                return self._locked(follower, run_detail, db.display_url)
            if parts[2] == "results":
                return self._locked(follower, results_doc, _since(query))
            if parts[2] == "importance":
                return importance_doc(follower)
        raise _ApiError(HTTPStatus.NOT_FOUND, f"no API endpoint {path}: see /api/runs")

    @staticmethod
    def _locked(follower: Any, view: Callable[..., Any], *args: Any) -> Any:
        with follower.lock:
            return view(follower, *args)


class _Handler(BaseHTTPRequestHandler):
    server: DashboardServer
    server_version = "tunerlib-dashboard"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        """Requests are not logged: the page polls every few seconds."""

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's naming)
        self._serve(head=True)

    def do_GET(self) -> None:  # noqa: N802
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        if self.server.local_only and not _is_loopback(self._host()):
            self._send(HTTPStatus.FORBIDDEN, "text/plain; charset=utf-8",
                       b"this dashboard answers requests to localhost only\n", head)
            return
        url = urlsplit(self.path)
        if url.path.startswith("/api/"):
            self._api(url.path, parse_qs(url.query), head)
        elif url.path in _STATIC:
            name, kind = _STATIC[url.path]
            self._send(HTTPStatus.OK, kind, resources.files(__package__).joinpath("static", name).read_bytes(),
                       head)
        elif url.path == _PLOTLY and self.server.plotly_js is not None:
            self._send(HTTPStatus.OK, "text/javascript; charset=utf-8", self.server.plotly_js.read_bytes(), head,
                       cache=True)
        else:
            self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", b"not found\n", head)

    def _host(self) -> str:
        host = self.headers.get("Host", "")
        if host.startswith("["):
            return host[1:host.find("]")] if "]" in host else host
        return host.rsplit(":", 1)[0] if host.count(":") == 1 else host

    def _api(self, path: str, query: Dict[str, list], head: bool) -> None:
        try:
            status, doc = HTTPStatus.OK, self.server.api(path, query)
        except _ApiError as exc:
            status, doc = exc.status, {"error": str(exc)}
        except DatabaseError as exc:
            status, doc = HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(exc)}
        self._send(status, "application/json; charset=utf-8", json_bytes(doc), head)

    def _send(self, status: HTTPStatus, kind: str, body: bytes, head: bool, cache: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", _CSP)
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "max-age=86400" if cache else "no-store")
        self.end_headers()
        if not head:
            self.wfile.write(body)


def serve(server: DashboardServer, announce: Optional[Callable[[str], None]] = None) -> None:
    """Serve until interrupted (Ctrl-C), then close the databases; ``announce`` gets the page's URL."""
    if announce is not None:
        announce(server.url)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.board.close()
