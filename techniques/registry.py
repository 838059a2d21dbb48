"""Name → technique factory registry (collision-checked; creates a fresh instance per call)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Tuple

from .base import Technique, TechniqueError

Factory = Callable[[], Technique]


@dataclass(frozen=True)
class Entry:
    name: str
    factory: Factory
    description: str


class TechniqueRegistry:
    """Holds factories, never live technique instances."""

    def __init__(self) -> None:
        self._entries: Dict[str, Entry] = {}

    def register(self, name: str, factory: Factory, description: str = "") -> None:
        """Add ``name``; a name registered twice raises TechniqueError."""
        if not name or any(c.isspace() for c in name):
            raise TechniqueError(f"technique name {name!r} must be non-empty and contain no spaces")
        if name in self._entries:
            raise TechniqueError(f"technique name {name!r} is already registered; pick another name")
        self._entries[name] = Entry(name, factory, description)

    def create(self, name: str) -> Technique:
        """A fresh technique for ``name``; unknown names get close-match suggestions."""
        entry = self._entries.get(name)
        if entry is None:
            raise TechniqueError(self.unknown_message(name))
        tech = entry.factory()
        tech.name = name
        tech.path = name
        return tech

    def unknown_message(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._entries), n=3, cutoff=0.5)
        lower = [n for n in self._entries if n.lower() == name.lower()]
        hint = close or lower
        did = f"; did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""
        return f"unknown technique {name!r}{did} (--list-techniques lists every name)"

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def describe(self) -> List[Tuple[str, str]]:
        """(name, one-line description) pairs, sorted by name."""
        return [(n, self._entries[n].description) for n in sorted(self._entries)]
