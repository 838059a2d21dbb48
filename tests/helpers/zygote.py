"""Start tuner commands from a zygote instead of a new interpreter: ``popen`` and ``run`` as in subprocess.

A tuner process spends most of a short test run importing numpy, SQLAlchemy and tunerlib (about 0.5
CPU-s, several hundred times in the suite). The zygote (zygote_server.py, one per test process) imports
them once and forks a child per command; the child is a real process of its own (its own session, pid,
signals, stdio pipes and database connections) that runs the script as ``__main__`` exactly as
``python SCRIPT ARGS`` would, only without the interpreter start-up.

What is read at interpreter start-up (``PYTHON*`` variables such as the hash seed or the path, thread
counts) comes from the environment the zygote was started with, so each such environment gets a
zygote of its own. What a zygote child cannot be, and so what :func:`popen` gives to plain
:class:`subprocess.Popen`: commands that are not ``[sys.executable, SCRIPT.py | -m MODULE, ...]``;
pass_fds, preexec_fn and other options this module does not implement. Tests of start-up itself (what
importing or ``--help`` loads) and of determinism across processes (children of one zygote share its
hash seed) must keep using subprocess. ``TUNERLIB_TEST_ZYGOTE=0`` sends every command to subprocess.
"""
import atexit
import json
import os
import select
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT
_SERVER = Path(__file__).with_name("zygote_server.py")
_SUPPORTED = {"stdin", "stdout", "stderr", "text", "universal_newlines", "cwd", "env", "start_new_session"}


def _start_up_env(env: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith("PYTHON") or "THREADS" in k))


class Zygote:
    """The zygote server of this test process and the messages it sends (child pids and exits)."""

    def __init__(self, env: dict) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out:
            self.process = subprocess.Popen([sys.executable, str(_SERVER), str(theirs.fileno())],
                                            pass_fds=(theirs.fileno(),), stdin=null_in, stdout=null_out,
                                            env=env, start_new_session=True)
        theirs.close()
        self.sock = ours
        self.exits: dict = {}
        if "ready" not in self._receive(None):
            raise RuntimeError("the zygote server did not start")

    def _receive(self, timeout: Optional[float]) -> dict:
        """The next message ({} when none came within ``timeout``); exit messages are also recorded."""
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return {}
        data = self.sock.recv(1 << 16)
        if not data:
            raise RuntimeError("the zygote server has gone")
        message = json.loads(data)
        if "exit" in message:
            self.exits[message["exit"]] = message["status"]
        return message

    def spawn(self, request: dict, fds: list) -> int:
        """Fork a child for ``request`` with stdio ``fds``; its pid."""
        socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
        while True:
            message = self._receive(None)
            if "pid" in message:
                return message["pid"]
            if "error" in message:
                raise OSError(message["error"])

    def status(self, pid: int, timeout: Optional[float]) -> Optional[int]:
        """``pid``'s return code once it has ended (waiting at most ``timeout`` s; None: not yet)."""
        end = None if timeout is None else time.monotonic() + timeout
        while pid not in self.exits:
            left = None if end is None else max(0.0, end - time.monotonic())
            if not self._receive(left) and left == 0.0:
                return None
        return os.waitstatus_to_exitcode(self.exits[pid])

    def close(self) -> None:
        self.sock.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


#: one zygote per start-up environment (a command whose ``PYTHONHASHSEED`` differs gets its own)
_ZYGOTES: dict = {}


def _zygote(env: Optional[dict] = None) -> Zygote:
    """The zygote whose children start up as a new interpreter with ``env`` would (started on first use)."""
    env = dict(os.environ if env is None else env)
    key = _start_up_env(env)
    zygote = _ZYGOTES.get(key)
    if zygote is None or zygote.process.poll() is not None:
        zygote = _ZYGOTES[key] = Zygote(env)
        atexit.register(zygote.close)
    return zygote


def _usable(args: Any, kwargs: dict) -> bool:
    if os.environ.get("TUNERLIB_TEST_ZYGOTE", "1") == "0" or set(kwargs) - _SUPPORTED:
        return False
    if not isinstance(args, (list, tuple)) or len(args) < 2 or args[0] != sys.executable:
        return False
    script = str(args[1])
    return (script == "-m" and len(args) > 2) or (script.endswith(".py") and os.path.isfile(script))


class ZygoteProcess:
    """A zygote child with the part of :class:`subprocess.Popen`'s interface the tests use."""

    def __init__(self, args: list, stdin: Any = None, stdout: Any = None, stderr: Any = None,
                 text: bool = False, universal_newlines: bool = False, cwd: Any = None,
                 env: Optional[dict] = None, start_new_session: bool = False) -> None:
        self.args, self.returncode = list(args), None
        self.text = bool(text or universal_newlines)
        self.stdin = self.stdout = self.stderr = None
        child_fds, close_after = [], []
        for fd, spec, mode in ((0, stdin, "w"), (1, stdout, "r"), (2, stderr, "r")):
            child_fds.append(self._child_fd(fd, spec, mode, child_fds, close_after))
        request = {"argv": [str(a) for a in args], "cwd": str(cwd or os.getcwd()),
                   "env": dict(os.environ if env is None else env), "session": bool(start_new_session)}
        try:
            self._zygote = _zygote(request["env"])
            self.pid = self._zygote.spawn(request, child_fds)
        finally:
            for fd in close_after:
                os.close(fd)

    def _child_fd(self, fd: int, spec: Any, mode: str, earlier: list, close_after: list) -> int:
        """The descriptor the child gets as ``fd``; a pipe's other end becomes self.stdin/stdout/stderr."""
        if spec is None:
            return fd
        if spec == STDOUT:
            return earlier[1]
        if spec == DEVNULL:
            null = os.open(os.devnull, os.O_RDWR)
            close_after.append(null)
            return null
        if spec == PIPE:
            r, w = os.pipe()
            ours, theirs = (w, r) if mode == "w" else (r, w)
            close_after.append(theirs)
            setattr(self, ("stdin", "stdout", "stderr")[fd], os.fdopen(ours, mode + "b", buffering=0))
            return theirs
        return spec if isinstance(spec, int) else spec.fileno()

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            self.returncode = self._zygote.status(self.pid, 0.0)
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.returncode is None:
            self.returncode = self._zygote.status(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, input: Any = None, timeout: Optional[float] = None) -> tuple:
        """Write ``input``, read stdout and stderr to their ends, wait; (stdout, stderr) as Popen's."""
        end = None if timeout is None else time.monotonic() + timeout
        if self.stdin is not None:
            if input:
                self.stdin.write(input.encode() if isinstance(input, str) else input)
            self.stdin.close()
        chunks = self._drain(end)
        self.wait(None if end is None else max(0.0, end - time.monotonic()))
        return tuple(self._decode(chunks[s]) if s is not None else None for s in (self.stdout, self.stderr))

    def _drain(self, end: Optional[float]) -> dict:
        chunks = {s: [] for s in (self.stdout, self.stderr) if s is not None}
        with selectors.DefaultSelector() as selector:
            for stream in chunks:
                selector.register(stream, selectors.EVENT_READ)
            while selector.get_map():
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, None)
                for key, _ in selector.select(left):
                    data = os.read(key.fileobj.fileno(), 1 << 16)
                    if data:
                        chunks[key.fileobj].append(data)
                    else:
                        selector.unregister(key.fileobj)
                        key.fileobj.close()
        return chunks

    def _decode(self, parts: list) -> Any:
        data = b"".join(parts)
        return data.decode().replace("\r\n", "\n").replace("\r", "\n") if self.text else data

    def __enter__(self) -> "ZygoteProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        self.wait()


def popen(args: Any, **kwargs: Any) -> Any:
    """A zygote child for ``args`` where it behaves as a new interpreter would, else subprocess.Popen."""
    if _usable(args, kwargs):
        return ZygoteProcess(args, **kwargs)
    return subprocess.Popen(args, **kwargs)


def run(args: Any, input: Any = None, capture_output: bool = False, timeout: Optional[float] = None,
        check: bool = False, **kwargs: Any) -> subprocess.CompletedProcess:
    """subprocess.run over :func:`popen`."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = PIPE
    if input is not None:
        kwargs["stdin"] = PIPE
    with popen(args, **kwargs) as process:
        try:
            out, err = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    if check:
        done.check_returncode()
    return done
