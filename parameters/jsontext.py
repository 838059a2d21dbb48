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


def compact_encoder(sort_keys: bool = False, ensure_ascii: bool = True,
                    allow_nan: bool = True) -> Callable[[Any], str]:
    """A function giving ``JSONEncoder(separators=(",", ":"), sort_keys=..., ensure_ascii=...,
    allow_nan=...).encode(value)``; it raises what that raises (ValueError for a circular value or,
    with ``allow_nan=False``, a non-finite float; TypeError for a value JSON has no type for)."""
    reference = json.JSONEncoder(separators=(",", ":"), sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                                 allow_nan=allow_nan)
    make = getattr(_json_encoder, "c_make_encoder", None)
    if make is None:
        return reference.encode
    strings = _json_encoder.encode_basestring_ascii if ensure_ascii else _json_encoder.encode_basestring
    # Each thread has its own encoder: the C encoder keeps the containers it is inside in ``markers``
    # (to detect circular values), which must not be shared by two encodings at once.
    per_thread = threading.local()

    def build() -> Tuple[Dict[int, Any], Callable[[Any, int], Any]]:
        markers: Dict[int, Any] = {}
        return markers, make(markers, reference.default, strings, None, ":", ",", sort_keys, False, allow_nan)

    try:
        build()
    except TypeError:  # another signature than this Python's JSONEncoder.iterencode passes
        return reference.encode
    join = "".join

    def encode(value: Any) -> str:
        try:
            markers, chunks = per_thread.encoder
        except AttributeError:
            markers, chunks = per_thread.encoder = build()
        try:
            return join(chunks(value, 0))
        except BaseException:
            markers.clear()  # an encoding stopped part-way leaves its open containers marked
            raise

    try:
        same = encode(_PROBE) == reference.encode(_PROBE)
    except (TypeError, ValueError):
        same = False
    return encode if same else reference.encode
