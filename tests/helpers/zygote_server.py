"""The zygote server of tests/helpers/zygote.py: a Python process that imported tunerlib once and forks a
child per tuner command the tests start.

Started by :class:`zygote.Zygote` as ``python zygote_server.py FD`` (FD: its end of a SOCK_SEQPACKET
socket pair). Each request is one JSON message ``{"argv", "cwd", "env", "session"}`` with three file
descriptors (the child's stdin, stdout and stderr); the server forks, answers ``{"pid": N}`` (or
``{"error": "..."}``) and later ``{"exit": N, "status": S}`` (the raw ``waitpid`` status) when the child
ends. The child becomes what ``python SCRIPT ARGS`` or ``python -m MODULE ARGS`` would be: its own
session when asked, the given stdio, working directory, environment, ``sys.argv`` and ``sys.path[0]``,
the script run as ``__main__``, then Python's own ending (exit status from ``SystemExit``, a traceback
and status 1 for an uncaught exception, death by SIGINT for an uncaught ``KeyboardInterrupt``, threads
joined, atexit handlers run, streams flushed). The server has no threads and never starts a process
itself, so every child starts from the same clean state; it exits when the test process closes its end.
"""
import atexit
import io
import json
import os
import runpy
import select
import signal
import socket
import sys
import threading
import traceback

#: what a tuner process imports in its first moments: the modules themselves, SQLite's dialect (imported
#: when the database opens), the default bandit's techniques and the cross-session store (the CLI's
#: store commands); importing any of them has no effect but the import
PRELOAD = ("numpy", "sqlalchemy", "sqlalchemy.dialects.sqlite", "tunerlib", "tunerlib.cli", "tunerlib.db",
           "tunerlib.script.interface", "tunerlib.engine.run", "tunerlib.engine.search", "tunerlib.parameters",
           "tunerlib.techniques", "tunerlib.techniques.differential_evolution", "tunerlib.techniques.genetic",
           "tunerlib.techniques.nelder_mead", "tunerlib.techniques.pattern_search", "tunerlib.store")


def _preload() -> None:
    """Import what every tuner process imports at start-up (the cost the zygote saves)."""
    import importlib
    for name in PRELOAD:
        importlib.import_module(name)


def _stdio() -> None:
    """Fresh ``sys.stdin/stdout/stderr`` over fds 0-2, buffered as a new interpreter would buffer them."""
    def stream(fd: int, mode: str, line: bool, errors: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, encoding="utf-8", errors=errors, line_buffering=line)
    sys.stdin = sys.__stdin__ = stream(0, "r", False, "strict")
    sys.stdout = sys.__stdout__ = stream(1, "w", os.isatty(1), "strict")
    sys.stderr = sys.__stderr__ = stream(2, "w", True, "backslashreplace")


def _run_main(argv: list) -> int:
    """Run ``argv`` (``[python, SCRIPT, ...]`` or ``[python, -m, MODULE, ...]``) as __main__; its exit status."""
    try:
        if argv[1] == "-m":
            sys.argv = [argv[2], *argv[3:]]
            sys.path[0] = os.getcwd()
            sys.modules.pop(argv[2], None)  # python -m runs the module's code afresh as __main__
            runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv[1:]
            sys.path[0] = os.path.dirname(os.path.abspath(argv[1]))
            runpy.run_path(argv[1], run_name="__main__")
        return 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return -signal.SIGINT
    except BaseException:  # noqa: BLE001  (the interpreter's own top level)
        traceback.print_exc()
        return 1


def _child(request: dict, fds: list, closing: list) -> None:
    """In the forked child: become the requested process, run it, and never return."""
    code = 1
    try:
        for fd in closing:
            os.close(fd)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if request["session"]:
            os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _stdio()
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        code = _run_main(request["argv"])
        threading._shutdown()
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001  (as the interpreter, ignore a closed pipe at exit)
                pass
    finally:
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code & 0xFF)


def _spawn(sock: socket.socket, wake: tuple) -> bool:
    """Serve one request; False when the test process has gone."""
    try:
        data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 3)
    except ConnectionResetError:
        return False
    if not data:
        return False
    request = json.loads(data)
    try:
        pid = os.fork()
    except OSError as exc:
        sock.send(json.dumps({"error": str(exc)}).encode())
        pid = -1
    if pid == 0:
        _child(request, fds, [sock.fileno(), *wake])
    for fd in fds:
        os.close(fd)
    if pid > 0:
        sock.send(json.dumps({"pid": pid}).encode())
    return True


def _reap(sock: socket.socket) -> None:
    """Report every child that has ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        sock.send(json.dumps({"exit": pid, "status": status}).encode())


def serve(fd: int) -> None:
    """The server loop: requests on the socket, child exits reported as SIGCHLD wakes it."""
    sock = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    sock.send(b'{"ready": true}')
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(sock)
        if sock in ready and not _spawn(sock, (wake_r, wake_w)):
            return


if __name__ == "__main__":
    _preload()
    serve(int(sys.argv[1]))
