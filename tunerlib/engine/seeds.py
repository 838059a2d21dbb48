"""Seed configurations: read ``--seed-configuration`` files and check every seed against the space.

Called when a run is set up, before its ``tuning_run`` row is written, so a bad seed leaves no run.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Sequence

from ..errors import UsageError
from ..parameters import ConfigurationError, ConfigurationManipulator

__all__ = ["checked_seed_configurations", "load_seed_file"]


def checked_seed_configurations(manipulator: ConfigurationManipulator, from_interface: Iterable[Dict[str, Any]],
                                paths: Sequence[str]) -> List[Dict[str, Any]]:
    """The interface's seeds then those of each file, normalised; UsageError naming the first bad one."""
    configs = list(from_interface)
    for path in paths:
        configs.extend(load_seed_file(path))
    return [_checked(manipulator, i, cfg) for i, cfg in enumerate(configs)]


def _checked(manipulator: ConfigurationManipulator, i: int, cfg: Dict[str, Any]) -> Dict[str, Any]:
    try:
        norm = manipulator.normalize(cfg)
        manipulator.validate(norm)
    except (ConfigurationError, ValueError) as exc:
        raise UsageError(f"seed configuration #{i + 1}: {exc}") from None
    for name in manipulator.names:
        if norm[name] != cfg[name]:  # normalize() clipped or rounded: not a legal value
            param = manipulator.parameter(name)
            raise UsageError(f"seed configuration #{i + 1}: parameter {name!r}: value "
                             f"{cfg[name]!r} is not legal ({param.describe()})")
    if not manipulator.is_feasible(norm):
        bad = ", ".join(manipulator.violated_constraints(norm))
        raise UsageError(f"seed configuration #{i + 1} violates known constraint(s): {bad}")
    return norm


def load_seed_file(path: str) -> List[Dict[str, Any]]:
    """Read a JSON file holding one configuration object or a list of them."""
    try:
        with open(path) as fh:
            data = json.load(fh)
    except OSError as exc:
        raise UsageError(f"--seed-configuration {path}: cannot read file ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--seed-configuration {path}: malformed JSON at line {exc.lineno} "
                         f"column {exc.colno}: {exc.msg}") from None
    items = data if isinstance(data, list) else [data]
    if not all(isinstance(item, dict) for item in items):
        raise UsageError(f"--seed-configuration {path}: expected a JSON object (parameter name → "
                         f"value) or a list of them")
    return items
