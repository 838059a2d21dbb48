"""``--backend command``: run the user's HPVM2FPGA (or any HLS) flow once per configuration.

The command template is split like a shell would split it (``shlex.split``) but never run by a
shell; in every argument the placeholders ``{config}`` (path of a JSON file holding the
configuration) and ``{workdir}`` (a fresh empty directory for this evaluation, deleted afterwards
unless ``--keep-workdirs``) are replaced.  The configuration is also written to the program's
stdin as one JSON line.  The program runs in the tuner's current directory, in its own process
group, killed after the timeout.

Output protocol: the LAST non-empty line of stdout must be a JSON object::

    {"exec_time": 0.0123, "fits": true}          exec_time in seconds, lower is better
    {"fits": false}                               the design does not fit (exec_time optional)

Other keys of that object with JSON scalar values (numbers, strings, booleans), e.g.
``"lut_util": 0.71``, are kept in ``Result.extra``.  Earlier lines (logs) are ignored.

Outcomes: ``OK`` with ``time = exec_time``; ``INFEASIBLE`` (a hidden constraint) when the design
does not fit, the program exits non-zero, or its last line does not follow the protocol — the
reason is kept in ``extra["reason"]`` (with the tail of stderr); ``TIMEOUT`` when it runs past the
timeout.
"""
from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Tuple

from tunerlib import Result, UsageError, call_program

PLACEHOLDERS = ("{config}", "{workdir}")
#: keys of the protocol line that are not copied into Result.extra
RESERVED = ("exec_time", "fits")
#: at most this many extra keys and characters per string value are kept
MAX_EXTRA_KEYS, MAX_TEXT = 32, 200


class FlowError(UsageError):
    """A bad --cmd template (one line)."""


def parse_template(template: Optional[str]) -> List[str]:
    """Split ``--cmd`` into arguments (shell quoting rules, no shell); checks it is usable."""
    if not template or not template.strip():
        raise FlowError("--backend command needs --cmd TEMPLATE, e.g. --cmd "
                        "\"python my_flow.py {config}\"")
    try:
        args = shlex.split(template)
    except ValueError as exc:
        raise FlowError(f"--cmd {template!r}: {exc}; fix the quoting") from None
    if any(p in args[0] for p in PLACEHOLDERS):
        raise FlowError(f"--cmd {template!r}: the program name cannot be a placeholder; "
                        "start the template with the program to run")
    if shutil.which(args[0]) is None:
        raise FlowError(f"--cmd: program {args[0]!r} not found or not executable; give its path "
                        "or put it on PATH")
    return args


def build_argv(template: List[str], config_path: str, workdir: str) -> List[str]:
    """The template with ``{config}`` and ``{workdir}`` replaced in every argument."""
    return [a.replace("{config}", config_path).replace("{workdir}", workdir) for a in template]


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, str)) or (
        isinstance(value, float) and math.isfinite(value))


def parse_output(stdout: str) -> Tuple[Optional[float], bool, Dict[str, Any]]:
    """``(exec_time, fits, extra)`` from the program's stdout; ValueError with the reason when the
    last non-empty line does not follow the protocol."""
    lines = [l.strip() for l in stdout.splitlines() if l.strip()]
    if not lines:
        raise ValueError("no output; print {\"exec_time\": seconds, \"fits\": true} as the last line")
    last = lines[-1]
    try:
        data = json.loads(last)
    except json.JSONDecodeError:
        raise ValueError(f"last line is not JSON: {last[:MAX_TEXT]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("fits"), bool):
        raise ValueError(f"last line needs a boolean \"fits\": {last[:MAX_TEXT]!r}")
    t = data.get("exec_time")
    valid_t = isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t >= 0
    if data["fits"] and not valid_t:
        raise ValueError(f"\"exec_time\" must be a number >= 0 when fits is true, got {t!r}")
    extra = {k: (v[:MAX_TEXT] if isinstance(v, str) else v) for k, v in data.items()
             if k not in RESERVED and isinstance(k, str) and _scalar(v)}
    extra = dict(list(extra.items())[:MAX_EXTRA_KEYS])
    return (float(t) if valid_t else None), data["fits"], extra


def _tail(text: str, n: int = 400) -> str:
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def run_flow(template: List[str], cfg: Mapping[str, Any], timeout: float,
             workdir_root: Optional[str] = None, keep_workdir: bool = False) -> Result:
    """Run the flow on ``cfg``; returns the Result (never raises for a failing flow)."""
    workdir = tempfile.mkdtemp(prefix="hpvm2fpga-", dir=workdir_root)
    try:
        config_path = os.path.join(workdir, "config.json")
        text = json.dumps(dict(cfg), sort_keys=True)
        with open(config_path, "w") as fh:
            fh.write(text + "\n")
        argv = build_argv(template, config_path, workdir)
        try:
            proc = call_program(argv, limit=timeout, stdin=text + "\n")
        except OSError as exc:
            return Result(state="INFEASIBLE", extra={"reason": f"cannot start {argv[0]!r}: {exc.strerror}"})
        return _outcome(proc, timeout, workdir if keep_workdir else None)
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def _outcome(proc: Any, timeout: float, kept: Optional[str]) -> Result:
    base: Dict[str, Any] = {"flow_seconds": round(proc.time, 3)}
    if kept:
        base["workdir"] = kept
    if proc.timeout:
        return Result(state="TIMEOUT", extra=dict(base, reason=f"flow ran past the {timeout:g} s timeout"))
    if proc.returncode != 0:
        return Result(state="INFEASIBLE", extra=dict(base, reason=f"flow exited with code {proc.returncode}",
                                                     stderr_tail=_tail(proc.stderr)))
    try:
        exec_time, fits, extra = parse_output(proc.stdout)
    except ValueError as exc:
        return Result(state="INFEASIBLE", extra=dict(base, reason=f"unparsable flow output: {exc}",
                                                     stderr_tail=_tail(proc.stderr)))
    extra = dict(extra, **base)
    if not fits:
        return Result(state="INFEASIBLE", extra=dict(extra, reason="does not fit (reported by the flow)"))
    return Result(state="OK", time=exec_time, extra=extra)
