"""Hashable keys of parameter values (called per value by membership tests, encoders and priors):
lists become tuples, booleans never equal numbers, dicts become sorted item tuples.
"""
from __future__ import annotations

from typing import Any, Hashable


_PLAIN = (int, float, str)


def value_key(value: Any) -> Hashable:
    """A hashable key for a parameter value (called per value by membership tests and encoders):
    lists become tuples, booleans never equal numbers, dicts become sorted item tuples."""
    t = type(value)
    if t is int or t is float or t is str:
        return value
    if t is list:
        if all(type(v) in _PLAIN for v in value):
            return tuple(value)
        return tuple([value_key(v) for v in value])
    if isinstance(value, list):
        return tuple(value_key(v) for v in value)
    if isinstance(value, bool):
        return ("\0bool", value)
    if isinstance(value, dict):
        return tuple(sorted((k, value_key(v)) for k, v in value.items()))
    return value
