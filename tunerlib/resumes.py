"""The resumes of a run: each ``--resume`` records when it continued the run, after how many results,
and which tuner script versions it joined, so that reports can mark a resumed run instead of drawing
it as one uninterrupted search. Kept as the run artifact :data:`RESUMES` (``save_run_artifact`` of the
results storage)."""
from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

__all__ = ["RESUMES", "read_resumes", "record_resume"]

#: the run-artifact name under which a run keeps its resumes
RESUMES = "resumes"


def read_resumes(saved: Any) -> List[Dict[str, Any]]:
    """The resume entries of a saved :data:`RESUMES` state (``[]`` for None or anything else):
    dicts with ``after_tests``, ``date`` (Unix seconds), ``script_version`` and
    ``previous_script_version``."""
    entries = saved.get("resumes") if isinstance(saved, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def record_resume(db: Any, run_id: int, resumed_from: Dict[str, Any], script_version: Optional[str]) -> None:
    """Called when ``--resume`` has taken the run ``resumed_from`` (a run-selection dict with
    ``tests`` and the ``script_version`` it recorded): append this resume to the run's record."""
    entries = read_resumes(db.load_run_artifact(run_id, RESUMES))
    entries.append({"after_tests": int(resumed_from.get("tests") or 0), "date": time.time(),
                    "script_version": script_version,
                    "previous_script_version": resumed_from.get("script_version")})
    db.save_run_artifact(run_id, RESUMES, {"resumes": entries})
