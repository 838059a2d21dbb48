"""Live status line and the final summary."""
from __future__ import annotations

import json
import math
import os
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, TextIO

from ..front import front_lines


def value_text(value: float, unit: Optional[str]) -> str:
    """``6.7938e-05 s``: a value of the objective with its unit (the bare number when ``unit`` is None)."""
    return f"{value:.6g}" if unit is None else f"{value:.6g} {unit}"


@dataclass
class Summary:
    """What a finished run reports (also written by --summary-json)."""

    program: str
    run_uuid: str
    objective: str
    best_value: Optional[float]
    best_configuration: Optional[Dict[str, Any]]
    tests: int
    states: Dict[str, int]
    duplicates: int
    elapsed_seconds: float
    stopped_because: str
    technique: str
    seed: Optional[int]
    database: str
    #: ``result N: <last line of its error text>`` of the run's first ERROR result, or None
    first_error: Optional[str] = None
    #: the signal that interrupted the run (``SIGINT``, ``SIGTERM``), or None
    signal: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)
    #: the best configuration's value recorded during the search (equal to ``best_value`` unless the
    #: tuner re-timed it at the end)
    recorded_value: Optional[float] = None
    #: None, or how the tuner re-timed its finalists at the end (``save_final_config`` returned a
    #: ``tunerlib.RetimedBest``): ``how``, ``search_best_value`` (the best value the search recorded)
    #: and ``search_best_was_another_configuration``; ``best_value`` is then the re-timed value
    retimed: Optional[Dict[str, Any]] = None
    #: the objective's unit (``"s"`` for ``minimize time``), None when it has none or is not known;
    #: printed after every value of the objective
    unit: Optional[str] = None
    #: one line about the run the user should act on (over a third of the results TIMEOUT), or None
    notice: Optional[str] = None
    #: a multi-objective run's Pareto front, ``[{"configuration": {...}, "objectives": {"time": ..., ...}}]``
    #: (``best_*`` then describe the first objective); None for a single objective
    pareto_front: Optional[List[Dict[str, Any]]] = None
    #: the unit of each objective of a multi-objective run (``{"time": "s", "energy": "J"}``), else None
    objective_units: Optional[Dict[str, Optional[str]]] = None

    @property
    def exit_code(self) -> int:
        """0 when something succeeded, 1 when no measurement did, 128+N when signal N interrupted it."""
        if self.signal is not None:
            import signal as signals
            return 128 + int(getattr(signals, self.signal))
        return 0 if self.best_value is not None else 1

    def states_text(self) -> str:
        """``ERROR 4, OK 7``: results by state ("" when there are none)."""
        return ", ".join(f"{k} {v}" for k, v in sorted(self.states.items()))

    def value_text(self, value: float) -> str:
        """``6.7938e-05 s``: a value of the objective with its unit (the bare number when unitless)."""
        return value_text(value, self.unit)

    def interrupted_line(self) -> str:
        """The one line printed when a signal stopped the run."""
        best = "no successful measurement yet" if self.best_value is None else \
            f"best {self.objective} so far {self.value_text(self.best_value)}"
        return (f"interrupted by {self.signal} after {self.tests} tests; {best}; completed results are "
                f"kept: continue with {self.resume_arguments()}")

    def resume_arguments(self) -> str:
        """``--resume UUID --database PATH``: the options that continue this run (shell-quoted)."""
        return f"--resume {self.run_uuid} --database {shlex.quote(self.database)}"

    def _best_label(self) -> str:
        if self.pareto_front is None:
            return self.objective
        return f"{self.objective.split(', ')[0]} (first objective)"

    def write_json(self, path: str) -> None:
        with open(path, "w") as fh:
            json.dump(asdict(self), fh, indent=2, sort_keys=True)

    def render(self) -> str:
        """The summary printed when the run ends (values with the objective's unit, when it has one)."""
        best = ("none (no successful measurement)" if self.best_value is None
                else self.value_text(self.best_value))
        if self.retimed is not None and self.best_value is not None and self.recorded_value is not None:
            best += (f" ({self.retimed['how']}; recorded during the search: "
                     f"{self.value_text(self.recorded_value)})")
        cfg = json.dumps(self.best_configuration, sort_keys=True)
        if len(cfg) > 400:
            cfg = cfg[:400] + " ..."
        states = self.states_text() or "none"
        lines = [
            f"tunerlib: {self.program}: stopped ({self.stopped_because}) after {self.tests} tests "
            f"in {self.elapsed_seconds:.1f} s",
            f"  best {self._best_label()}: {best}",
            f"  best configuration: {cfg}",
        ]
        if self.retimed is not None and self.retimed.get("search_best_was_another_configuration"):
            searched = self.value_text(self.retimed["search_best_value"])
            lines.append(f"  (the search's recorded best, {searched}, was another configuration; the re-timing "
                         "at the end preferred this one)")
        lines += front_lines(self.pareto_front, self.objective_units)
        lines += [
            f"  results: {states}; duplicates reused: {self.duplicates}",
        ]
        if self.notice:
            lines.append(f"  note: {self.notice}")
        if self.first_error:
            lines.append(f"  first error ({self.first_error}); every error's full text: "
                         f"tunerlib errors {self.database} --run {self.run_uuid}")
        lines.append(f"  run {self.run_uuid} (seed {self.seed}) in {self.database}")
        if self.stopped_because == "time limit reached":
            lines.append(f"  continue it with {self.resume_arguments()}")
        return "\n".join(lines)


class StatusLine:
    """The live view of a run (``--display-frequency``; nothing with ``--quiet`` or a frequency of 0).

    It shows the tests done (of ``--test-limit``), the time left (``--stop-after``), the best value,
    evaluations per second, failures (ERROR / TIMEOUT / INFEASIBLE) and measurements in flight; the best
    value is followed by the objective's ``unit`` (``best 0.00042 s``), bare when it has none. On a
    terminal it is a progress bar drawn by tqdm (extra ``[progress]``), or a line rewritten in place
    where tqdm is not installed; elsewhere (a file, a pipe, CI) it is a log line every ``frequency``
    seconds. The terminal test is made on the stream it writes to (stderr by default), so standard
    output stays free for the summary.
    """

    def __init__(self, frequency: float, quiet: bool, stream: Optional[TextIO] = None,
                 total: Optional[int] = None, stop_after: Optional[float] = None,
                 bar: Optional[bool] = None, unit: Optional[str] = None) -> None:
        self.stream = stream or sys.stderr
        self.unit = unit
        self.frequency = frequency
        self.enabled = not quiet and frequency > 0
        self.tty = self.enabled and self.stream.isatty()
        self.total, self.stop_after = total, stop_after
        self.start = time.perf_counter()
        self.next_at = self.start + frequency
        self.failures = 0
        self.first_tests = 0
        #: tqdm bar (None: plain lines); ``bar=False`` forces plain lines
        self.bar: Any = None
        self.want_bar = self.tty and bar is not False

    def begin(self, tests: int) -> None:
        """Called once the run is prepared: ``tests`` results exist already (a resumed run)."""
        self.first_tests = tests
        self.start = time.perf_counter()
        self.next_at = self.start + self.frequency
        if self.want_bar:
            self.bar = _tqdm_bar(self.stream, self.total, tests, self.frequency)

    def fields(self, tests: int, best: Optional[float], outstanding: int) -> str:
        """``tests 12/100  best 3.5 s  4.2 evals/s  failures 1  in flight 2  time left 7s``."""
        elapsed = time.perf_counter() - self.start
        best_txt = self.best_text(best)
        rate = (tests - self.first_tests) / elapsed if elapsed > 0 else 0.0
        limit = f"/{self.total}" if self.total is not None else ""
        text = (f"tests {tests:6d}{limit}  best {best_txt}  {rate:.3g} evals/s  failures {self.failures}"
                f"  in flight {outstanding}")
        if self.stop_after is not None:
            text += f"  time left {max(0.0, self.stop_after - elapsed):.0f}s"
        return text

    def update(self, tests: int, best: Optional[float], outstanding: int, force: bool = False) -> None:
        """Show the state after a result (or while waiting for one): the bar at once, lines every
        ``frequency`` seconds."""
        if not self.enabled:
            return
        if self.bar is not None:
            self._update_bar(tests, best, outstanding)
            return
        now = time.perf_counter()
        if not force and now < self.next_at:
            return
        self.next_at = now + self.frequency
        line = f"[{now - self.start:7.1f}s] " + self.fields(tests, best, outstanding)
        self.stream.write(f"\r{line}\033[K" if self.tty else line + "\n")
        self.stream.flush()

    def best_text(self, best: Optional[float]) -> str:
        """``3.5 s`` (the objective's unit), ``3.5`` when unitless, ``-`` before the first result."""
        return "-" if best is None or not math.isfinite(best) else value_text(best, self.unit)

    def _update_bar(self, tests: int, best: Optional[float], outstanding: int) -> None:
        post = f"best {self.best_text(best)}  failures {self.failures}  in flight {outstanding}"
        if self.stop_after is not None:
            post += f"  time left {max(0.0, self.stop_after - (time.perf_counter() - self.start)):.0f}s"
        self.bar.set_postfix_str(post, refresh=False)
        self.bar.update(tests - self.bar.n)

    def __call__(self, run: Any, event: Any) -> None:
        """As a run callback: refresh after each result (nothing to count when nothing is shown)."""
        if not self.enabled:
            return
        self.failures = sum(n for state, n in run.states.items() if state != "OK")
        self.update(event.tests, event.best, run.outstanding)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _tqdm_bar(stream: TextIO, total: Optional[int], initial: int, frequency: float) -> Any:
    """A tqdm progress bar on ``stream``, or None when tqdm (extra ``[progress]``) is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    sized = _columns(stream) > 0       # a terminal that reports no width (a bare pty) gets 100 columns
    return tqdm(total=total, initial=initial, file=stream, unit="eval", desc="tuning", dynamic_ncols=sized,
                ncols=None if sized else 100, nrows=None if sized else 24, mininterval=min(frequency, 0.5), smoothing=0.1, leave=True)


def _columns(stream: TextIO) -> int:
    """The width of the terminal behind ``stream`` (0 when unknown)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 0
