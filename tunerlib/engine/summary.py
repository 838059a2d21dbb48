"""The summary of a finished run: what ``TuningRun.run`` returns and the tuner script prints."""
from __future__ import annotations

import time
from typing import Any, Dict, Optional

from ..front import front_fields
from ..interrupts import signal_name
from .cross_session import decisions_extra
from .limits import timeout_notice
from .progress import Summary

__all__ = ["summary"]


def summary(run: Any, reason: str) -> Summary:
    """The Summary of a run that stopped for ``reason`` (called once, after it finished): the best
    configuration (the re-timed best when the tuner reported one), counts, timing and notices."""
    best = run.search.progress.best
    extra: Dict[str, Any] = decisions_extra(run.technique)
    if run.resumed:
        extra["resumed_after_tests"] = run.resumed_from["tests"]
        extra["history_replay"] = getattr(run, "history_replay", "results")
    final = run.final_best
    recorded = None if best is None else run.objective.display(best.value)
    retimed = None
    if final is not None:
        retimed = {"how": final["how"], "search_best_value": final["search_best"]["value"],
                   "search_best_was_another_configuration": final["search_best"]["hash"] != final["hash"]}
        recorded = final["recorded_value"]
    return Summary(
        program=run.interface.program_name(), run_uuid=run.uuid,
        objective=run.objective.describe(), unit=run.objective.unit,
        best_value=(None if best is None else run.objective.display(best.value)) if final is None
        else final["value"],
        best_configuration=(None if best is None else best.config) if final is None
        else final["configuration"],
        recorded_value=recorded, retimed=retimed,
        tests=run.search.progress.tests, states=dict(run.search.progress.states),
        duplicates=run.search.progress.duplicates,
        elapsed_seconds=time.perf_counter() - run.start, stopped_because=reason,
        technique=run.technique.name, seed=run.seed, database=run.db.display_url,
        first_error=_first_error_text(run.search.progress.first_error),
        notice=timeout_notice(run.options, run.objective, best, run.search.progress.states, run.search.progress.tests),
        signal=None if run.signal is None else signal_name(run.signal), extra=extra,
        **front_fields(run.search.progress.front, run.objective))


def _first_error_text(first: Optional[tuple]) -> Optional[str]:
    """``result N: <last line of the error>`` for the run's first ERROR result, or None."""
    if first is None:
        return None
    result_id, extra = first
    text = ""
    if isinstance(extra, dict):
        for key in ("error", "traceback", "stderr", "message"):
            value = extra.get(key)
            if isinstance(value, str) and value.strip():
                text = value.strip().splitlines()[-1]
                break
    return f"result {result_id}: {text or 'no message (the Result has no error text in extra)'}"

