"""Representations: the canonical parameter-structure string of a search space (DeepTuner thesis
§5.1.1) and the asymmetric parameter-count distance between two of them (thesis §6.1, Step 1).

A space's structure is a list of (parameter info, count) entries, where a parameter info is the
parameter's type name followed by the (parameter info, count) entries of its sub-parameters
(:meth:`Parameter.structure`: an array's elements, a selector's cutoffs). Entries are merged
(equal infos add their counts) and sorted by their JSON text at every level, so neither parameter
order nor names matter. The canonical string is compact JSON, e.g. a TSP tour and two flags::

    [[["BooleanParameter"],2],[["PermutationParameter"],1]]

and a 100-element boolean array ``[[["BooleanArray",[["BooleanParameter"],100]],1]]``.
:func:`decode` parses (never evaluates) a string back into the same entries.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from typing import Any, Dict, Iterable, Mapping, Sequence, Tuple

from ..parameters import ConfigurationManipulator, Parameter

Info = Tuple[Any, ...]            # (type name, (info, count), ...)
Entry = Tuple[Info, int]


class RepresentationError(ValueError):
    """A representation string that cannot be decoded (one line: what is wrong)."""


def _key(entry: Entry) -> str:
    return json.dumps(_to_json(entry), separators=(",", ":"))


def _to_json(entry: Entry) -> list:
    info, count = entry
    return [[info[0], *(_to_json(sub) for sub in info[1:])], count]


def _merge(entries: Iterable[Entry]) -> Tuple[Entry, ...]:
    counts: Dict[Info, int] = Counter()
    for info, count in entries:
        counts[info] += count
    return tuple(sorted(((info, n) for info, n in counts.items() if n > 0), key=_key))


def _parameter_info(type_name: str, subs: Sequence[Tuple[str, int]]) -> Info:
    return (type_name, *_merge(((name,), count) for name, count in subs))


def entries_of(parameters: Iterable[Parameter]) -> Tuple[Entry, ...]:
    """The merged, canonically sorted (parameter info, count) entries of ``parameters``."""
    return _merge((_parameter_info(type(p).__name__, p.structure()), 1) for p in parameters)


def encode(space: ConfigurationManipulator) -> str:
    """The canonical representation string of ``space`` (independent of parameter order and names)."""
    return encode_entries(entries_of(space.parameters))


def encode_entries(entries: Sequence[Entry]) -> str:
    """Canonical string of already merged entries."""
    return json.dumps([_to_json(e) for e in _merge(entries)], separators=(",", ":"))


def structure_hash(text: str) -> str:
    """SHA-256 of a canonical representation string (the store's key column)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def decode(text: str) -> Tuple[Entry, ...]:
    """Parse a representation string into canonical entries; RepresentationError when malformed."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise RepresentationError(f"representation {text!r:.60} is not JSON: {exc}") from None
    if not isinstance(data, list):
        raise RepresentationError(f"representation {text!r:.60} must be a JSON list of [info, count]")
    return _merge(_entry(item, text) for item in data)


def _entry(item: Any, text: str) -> Entry:
    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], list) and item[0]
            and isinstance(item[0][0], str) and item[0][0]
            and isinstance(item[1], int) and not isinstance(item[1], bool) and item[1] >= 1):
        raise RepresentationError(f"representation {text!r:.60}: bad entry {item!r:.60}; expected "
                                  "[[type name, sub-entries...], count >= 1]")
    info, count = item
    return (info[0], *_merge(_entry(sub, text) for sub in info[1:])), count


def type_counts(entries: Sequence[Entry]) -> Dict[str, int]:
    """Total number of parameters of each type, sub-parameters included (counts multiply down)."""
    totals: Dict[str, int] = Counter()

    def walk(items: Sequence[Entry], factor: int) -> None:
        for info, count in items:
            totals[info[0]] += factor * count
            walk(info[1:], factor * count)

    walk(entries, 1)
    return dict(totals)


def magnitude(count: int) -> float:
    """Order-of-magnitude count of a parameter type: ``1 + log10(count)``.

    The thesis uses ``log10(count)``, under which a type held once (``log10 1 = 0``) costs nothing when
    it is missing from the other space; the ``+1`` keeps every missing type at a cost of at least 1 and
    leaves the differences between shared types unchanged."""
    return 1.0 + math.log10(count)


def distance(a: Mapping[str, int], b: Mapping[str, int]) -> float:
    """Asymmetric distance from type counts ``a`` (the space being tuned) to ``b`` (a stored one):
    ``sum over shared types (n_a - n_b)^2 + sum over types only in a n_a^2 + (types only in b)``.

    A superset of ``a``'s types is nearer than a subset: a type missing from ``b`` costs ``n_a^2``
    (at least 1), an extra type in ``b`` costs 1."""
    total = 0.0
    for kind, count in a.items():
        if kind in b:
            total += (magnitude(count) - magnitude(b[kind])) ** 2
        else:
            total += magnitude(count) ** 2
    return total + sum(1.0 for kind in b if kind not in a)
