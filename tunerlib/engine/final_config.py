"""The end of a run as the tuner saw it.

* The tuner's own form of its best configuration: what ``save_final_config`` printed at the end of a
  run (a tour in TSPLIB order, a Halide schedule, a table next to the baselines), kept with the run so
  that ``tunerlib report`` can show it later without running the tuner again.  Stored as the run
  artifact :data:`FINAL_FORM` (``{"text": ...}``; ``save_run_artifact`` of the results storage).
* The re-timed best: a tuner whose ``save_final_config`` re-times the fastest configurations at the
  end (a single recorded measurement on a busy machine is often a lucky sample) returns a
  :class:`RetimedBest` naming the one it reports.  The run then reports that configuration everywhere
  -- the summary, ``--summary-json``, ``tunerlib report`` -- with its re-timed value and the value
  recorded during the search.  Stored as the run artifact :data:`FINAL_BEST` (see :func:`final_best`).
"""
from __future__ import annotations

import io
import math
import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Optional, TextIO, Tuple

from ..result import Result

__all__ = ["FINAL_BEST", "FINAL_FORM", "MAX_CHARS", "RetimedBest", "call_captured", "call_captured_returning",
           "final_best", "final_form_text", "settle_final_best"]

#: run-artifact name under which a run keeps what save_final_config printed
FINAL_FORM = "final_config"
#: run-artifact name under which a run keeps the re-timed best (:func:`final_best`)
FINAL_BEST = "final_best"


@dataclass(frozen=True)
class RetimedBest:
    """Returned by ``save_final_config`` when the tuner re-timed finalists at the end.

    ``config``: the configuration the tuner reports as the best; it must be one the run measured OK
    (its recorded value is kept next to the re-timed one).  ``value``: its re-timed value in the
    objective's metric as the user sees it (seconds for :class:`~tunerlib.MinimizeTime`).  ``how``: one
    line saying how it was re-timed, e.g. ``"min of 7 interleaved rounds with 4 other finalists"``.
    """

    config: Dict[str, Any]
    value: float
    how: str = "re-timed at the end of the run"

    def problem(self) -> Optional[str]:
        """Why this cannot be the run's best (a bad value), or None."""
        if not isinstance(self.config, dict):
            return f"RetimedBest.config must be a dict, got {type(self.config).__name__}"
        if (not isinstance(self.value, (int, float)) or isinstance(self.value, bool)
                or not math.isfinite(self.value)):
            return f"RetimedBest.value must be a finite number, got {self.value!r}"
        return None


def settle_final_best(returned: Any, manipulator: Any, objective: Any, progress: Any,
                      results: Callable[[], Iterable[Any]]) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """(the :data:`FINAL_BEST` record, None) for what ``save_final_config`` returned, or (None, why it
    cannot be the run's best) -- (None, None) for None.  Called once by the run at the end.

    ``progress``: the search's progress (``known``: configuration hash -> (oriented value, state) of
    what was measured; ``best``: the search's recorded best); ``results()``: the run's result rows,
    read only to find the recorded result of a re-timed configuration other than the search's best.
    """
    if returned is None:
        return None, None
    if not isinstance(returned, RetimedBest):
        return None, f"returned {type(returned).__name__}, expected None or tunerlib.RetimedBest"
    why = returned.problem()
    if why is not None:
        return None, why
    try:
        manipulator.validate(returned.config)
        key = manipulator.hash_config(returned.config)
    except Exception as exc:   # ConfigurationError: not a configuration of this space
        return None, f"the re-timed configuration is not one of the space: {exc}"
    recorded = progress.known.get(key)
    if recorded is None or recorded[1] != "ok" or not math.isfinite(recorded[0]):
        return None, "the re-timed configuration has no OK result in this run"
    best = progress.best
    return {"configuration": manipulator.normalize(returned.config), "hash": key, "value": float(returned.value),
            "recorded_value": objective.display(recorded[0]),
            "result_id": best.result_id if best.key == key else _recorded_result_id(key, objective, results()),
            "how": str(returned.how),
            "search_best": {"hash": best.key, "value": objective.display(best.value),
                            "result_id": best.result_id}}, None


def _recorded_result_id(key: str, objective: Any, rows: Iterable[Any]) -> Optional[int]:
    """Id of the best OK result of configuration ``key`` among the run's result ``rows``."""
    values = {row.id: objective.value(Result(state=row.state, time=row.time, accuracy=row.accuracy,
                                             energy=row.energy, size=row.size, extra=row.extra or {}))
              for row in rows if row.config_hash == key and row.state == "OK"}
    return min(values, key=lambda rid: (values[rid], rid)) if values else None


def final_best(state: Any) -> Optional[Dict[str, Any]]:
    """The stored :data:`FINAL_BEST` artifact of a run (``store.load_run_artifact(run_id, FINAL_BEST)``),
    or None when the run has none.

    Keys: ``configuration``, ``hash`` (of the configuration, as the results database keys it),
    ``value`` (re-timed), ``recorded_value`` (the configuration's value recorded during the search),
    ``result_id`` (that recorded result), ``how``, and ``search_best`` (``hash``, ``value``,
    ``result_id`` of the best the search recorded, which can be another configuration)."""
    if isinstance(state, dict) and isinstance(state.get("hash"), str) and "configuration" in state:
        return state
    return None
#: the last this many characters are kept
MAX_CHARS = 20000


class _Tee(io.TextIOBase):
    """Writes go to ``stream`` (the user still sees them) and are kept in ``kept``."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()


def call_captured(fn: Callable[[Dict[str, Any]], Any], config: Dict[str, Any]) -> str:
    """Call ``fn(config)`` (a save_final_config) and return what it printed to stdout (also printed)."""
    return call_captured_returning(fn, config)[0]


def call_captured_returning(fn: Callable[[Dict[str, Any]], Any], config: Dict[str, Any]) -> Tuple[str, Any]:
    """Call ``fn(config)``: (what it printed to stdout, which is also printed; what it returned)."""
    tee, saved = _Tee(sys.stdout), sys.stdout
    sys.stdout = tee
    try:
        returned = fn(config)
    finally:
        sys.stdout = saved
    return tee.kept.getvalue(), returned


def final_form_text(state: Any) -> Optional[str]:
    """The stored text of a :data:`FINAL_FORM` state, or None."""
    if isinstance(state, dict) and isinstance(state.get("text"), str) and state["text"].strip():
        return state["text"]
    return None
