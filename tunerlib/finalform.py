"""The tuner's own form of its best configuration: what ``save_final_config`` printed at the end of a
run (a tour in TSPLIB order, a Halide schedule, a table next to the baselines), kept with the run so that
``tunerlib report`` can show it later without running the tuner again.

The text is stored as the JSON state ``{"text": ...}`` of the reserved technique-state name
:data:`FINAL_FORM` (no technique is named so: registered names have no colon).
"""
from __future__ import annotations

import io
import sys
from typing import Any, Callable, Dict, Optional, TextIO

__all__ = ["FINAL_FORM", "MAX_CHARS", "call_captured", "final_form_text"]

#: technique-state name under which a run keeps what save_final_config printed
FINAL_FORM = "tunerlib:final_config"
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


def call_captured(fn: Callable[[Dict[str, Any]], None], config: Dict[str, Any]) -> str:
    """Call ``fn(config)`` (a save_final_config) and return what it printed to stdout (also printed)."""
    tee, saved = _Tee(sys.stdout), sys.stdout
    sys.stdout = tee
    try:
        fn(config)
    finally:
        sys.stdout = saved
    return tee.kept.getvalue()


def final_form_text(state: Any) -> Optional[str]:
    """The stored text of a :data:`FINAL_FORM` state, or None."""
    if isinstance(state, dict) and isinstance(state.get("text"), str) and state["text"].strip():
        return state["text"]
    return None
