"""``--prior FILE``: read user priors from JSON onto the search space, and keep a run's priors across
``--resume``.

Called when a run is set up, before its technique is bound and before its ``tuning_run`` row is
written, so a bad file leaves no run.  The schema is :mod:`tunerlib.parameters.space_prior`'s; the
priors in force (the tuner script's and the file's) are stored in the run's arguments under
:data:`PRIOR_KEY`, and a resumed run gets them back from there.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional

from .errors import UsageError
from .parameters import ConfigurationError, ConfigurationManipulator

__all__ = ["PRIOR_KEY", "apply_prior"]

#: key of the priors in a run's stored arguments
PRIOR_KEY = "prior_definition"


def apply_prior(manipulator: ConfigurationManipulator, path: Optional[str],
                resumed_args: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """Add the priors of ``path`` (may be None) to ``manipulator``; for a resumed run (its stored
    arguments ``resumed_args``) restore the priors it was started with.  Returns the priors to
    store with the run (None when there are none); UsageError (one line) for a bad file or a
    ``--prior`` that differs from the resumed run's."""
    stored = (resumed_args or {}).get(PRIOR_KEY) if resumed_args is not None else None
    if path:
        data = _read(path)
        try:
            manipulator.prior.load_json(data, manipulator)
        except ConfigurationError as exc:
            raise UsageError(f"--prior {path}: {exc}") from None
        if resumed_args is not None and _canon(manipulator.prior.to_json()) != _canon(stored):
            raise UsageError(f"--prior {path}: the resumed run was started with other priors; drop --prior "
                             "(a resumed run keeps its own)")
    elif stored is not None:
        manipulator.prior.clear()
        try:
            manipulator.prior.load_json(stored, manipulator)
        except ConfigurationError as exc:
            raise UsageError(f"--resume: the run's stored priors no longer fit the search space ({exc}); "
                             "start a new run") from None
    return manipulator.prior.to_json() if manipulator.prior else None


def _canon(data: Any) -> str:
    return json.dumps(data, sort_keys=True)


def _read(path: str) -> Any:
    try:
        with open(path) as fh:
            return json.load(fh)
    except OSError as exc:
        raise UsageError(f"--prior {path}: cannot read file ({exc.strerror}); give the path of a JSON "
                         "prior file") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--prior {path}: malformed JSON at line {exc.lineno} column {exc.colno}: "
                         f"{exc.msg}; fix the file") from None
