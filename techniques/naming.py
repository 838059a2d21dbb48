"""Generated technique names that round-trip (DeepTuner thesis §5.2), and random composable techniques.

A composable technique's generated name encodes its technique base, every hyper-parameter and its
operator map, so :func:`technique_from_name` rebuilds an equal technique.  Grammar (``{}`` = zero or
more, ``|`` inside quotes is a literal character)::

    name     ::= base { SEP entry }
    base     ::= ROOT { ";" IDENT "," JSON }            -- hyper-parameter name, value
    entry    ::= KIND ";" IDENT ";" ARGS                -- parameter kind, operator, arguments
    ARGS     ::= "[" { JSON "," } "[" [ PAIR { "," PAIR } ] "]" "]"
    PAIR     ::= "[" JSONSTRING "," JSON "]"            -- operator hyper-parameter name, value
    SEP      ::= "|"                                    -- (one or more spaces also accepted on input)
    ROOT, IDENT, KIND ::= [A-Za-z_][A-Za-z0-9_]*

* ``ROOT`` is a technique-base class name (:data:`.composable_bases.TECHNIQUE_BASES`), ``KIND`` a
  parameter kind (``int``, ``permutation``, ...), ``IDENT`` after it an operator of that kind.
* ``JSON`` is one compact JSON value (no NaN/Infinity, no objects): numbers, ``true``/``false``,
  ``null``, double-quoted strings with JSON escapes (so strings may hold ``;``, ``|`` or spaces),
  lists.  Output uses ``json.dumps(v, separators=(",", ":"), ensure_ascii=True)`` with spaces in
  strings written ``\\u0020``, so a name never contains whitespace; floats are written by ``repr``
  (always with ``.`` or an exponent, so ``30`` is an int and ``30.0`` a float).
* ``ARGS`` is the thesis' ``[arg1,...,argn,[[kw1,v1],...]]``: positional operator hyper-parameters,
  then the keyword pairs as the last element (``[[]]`` when there are none).
* Canonical order: every hyper-parameter of the base, sorted by name; entries sorted by kind; keyword
  pairs sorted by name.  On input, omitted hyper-parameters take their defaults and order is free.

Example (one line)::

    GreedyComposableTechnique;crossover_rate,0.5;population_size,30|float;op3_swarm;[[["c",0.6]]]|permutation;op3_cross_OX1;[[["strength",0.3]]]

Names contain ``;``, ``|`` and ``"``: quote them in a shell (``--technique '...'``).  The thesis
separates operator entries by spaces; a space is accepted in place of ``|`` when parsing, but names
are always written with ``|`` so they contain no whitespace.  Parsing never evaluates code: it is a
hand-written scanner plus :class:`json.JSONDecoder` for the values.  Errors are one-line
TechniqueErrors naming the character position and the fix.
"""
from __future__ import annotations

import json
import random
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple, Type, Union

from ..parameters import ConfigurationManipulator, Parameter
from .base import Technique, TechniqueError
from .composable import ComposableEvolutionaryTechnique
from .composable_bases import TECHNIQUE_BASES
from .name_encoding import SEP, composable_name
from .options import defaults, option_name
from .operator_map import (OperatorChoice, OperatorMap, check_choice, is_json_value, kinds_of,
                           parameter_class, random_choice)

_IDENT_START = re.compile(r"[A-Za-z_]")
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")



def technique_name(tech: Technique) -> str:
    """The generated name of a composable technique, or of a technique whose class is named by its
    options (``NAMED_BY_OPTIONS``: ``Class;option,value;...``); other techniques' names are returned
    as they are (a technique made from an option name carries that name)."""
    if tech.NAMED_BY_OPTIONS:
        return option_name(type(tech).__name__, tech.option_values(), defaults(type(tech).OPTIONS))
    if not isinstance(tech, ComposableEvolutionaryTechnique):
        return tech.name
    return composable_name(tech)


# ---- parsing --------------------------------------------------------------------------------
def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


class _Scanner:
    """Cursor over a name; every error is a one-line TechniqueError with the position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, problem: str, fix: str, pos: Optional[int] = None) -> TechniqueError:
        at = self.pos if pos is None else pos
        near = self.text[at:at + 20]
        where = f"near {near!r}" if near else "at the end"
        return TechniqueError(f"bad technique name at character {at} ({where}): {problem}; {fix}")

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def ident(self, what: str, example: str) -> str:
        start = self.pos
        if _IDENT_START.match(self.peek()):
            self.pos += 1
            while self.peek() and _IDENT_CHAR.match(self.peek()):
                self.pos += 1
        if self.pos == start:
            raise self.fail(f"expected {what}", f"write an identifier such as {example}")
        return self.text[start:self.pos]

    def expect(self, char: str, after: str, fix: str) -> None:
        if self.peek() != char:
            raise self.fail(f"expected {char!r} after {after}", fix)
        self.pos += 1

    def json_value(self, what: str, example: str) -> Any:
        start = self.pos
        try:
            value, end = _DECODER.raw_decode(self.text, self.pos)
        except ValueError as exc:
            raise self.fail(f"{what} is not a JSON value ({str(exc).splitlines()[0]})",
                            f"write compact JSON such as {example}", start) from None
        if not is_json_value(value):
            raise self.fail(f"{what} must be a number, string, boolean, null or list",
                            f"write compact JSON such as {example}", start)
        self.pos = end
        return value

    def separator(self) -> None:
        if self.peek() == SEP:
            self.pos += 1
        elif self.peek() == " ":
            while self.peek() == " ":
                self.pos += 1
        else:
            raise self.fail("unexpected character", "separate operator-map entries with '|' and "
                            "write hyper-parameters as ;name,value")


def _split_args(sc: _Scanner, raw: Any, start: int, where: str) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    fix = 'write [arg1,...,[["kw",value],...]] (use [[]] for none)'
    if not isinstance(raw, list) or not raw or not isinstance(raw[-1], list):
        raise sc.fail(f"operator arguments of {where} must be a list ending in a list of pairs", fix, start)
    kwargs: Dict[str, Any] = {}
    for pair in raw[-1]:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise sc.fail(f"keyword argument {pair!r} of {where} is not a [\"name\",value] pair", fix, start)
        if pair[0] in kwargs:
            raise sc.fail(f"keyword argument {pair[0]!r} of {where} is given twice", "give it once", start)
        kwargs[pair[0]] = pair[1]
    return tuple(raw[:-1]), kwargs


def parse_hparams(sc: _Scanner, word: str = "hyper-parameter") -> Tuple[Dict[str, Any], Dict[str, int]]:
    """``{;name,value}`` from the cursor on: (values, character position of each)."""
    hparams: Dict[str, Any] = {}
    where: Dict[str, int] = {}
    while sc.peek() == ";":
        sc.pos += 1
        start = sc.pos
        name = sc.ident(f"a {word} name", "crossover_rate")
        sc.expect(",", f"{word} name {name!r}", f"write {name},value")
        if name in hparams:
            raise sc.fail(f"{word} {name!r} is given twice", "give it once", start)
        hparams[name] = sc.json_value(f"the value of {name!r}", "0.5")
        where[name] = start
    return hparams, where


def _parse_base(sc: _Scanner) -> Tuple[str, Dict[str, Any], Dict[str, int]]:
    root = sc.ident("a technique base name", "GreedyComposableTechnique")
    hparams, where = parse_hparams(sc)
    return root, hparams, where


def _entry_error(sc: _Scanner, exc: TechniqueError, start: int) -> TechniqueError:
    problem, _, fix = str(exc).partition("; ")
    return sc.fail(problem, fix or "fix this operator-map entry", start)


def _parse_entries(sc: _Scanner) -> Tuple[Dict[str, OperatorChoice], Dict[str, int]]:
    entries: Dict[str, OperatorChoice] = {}
    where: Dict[str, int] = {}
    while not sc.at_end():
        sc.separator()
        start = sc.pos
        kind = sc.ident("a parameter kind", "permutation")
        sc.expect(";", f"parameter kind {kind!r}", f"write {kind};operator;[[]]")
        op = sc.ident("an operator name", "op3_cross_OX1")
        sc.expect(";", f"operator {op!r}", f"write {kind};{op};[[]]")
        arg_start = sc.pos
        raw = sc.json_value(f"the arguments of {kind};{op}", '[[["strength",0.3]]]')
        args, kwargs = _split_args(sc, raw, arg_start, f"{kind};{op}")
        if kind in entries:
            raise sc.fail(f"parameter kind {kind!r} has two entries", "keep one entry per kind", start)
        try:
            entries[kind] = OperatorChoice(op, args, kwargs)
            check_choice(kind, entries[kind])
        except TechniqueError as exc:
            raise _entry_error(sc, exc, start) from None
        where[kind] = start
    return entries, where


def parse_name(name: str) -> Tuple[str, Dict[str, Any], Dict[str, OperatorChoice]]:
    """Split a generated name into (root, hyper-parameters, operator-map entries), checking the
    grammar, the base, each hyper-parameter and each entry (operator and arity) with positions."""
    if not isinstance(name, str):
        raise TechniqueError(f"a technique name must be a string, got {type(name).__name__}")
    sc = _Scanner(name)
    root, hparams, hpos = _parse_base(sc)
    cls = TECHNIQUE_BASES.get(root)
    if cls is None:
        raise sc.fail(f"unknown technique base {root!r}", f"start with one of {sorted(TECHNIQUE_BASES)}", 0)
    known = {h.name: h for h in cls.OPTIONS}
    for hname, value in hparams.items():
        if hname not in known:
            raise sc.fail(f"{root} has no hyper-parameter {hname!r}", f"use one of {sorted(known)}", hpos[hname])
        try:
            hparams[hname] = known[hname].coerce(value, root)
        except TechniqueError as exc:
            raise _entry_error(sc, exc, hpos[hname]) from None
    minimum = cls(**hparams).minimum_number_of_parents()
    entries, epos = _parse_entries(sc)
    for kind, choice in entries.items():
        try:
            OperatorMap({kind: choice}).check_parents(minimum, root)
        except TechniqueError as exc:
            raise _entry_error(sc, exc, epos[kind]) from None
    return root, hparams, entries


def technique_from_name(name: str) -> ComposableEvolutionaryTechnique:
    """A new technique equal to the one ``name`` was generated from (TechniqueError, one line, if bad)."""
    root, hparams, entries = parse_name(name)
    try:
        return TECHNIQUE_BASES[root](operator_map=entries, **hparams)
    except TechniqueError as exc:
        raise TechniqueError(f"bad technique name {_short(name)}: {exc}") from None


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def is_generated_name(name: str) -> bool:
    """True when ``name`` starts with a known technique-base root (i.e. :func:`resolve` should parse it)."""
    sc = _Scanner(name)
    try:
        root = sc.ident("", "")
    except TechniqueError:
        return False
    return root in TECHNIQUE_BASES and (sc.at_end() or sc.peek() in (";", SEP, " "))


def resolve(name: str) -> Technique:
    """A fresh composable technique for a generated name (``--technique`` support); its name and
    path are the canonical generated name."""
    tech = technique_from_name(name)
    tech.name = tech.path = technique_name(tech)
    return tech


# ---- random generation ----------------------------------------------------------------------
KindsLike = Union[ConfigurationManipulator, Iterable[Union[str, Parameter]]]


def _kinds(space: KindsLike) -> List[str]:
    if isinstance(space, ConfigurationManipulator):
        return kinds_of(space.parameters)
    out = set()
    for item in space:
        if isinstance(item, Parameter):
            out.update(kinds_of([item]))
        else:
            parameter_class(item)  # validates
            out.add(item)
    return sorted(out)


def random_composable(rng: random.Random, space: KindsLike,
                      bases: Optional[Iterable[Type[ComposableEvolutionaryTechnique]]] = None
                      ) -> ComposableEvolutionaryTechnique:
    """A random composable technique for the kinds of ``space`` (a manipulator or kinds/parameters).

    Picks a technique base uniformly (default: every registered base, by root name), each
    hyper-parameter uniformly in its ``random_lo..random_hi`` range (population 10-50, crossover
    rate 0.1-0.9 greedy / 0.1-1.0 DE, best probability 0-0.5), and for every kind present one
    operator (not ``op1_nop``) whose arity the base supports, with hyper-parameters drawn from the
    ranges in :mod:`.operator_map`.
    """
    pool = sorted(bases or TECHNIQUE_BASES.values(), key=lambda c: c.root_name())
    cls = rng.choice(pool)
    hparams = {h.name: h.random(rng) for h in cls.OPTIONS}
    minimum = cls(**hparams).minimum_number_of_parents()
    op_map = {kind: random_choice(kind, minimum, rng) for kind in _kinds(space)}
    return cls(operator_map=op_map, **hparams)


__all__ = ["SEP", "is_generated_name", "parse_hparams", "parse_name", "random_composable", "resolve",
           "technique_from_name", "technique_name"]
