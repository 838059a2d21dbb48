"""Parsing ``Name;option,value;...`` technique names (the catalogue's option names).

``Name`` is any catalogue name (it may hold ``-``, as ``pso-OX1``); the options use the value
grammar of :mod:`.naming` (compact JSON; a dict option is a list of ``[name, value]`` pairs).
Errors are one-line TechniqueErrors with the character position.
"""
from __future__ import annotations

from typing import Any, Dict, Protocol, Sequence, Tuple

from .base import TechniqueError
from .naming import _Scanner, parse_hparams

__all__ = ["OptionSchemas", "parse_option_name"]


class OptionSchemas(Protocol):
    """What parsing reads of the technique catalogue (``Catalogue`` is one)."""

    def __contains__(self, name: object) -> bool:
        """True when ``name`` is a catalogue name."""
        ...

    def options(self, name: str) -> Sequence[Any]:
        """The option schema (``techniques.options.Option`` entries) of the catalogue name ``name``."""
        ...


def parse_option_name(text: str, catalogue: OptionSchemas) -> Tuple[str, Dict[str, Any]]:
    """(catalogue name, validated options) of ``text``."""
    root = text.split(";", 1)[0]
    sc = _Scanner(text)
    if root not in catalogue:
        raise sc.fail(f"unknown technique {root!r}", "start with a name --list-techniques lists", 0)
    sc.pos = len(root)
    values, where = parse_hparams(sc, "option")
    if not sc.at_end():
        raise sc.fail(f"{root} takes options only", "drop the operator-map entries", sc.pos)
    schema = {o.name: o for o in catalogue.options(root)}
    options = {}
    for name, value in values.items():
        if name not in schema:
            fix = f"use one of {sorted(schema)}" if schema else f"write just {root}"
            raise sc.fail(f"{root} has no option {name!r}", fix, where[name])
        try:
            options[name] = schema[name].coerce(value, root, "option")
        except TechniqueError as exc:
            problem, _, fix = str(exc).partition("; ")
            raise sc.fail(problem, fix or "write a legal value", where[name]) from None
    return root, options
