"""One declarative option schema for every technique.

A technique declares its options once, as a tuple of :class:`Option` (the class attribute
``OPTIONS``; a subclass extends its base's tuple).  Its ``__init__`` takes them as ``**options`` and
hands them to :func:`configure`; it declares no option name, default or range of its own
(tests/techniques/test_option_schema.py checks every catalogue technique).  From that one declaration come

* constructor defaults and checks: :func:`configure` fills the defaults in and checks names, types,
  ranges and choices, each failure a one-line TechniqueError naming the option and the fix;
* the catalogue's options of every entry, the ``--list-techniques`` and docs reference;
* names: :func:`option_name` writes ``Root;option,value;...`` with the options that differ from
  their defaults (the value grammar of :mod:`.naming`), which :mod:`.option_names` parses back;
* random generation: :meth:`Option.random` draws a value in the option's random range.

This module imports no technique, so the catalogue can validate a name without loading the module
that implements it.
"""
from __future__ import annotations

import math
import random
from dataclasses import MISSING, dataclass, fields
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple

from .base import TechniqueError
from .name_encoding import dump_value

__all__ = ["Option", "Schema", "configure", "defaults", "option_name", "random_values", "schema_from_dataclass",
           "validate"]

_TYPE_WORDS = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
               dict: "a list of [name, value] pairs"}


@dataclass(frozen=True)
class Option:
    """One technique option: its type, default, legal range or choices and random-generation range.

    ``type`` is int, float, bool, str or dict (a str -> str mapping, written ``[["k","v"],...]`` in
    names; ``choices`` then constrains its values).  ``lo``/``hi`` bound numbers (None: unbounded),
    ``random_lo``/``random_hi`` bound random draws (default: ``lo``/``hi``), ``optional`` admits
    None.
    """

    name: str
    type: type
    default: Any
    lo: Optional[float] = None
    hi: Optional[float] = None
    random_lo: Optional[float] = None
    random_hi: Optional[float] = None
    doc: str = ""
    choices: Tuple[Any, ...] = ()
    optional: bool = False

    def coerce(self, value: Any, owner: str, word: str = "hyper-parameter") -> Any:
        """``value`` as this option's type; a one-line TechniqueError naming the option when illegal."""
        if value is None and self.optional:
            return None
        if self.type is dict:
            return self._coerce_dict(value, owner, word)
        ok = {int: isinstance(value, int), float: isinstance(value, (int, float)),
              bool: isinstance(value, bool), str: isinstance(value, str)}[self.type]
        if not ok or (isinstance(value, bool) and self.type is not bool):
            none = " or null" if self.optional else ""
            raise TechniqueError(f"{owner}: {word} {self.name!r} must be {_TYPE_WORDS[self.type]}{none}, "
                                 f"got {value!r}")
        value = self.type(value)
        if self.choices and value not in self.choices:
            raise TechniqueError(f"{owner}: {word} {self.name!r}={value!r} is not allowed; "
                                 f"use one of {list(self.choices)}")
        if self.type in (int, float):
            lo = -math.inf if self.lo is None else self.lo
            hi = math.inf if self.hi is None else self.hi
            if not (lo <= value <= hi) or (isinstance(value, float) and not math.isfinite(value)):
                raise TechniqueError(f"{owner}: {word} {self.name!r}={value!r} is out of range; "
                                     f"use a value in [{self.lo}, {self.hi}]")
        return value

    def _coerce_dict(self, value: Any, owner: str, word: str) -> Dict[str, Any]:
        if isinstance(value, list):  # the name form: sorted [key, value] pairs
            if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in value):
                raise TechniqueError(f"{owner}: {word} {self.name!r} must be a list of [name, value] pairs; "
                                     f"write [[\"k\",v]]")
            value = {k: v for k, v in value}
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise TechniqueError(f"{owner}: {word} {self.name!r} must be {_TYPE_WORDS[dict]}, got {value!r}")
        bad = [v for v in value.values() if self.choices and v not in self.choices]
        if bad:
            raise TechniqueError(f"{owner}: {word} {self.name!r} has value {bad[0]!r}; "
                                 f"use one of {list(self.choices)}")
        return dict(value)

    def random(self, rng: random.Random) -> Any:
        """A random legal value: a choice, a coin flip, or uniform in ``[random_lo, random_hi]``
        (floats rounded to 3 decimals); the default for a dict option or a number without a
        random range (a setting nobody should vary blindly, such as a retry count)."""
        if self.type is dict:
            return dict(self.default)
        if self.choices:
            return rng.choice(list(self.choices))
        if self.type is bool:
            return rng.random() < 0.5
        if self.random_lo is None or self.random_hi is None or self.type is str:
            return self.default
        if self.type is int:
            return rng.randint(int(self.random_lo), int(self.random_hi))
        return round(rng.uniform(self.random_lo, self.random_hi), 3)


Schema = Tuple[Option, ...]


def defaults(schema: Iterable[Option]) -> Dict[str, Any]:
    """Every option's default, by name."""
    return {o.name: o.default for o in schema}


def validate(schema: Sequence[Option], values: Mapping[str, Any], owner: str,
             word: str = "option") -> Dict[str, Any]:
    """``values`` checked and coerced; unknown names and bad values are one-line TechniqueErrors."""
    known = {o.name: o for o in schema}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise TechniqueError(f"{owner} has no {word} {unknown[0]!r}; its {word}s are {sorted(known)}")
    return {n: known[n].coerce(v, owner, word) for n, v in values.items()}


def configure(technique: Any, given: Mapping[str, Any], attributes: bool = True) -> Dict[str, Any]:
    """Called by a technique's ``__init__`` with the options it was given: every option of its class's
    ``OPTIONS``, validated (one-line TechniqueError naming a bad one) with the schema's defaults filled
    in, each set as an attribute of ``technique`` (unless ``attributes`` is false); returns the values
    by name (kept for :meth:`~.base.Technique.option_values`).  The constructor therefore declares no
    option itself: names, defaults and ranges live only in the schema."""
    schema: Sequence[Option] = type(technique).OPTIONS
    owner = type(technique).__name__
    values = validate(schema, {**defaults(schema), **given}, owner)
    technique._options = values
    if attributes:
        for name, value in values.items():
            setattr(technique, name, value)
    return dict(values)


def random_values(schema: Sequence[Option], rng: random.Random) -> Dict[str, Any]:
    """A random value for every option (in schema order, so a seed gives the same values)."""
    return {o.name: o.random(rng) for o in schema}


def _name_value(value: Any) -> Any:
    # the name grammar has no JSON objects: a dict option is written as sorted [key, value] pairs
    return [[k, value[k]] for k in sorted(value)] if isinstance(value, dict) else value


def option_name(root: str, values: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    """``root;name,value;...`` with the options of ``values`` that differ from ``base``, sorted."""
    changed = [n for n in sorted(values) if values[n] != base.get(n)]
    return ";".join([root] + [f"{n},{dump_value(_name_value(values[n]))}" for n in changed])


_ANNOTATIONS = {"int": (int, False), "float": (float, False), "bool": (bool, False), "str": (str, False),
                "Optional[int]": (int, True), "Optional[float]": (float, True), "Optional[bool]": (bool, True),
                "Optional[str]": (str, True), "Dict[str, str]": (dict, False)}


def schema_from_dataclass(cls: type, limits: Mapping[str, Mapping[str, Any]]) -> Schema:
    """The schema of an options dataclass: one Option per field (type from the annotation, default
    from the field), with ``limits[field]`` giving its ``lo``/``hi``/``random_lo``/``random_hi``/
    ``choices``/``doc``.  A new field therefore joins the schema, and names, by itself."""
    out = []
    for f in fields(cls):
        annotation = (f.type if isinstance(f.type, str) else f.type.__name__ if isinstance(f.type, type)
                      else str(f.type).replace("typing.", ""))
        if annotation not in _ANNOTATIONS:
            raise TypeError(f"{cls.__name__}.{f.name}: annotation {annotation!r} has no option type; "
                            f"use one of {sorted(_ANNOTATIONS)}")
        typ, optional = _ANNOTATIONS[annotation]
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            raise TypeError(f"{cls.__name__}.{f.name} has no default; give it one")
        out.append(Option(f.name, typ, default, optional=optional, **limits.get(f.name, {})))
    unknown = sorted(set(limits) - {o.name for o in out})
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {unknown[0]!r} to limit")
    return tuple(out)
