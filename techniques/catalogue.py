"""The technique catalogue: one collision-checked table of every technique name, loaded on first use.

An :class:`Entry` names its technique by a *target*: ``"module:attr"`` under
``tunerlib.techniques`` (imported the first time the entry is created, so listing names or
importing the package loads no technique module -- Kernel Tuner's lazy strategy modules) or, for
techniques a tuner script registers, the factory itself.  ``attr`` may be a dotted path such as
``Class.method``.  ``kwargs`` are the preset arguments (``UniformGreedyMutation10`` is GreedyMutation
with ``mutation_rate=0.1``); ``Use(name)`` in them is replaced by a fresh technique of that catalogue
name, and ``Uses(names)`` by a list of them (bundles).

Every entry's options come from its target's ``OPTIONS`` (the schema of :mod:`.options`; empty for a
target without one), so every entry can be

* named and parsed back: ``Name;option,value;...`` (the options that differ from the entry's
  presets; :mod:`.option_names`), which :meth:`Catalogue.create_named` turns into a technique whose
  ``name`` is that canonical text;
* validated: a bad option is a one-line TechniqueError naming it;
* generated at random: :meth:`Catalogue.random_name`.

Registering a name twice, or a composable technique base's root (:data:`.composable_bases.TECHNIQUE_BASES`,
the start of generated names), is an error naming both registrations (Nevergrad's registry).
"""
from __future__ import annotations

import difflib
import random
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from .base import Technique, TechniqueError
from .composable_bases import TECHNIQUE_BASES
from .options import Option, defaults, option_name, random_values, validate

__all__ = ["Catalogue", "Entry", "Use", "Uses"]

PACKAGE = __name__.rsplit(".", 1)[0]
Target = Union[str, Callable[..., Technique]]


@dataclass(frozen=True)
class Use:
    """A preset argument that is a fresh technique of catalogue name ``name``."""

    name: str


@dataclass(frozen=True)
class Uses:
    """A preset argument that is a list of fresh techniques (``factories``: zero-argument makers)."""

    names: Tuple[str, ...]
    factories: bool = False


@dataclass(frozen=True)
class Entry:
    """One catalogue name: target, one-line description, preset arguments; ``listed`` entries
    appear in ``--list-techniques`` and may be picked by generated bandits."""

    name: str
    target: Target
    description: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    listed: bool = True

    @property
    def origin(self) -> str:
        """Where the entry comes from, for collision messages."""
        if isinstance(self.target, str):
            return self.target
        return f"{getattr(self.target, '__module__', '?')}.{getattr(self.target, '__qualname__', self.target)}"


def _load(target: Target) -> Callable[..., Technique]:
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    obj: Any = import_module(f"{PACKAGE}.{module}")
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Catalogue:
    """Name -> :class:`Entry`; creates a fresh technique per call, never shares instances."""

    def __init__(self) -> None:
        self._entries: Dict[str, Entry] = {}
        self._loaded: Dict[str, Callable[..., Technique]] = {}

    # ---- registration -----------------------------------------------------------------------
    def add(self, name: str, target: Target, description: str = "", kwargs: Optional[Mapping[str, Any]] = None,
            listed: bool = True) -> None:
        """Add an entry; a name already in the catalogue raises TechniqueError naming both entries."""
        if not name or any(c.isspace() or c == ";" for c in name):
            raise TechniqueError(f"technique name {name!r} must be non-empty and contain no spaces or ';'")
        entry = Entry(name, target, description, dict(kwargs or {}), listed)
        if name in TECHNIQUE_BASES:
            raise TechniqueError(f"technique name {name!r} is the root of generated composable names "
                                 f"({TECHNIQUE_BASES[name].__module__}); {entry.origin} cannot register it; "
                                 "pick another name")
        old = self._entries.get(name)
        if old is not None:
            raise TechniqueError(f"technique name {name!r} is already registered (by {old.origin}); "
                                 f"{entry.origin} cannot register it too; pick another name")
        self._entries[name] = entry

    def register(self, name: str, factory: Target, description: str = "") -> None:
        """Add a technique factory (or ``"module:attr"``) under ``name`` (duplicates are rejected)."""
        self.add(name, factory, description)

    # ---- lookup -----------------------------------------------------------------------------
    def entry(self, name: str) -> Entry:
        """The entry of ``name``; an unknown name gets close-match suggestions."""
        entry = self._entries.get(name)
        if entry is None:
            raise TechniqueError(self.unknown_message(name))
        return entry

    def target(self, name: str) -> Callable[..., Technique]:
        """The entry's factory, importing its module on first use."""
        if name not in self._loaded:
            self._loaded[name] = _load(self.entry(name).target)
        return self._loaded[name]

    def options(self, name: str) -> Tuple[Option, ...]:
        """The option schema of ``name`` (its target's ``OPTIONS``, or the class of a bound method's)."""
        target = self.target(name)
        schema: Any = getattr(target, "OPTIONS", None)
        if schema is None:
            schema = getattr(getattr(target, "__self__", None), "OPTIONS", ())
        return tuple(schema)

    def presets(self, name: str) -> Dict[str, Any]:
        """The option values ``name`` creates its technique with (schema defaults, then presets)."""
        entry = self.entry(name)
        schema = self.options(name)
        return {**defaults(schema), **{k: v for k, v in entry.kwargs.items() if k in {o.name for o in schema}}}

    # ---- creation ---------------------------------------------------------------------------
    def create(self, name: str, **options: Any) -> Technique:
        """A fresh technique for ``name`` with ``options`` (validated against its schema); its name
        and path are ``name``, or the canonical option name when options differ from the presets."""
        entry = self.entry(name)
        given = validate(self.options(name), options, name) if options else {}
        kwargs = {k: self._resolve(v) for k, v in {**entry.kwargs, **given}.items()}
        tech = self.target(name)(**kwargs)
        tech.name = tech.path = self.option_name(name, given) if given else name
        return tech

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, Use):
            return self.create(value.name)
        if isinstance(value, Uses):
            if value.factories:
                return [lambda n=n: self.create(n) for n in value.names]
            return [self.create(n) for n in value.names]
        return value

    def option_name(self, name: str, options: Mapping[str, Any]) -> str:
        """``name;option,value;...`` with the options that differ from ``name``'s presets."""
        return option_name(name, options, self.presets(name))

    def create_named(self, text: str) -> Technique:
        """A technique for ``Name;option,value;...`` (one-line TechniqueError, with the position,
        for a bad option)."""
        from .option_names import parse_option_name
        root, options = parse_option_name(text, self)
        return self.create(root, **options)

    def random_name(self, name: str, rng: random.Random) -> str:
        """``name`` with every option it does not preset drawn at random (a parseable name)."""
        fixed = self.entry(name).kwargs
        return self.option_name(name, random_values([o for o in self.options(name) if o.name not in fixed], rng))

    # ---- listing ----------------------------------------------------------------------------
    def unknown_message(self, name: str) -> str:
        listed = [n for n, e in self._entries.items() if e.listed]
        close = difflib.get_close_matches(name, listed, n=3, cutoff=0.5)
        hint = close or [n for n in listed if n.lower() == name.lower()]
        did = f"; did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""
        return f"unknown technique {name!r}{did} (--list-techniques lists every name)"

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        """Listed names, sorted."""
        return iter(sorted(n for n, e in self._entries.items() if e.listed))

    def entries(self) -> List[Entry]:
        """Every entry (listed or not), sorted by name."""
        return [self._entries[n] for n in sorted(self._entries)]

    def aliases(self) -> List[Tuple[str, ...]]:
        """Groups of names (sorted) whose entries have the same target and presets: the same technique."""
        groups: Dict[str, List[str]] = {}
        for name in sorted(self._entries):
            entry = self._entries[name]
            key = repr((entry.origin, sorted((k, repr(v)) for k, v in entry.kwargs.items() if k != "name")))
            groups.setdefault(key, []).append(name)
        return [tuple(g) for g in groups.values() if len(g) > 1]

    def describe(self) -> List[Tuple[str, str]]:
        """(name, one-line description) of the listed entries, sorted by name."""
        return [(n, self._entries[n].description) for n in self]
