"""A live page in a real headless browser, driven through the DevTools protocol over a pipe.

:class:`LivePage` starts Chromium (found as tests/helpers/browser.py finds it; the test is skipped
where there is none) with ``--remote-debugging-pipe``: commands go in on the browser's fd 3 and answers
come out of its fd 4, JSON messages ended by a NUL byte. Nothing but the standard library is needed.
One page stays open, so a test can watch a page that polls its server change as new results arrive
(:meth:`LivePage.wait_for`), evaluate JavaScript in it and take screenshots of it.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

from browser import FLAGS, chromium


class BrowserError(Exception):
    """The browser answered a command with an error, exited, or did not answer in time."""


def _high(fd: int) -> int:
    """A copy of ``fd`` numbered 10 or more (closing ``fd``), so that moving the two pipe ends to 3 and 4
    in the child cannot overwrite one with the other."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return copy


class LivePage:
    """One browser tab showing ``url`` (a context manager: the browser is closed on exit)."""

    def __init__(self, url: str, width: int = 1400, height: int = 2400, timeout: float = 120.0) -> None:
        self.timeout = timeout
        browser = chromium()
        self.profile = tempfile.mkdtemp(prefix="tunerlib-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        to_browser_r, from_browser_w = _high(to_browser_r), _high(from_browser_w)

        def as_fds_3_and_4() -> None:  # in the child, before exec: the pipe's ends where the browser looks
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)
        self.proc = subprocess.Popen(
            [browser, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe",
             f"--window-size={width},{height}", "about:blank"],
            preexec_fn=as_fds_3_and_4, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer, self._next_id = b"", 0
        target = self.command("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.command("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.command("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                     deviceScaleFactor=1, mobile=False)
        self.command("Page.navigate", session=True, url=url)

    # --------------------------------------------------------------------------------- protocol
    def command(self, method: str, session: bool = False, **params: Any) -> dict:
        """Send one DevTools command (to the page's session when ``session``) and return its result."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def _read(self) -> dict:
        end = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = end - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise BrowserError("the browser did not answer" if left <= 0 else "the browser exited")
            ready, _, _ = select.select([self._from_browser], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("the browser closed its pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    # ------------------------------------------------------------------------------------- page
    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page (promises are awaited)."""
        result = self.command("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                              awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')} "
                               f"{result['exceptionDetails'].get('exception', {}).get('description', '')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, until: Callable[[Any], bool] = bool, seconds: float = 300.0,
                 step: float = 0.25) -> Any:
        """Evaluate ``expression`` until ``until(value)`` holds, and return that value; AssertionError
        naming the last value after ``seconds`` (generous: a loaded machine is slow, never wrong)."""
        end = time.monotonic() + seconds
        value: Optional[Any] = None
        while True:
            try:
                value = self.evaluate(expression)
            except BrowserError as exc:
                value = f"(not yet: {exc})"
            else:
                if until(value):
                    return value
            if time.monotonic() > end:
                raise AssertionError(f"{expression} never held; last value {value!r}")
            time.sleep(step)

    def screenshot(self, path: Path) -> bytes:
        """Save a PNG of the whole page (beyond the window) at ``path``; returns its bytes."""
        data = base64.b64decode(self.command("Page.captureScreenshot", session=True, format="png",
                                             captureBeyondViewport=True)["data"])
        Path(path).write_bytes(data)
        return data

    def close(self) -> None:
        """Close the browser and remove its profile."""
        try:
            self.command("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "LivePage":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
