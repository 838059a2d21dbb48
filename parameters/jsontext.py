"""Compact JSON encoders built once and called for every value.

``json.JSONEncoder.encode`` builds its C encoder (and a Python closure) anew on every call; for a
configuration of a few numbers that costs about as much as the encoding itself, and the search encodes
each configuration and result on the hot path (its hash, the stored configuration and ``extra``).
:func:`compact_encoder` builds the C encoder once per thread and gives the same text as ``JSONEncoder.encode``
with the same options (checked on a probe value when it is built; where the C encoder is missing or
answers differently it is ``JSONEncoder.encode`` itself).
"""
from __future__ import annotations

import json
import threading
from json import encoder as _json_encoder
from typing import Any, Callable, Dict, Tuple

__all__ = ["compact_encoder"]

#: a value whose text shows the options at work: key order, floats, escapes, nesting
_PROBE = {"b": [1.5, -0.0, 10**20, True, None, "é\"\\\n"], "a": {"d": 1, "c": [0.1, []]}}


class _CompactEncoder:
    """``reference.encode`` through a C encoder built once per thread.  A callable object rather than
    a closure: callers that cache per function (psycopg's JSON dumpers key their cache on the function
    and refuse a closure, with a warning) can keep it."""

    __slots__ = ("reference", "make", "strings", "per_thread")

    def __init__(self, reference: json.JSONEncoder, make: Callable[..., Any]) -> None:
        self.reference, self.make = reference, make
        self.strings = (_json_encoder.encode_basestring_ascii if reference.ensure_ascii
                        else _json_encoder.encode_basestring)
        # Each thread has its own encoder: the C encoder keeps the containers it is inside in
        # ``markers`` (to detect circular values), which must not be shared by two encodings at once.
        self.per_thread = threading.local()

    def build(self) -> Tuple[Dict[int, Any], Callable[[Any, int], Any]]:
        """A fresh C encoder and its markers (raises TypeError where this Python's signature differs)."""
        markers: Dict[int, Any] = {}
        r = self.reference
        return markers, self.make(markers, r.default, self.strings, None, ":", ",", r.sort_keys, False,
                                  r.allow_nan)

    def __call__(self, value: Any) -> str:
        try:
            markers, chunks = self.per_thread.encoder
        except AttributeError:
            markers, chunks = self.per_thread.encoder = self.build()
        try:
            return "".join(chunks(value, 0))
        except BaseException:
            markers.clear()  # an encoding stopped part-way leaves its open containers marked
            raise


def compact_encoder(sort_keys: bool = False, ensure_ascii: bool = True,
                    allow_nan: bool = True) -> Callable[[Any], str]:
    """A callable giving ``JSONEncoder(separators=(",", ":"), sort_keys=..., ensure_ascii=...,
    allow_nan=...).encode(value)``; it raises what that raises (ValueError for a circular value or,
    with ``allow_nan=False``, a non-finite float; TypeError for a value JSON has no type for)."""
    reference = json.JSONEncoder(separators=(",", ":"), sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                                 allow_nan=allow_nan)
    make = getattr(_json_encoder, "c_make_encoder", None)
    if make is None:
        return reference.encode
    encode = _CompactEncoder(reference, make)
    try:
        encode.build()
    except TypeError:  # another signature than this Python's JSONEncoder.iterencode passes
        return reference.encode
    try:
        same = encode(_PROBE) == reference.encode(_PROBE)
    except (TypeError, ValueError):
        same = False
    return encode if same else reference.encode
