"""Live status line and the final summary."""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Optional, TextIO


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

    def interrupted_line(self) -> str:
        """The one line printed when a signal stopped the run."""
        best = "no successful measurement yet" if self.best_value is None else \
            f"best {self.objective} so far {self.best_value:.6g}"
        return (f"interrupted by {self.signal} after {self.tests} tests; {best}; completed results are "
                f"kept: continue with --resume {self.run_uuid} --database {self.database}")

    def write_json(self, path: str) -> None:
        with open(path, "w") as fh:
            json.dump(asdict(self), fh, indent=2, sort_keys=True)

    def render(self) -> str:
        best = "none (no successful measurement)" if self.best_value is None else f"{self.best_value:.6g}"
        cfg = json.dumps(self.best_configuration, sort_keys=True)
        if len(cfg) > 400:
            cfg = cfg[:400] + " ..."
        states = self.states_text() or "none"
        lines = [
            f"tunerlib: {self.program}: stopped ({self.stopped_because}) after {self.tests} tests "
            f"in {self.elapsed_seconds:.1f} s",
            f"  best {self.objective}: {best}",
            f"  best configuration: {cfg}",
            f"  results: {states}; duplicates reused: {self.duplicates}",
        ]
        if self.first_error:
            lines.append(f"  first error ({self.first_error}); every error's full text: "
                         f"tunerlib errors {self.database} --run {self.run_uuid}")
        lines.append(f"  run {self.run_uuid} (seed {self.seed}) in {self.database}")
        return "\n".join(lines)


class StatusLine:
    """Prints a status line every ``frequency`` seconds (in place on a terminal)."""

    def __init__(self, frequency: float, quiet: bool, stream: Optional[TextIO] = None) -> None:
        self.stream = stream or sys.stderr
        self.frequency = frequency
        self.enabled = not quiet and frequency > 0
        self.tty = self.enabled and self.stream.isatty()
        self.start = time.perf_counter()
        self.next_at = self.start + frequency

    def update(self, tests: int, best: Optional[float], outstanding: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now < self.next_at:
            return
        self.next_at = now + self.frequency
        best_txt = "-" if best is None or not math.isfinite(best) else f"{best:.6g}"
        line = f"[{now - self.start:7.1f}s] tests {tests:6d}  best {best_txt}  in flight {outstanding}"
        if self.tty:
            self.stream.write("\r" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def __call__(self, run: Any, event: Any) -> None:
        """As a run callback: refresh after each result."""
        self.update(event.tests, event.best, run.search.outstanding)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

