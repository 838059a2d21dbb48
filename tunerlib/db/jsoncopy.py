"""Copies of JSON column values: what a JSON column gives back, without a decode when it can be avoided."""
from __future__ import annotations

import json
from typing import Any, Optional

from .migrations import json_dumps

__all__ = ["is_plain_json", "json_copy"]

_NOT_PLAIN = object()


def _plain_copy(value: Any) -> Any:
    """A copy of a value made only of JSON's own types (str, int, float, bool, None, lists, dicts with
    str keys), or _NOT_PLAIN."""
    cls = value.__class__
    if cls is str or cls is float or cls is int or cls is bool or value is None:
        return value
    if cls is list:
        items = [_plain_copy(v) for v in value]
        return _NOT_PLAIN if any(v is _NOT_PLAIN for v in items) else items
    if cls is dict:
        out = {}
        for key, item in value.items():
            if key.__class__ is not str:
                return _NOT_PLAIN
            kind = item.__class__
            if kind is float or kind is int or kind is str or kind is bool or item is None:
                out[key] = item  # a scalar: no call (most values of a configuration or an extra)
                continue
            copied = _plain_copy(item)
            if copied is _NOT_PLAIN:
                return _NOT_PLAIN
            out[key] = copied
        return out
    return _NOT_PLAIN


def is_plain_json(value: Any, depth: int = 0) -> bool:
    """True when ``value`` is made only of JSON's own types (as :func:`json_copy` copies them), at most
    32 levels deep: such a value encodes as JSON without a check."""
    cls = value.__class__
    if cls is str or cls is float or cls is int or cls is bool or value is None:
        return True
    if depth >= 32:
        return False
    if cls is list:
        return all(is_plain_json(v, depth + 1) for v in value)
    if cls is dict:
        return all(k.__class__ is str and is_plain_json(v, depth + 1) for k, v in value.items())
    return False


def json_copy(value: Any, text: Optional[str] = None) -> Any:
    """``json.loads(text)``, where ``text`` is :func:`~tunerlib.db.migrations.json_dumps` of ``value``
    (given or encoded here): what a JSON column gives back.  A value made only of JSON's own types is
    copied instead (the same result: floats, ints and strings survive JSON unchanged), several times
    cheaper than decoding; tuples, other key types and other classes go through JSON."""
    copied = _plain_copy(value)
    if copied is not _NOT_PLAIN:
        return copied
    return json.loads(json_dumps(value) if text is None else text)
