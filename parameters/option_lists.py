"""Option lists of the choice parameters (enum, ordinal, selector): the constructors' checks of a
list of distinct JSON scalars and of an integer count, and the lookup of a value's position in such
a list (booleans and numbers never collide there, ``1`` and ``1.0`` do).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from .base import ParameterError


def _is_json_scalar(x: Any) -> bool:
    if x is None or isinstance(x, (bool, str, int)):
        return True
    return isinstance(x, float) and math.isfinite(x)


def _key(x: Any) -> Optional[Tuple[str, Any]]:
    """Lookup key of a scalar: bools and numbers never collide, ``1`` and ``1.0`` do."""
    if x is None:
        return ("z", None)
    if isinstance(x, bool):
        return ("b", x)
    if isinstance(x, str):
        return ("s", x)
    if isinstance(x, numbers.Real) and not math.isnan(x):
        return ("n", x)
    return None


def _check_options(name: str, field: str, options: Any) -> List[Any]:
    """Validate a non-empty list of distinct JSON scalars (constructor helper); returns a list copy."""
    if isinstance(options, (str, bytes, Mapping)) or not isinstance(options, Sequence):
        raise ParameterError(f"parameter {name!r}: {field} must be a list, got {options!r}")
    out = list(options)
    if not out:
        raise ParameterError(f"parameter {name!r}: {field} must not be empty")
    seen = set()
    for x in out:
        if not _is_json_scalar(x):
            raise ParameterError(f"parameter {name!r}: {field} must be JSON scalars "
                                 f"(str, int, float, bool, None), got {x!r}")
        if _key(x) in seen:
            raise ParameterError(f"parameter {name!r}: duplicate entry {x!r} in {field}; remove it")
        seen.add(_key(x))
    return out


class _Index:
    """Maps option values to their positions; ``strict`` also requires the exact type."""

    def __init__(self, options: Sequence[Any]) -> None:
        self.options = list(options)
        self.pos = {_key(x): i for i, x in enumerate(options)}

    def find(self, value: Any, strict: bool) -> Optional[int]:
        try:
            i = self.pos.get(_key(value))
        except TypeError:  # unhashable value
            return None
        if i is None or (strict and type(value) is not type(self.options[i])):
            return None
        return i


def _check_int(name: str, field: str, x: Any, low: int) -> int:
    integral = isinstance(x, numbers.Integral) or (isinstance(x, float) and x.is_integer())
    if isinstance(x, bool) or not integral or x < low:
        raise ParameterError(f"parameter {name!r}: {field} must be an integer >= {low}, got {x!r}")
    return int(x)

