"""The safe expression language of known constraints (``"tile_x * tile_y <= 1024"``).

The expression language is a small subset of Python expression syntax, parsed by a hand-written
tokenizer and recursive-descent parser into a tree of node classes and interpreted against the
configuration dict.  Nothing is ever handed to ``eval``/``exec``/``compile``; there is no attribute
access, no subscript, no lambda/comprehension, no name beginning with ``__``, and only the functions
of :data:`FUNCTIONS` can be called.  Supported:

* literals: integers, floats (``1.5``, ``2e3``), strings (``'x'`` or ``"x"``), ``True``, ``False``,
  lists ``[a, b, ...]``;
* parameter names (identifiers, or any name between backticks: ```gcc-flag` == 1``);
* ``+ - * / // % **``, unary ``-`` and ``+``, ``not``, ``and``, ``or`` with Python's precedence,
  associativity and short-circuit semantics (``-2 ** 2 == -4``, ``2 ** 3 ** 2 == 512``);
* comparisons ``< <= > >= == != in not in``, chained like Python (``a <= b < c``);
* calls: ``min max abs len log2 int float round index`` (``index(perm, item)`` is the position of
  ``item`` in a permutation value).

Evaluation errors are split in two, and this is the documented policy:

* **undefined arithmetic** -- division or modulo by zero, overflow, ``log2`` of a number <= 0, a
  complex power -- means the configuration does not satisfy the constraint:
  :meth:`~tunerlib.parameters.constraints.Constraint.is_satisfied` returns ``False``
  (``"n % tile == 0"`` with ``tile = 0`` is simply infeasible).  :meth:`Expression.evaluate` raises
  :class:`UndefinedValueError` for these.
* **misuse** -- an operation on the wrong types (``order < 3`` with a list ``order``, arithmetic on
  strings), an ``index()`` item that is not in the permutation, a missing parameter -- is a bug in the
  constraint and raises :class:`ConstraintError` naming the constraint.  A Python *callable* that
  raises anything is treated the same way (``ConstraintError`` chained to the original exception).
  A tuning run checks every constraint when it starts, before it records anything
  (:func:`~tunerlib.parameters.constraints.check_constraints`: misuse on a sampled configuration, or
  arithmetic undefined on all of them, is a one-line error); during the run a misuse on some other
  configuration counts as violating the constraint there, announced by one warning line.

This module holds the errors, the tokenizer, the parser and the public :class:`Expression` /
:func:`parse_expression`; the node classes and functions live in :mod:`.expression_nodes`.
"""
from __future__ import annotations

import keyword
import re
from typing import Any, Callable, FrozenSet, List, Mapping, Optional, Tuple

from .expression_nodes import (FUNCTIONS, MAX_POWER_BITS, Binary, BoolOp, Call, Compare, Const, ListLit,
                               Name, Node, Unary, _Misuse, _short, _Undefined)

__all__ = ["ConstraintError", "UndefinedValueError", "Expression", "parse_expression", "FUNCTIONS",
           "MAX_TEXT_LENGTH", "MAX_DEPTH", "MAX_HEIGHT", "MAX_POWER_BITS",
           "Node", "Const", "Name", "ListLit", "Unary", "Binary", "BoolOp", "Compare", "Call"]


class ConstraintError(ValueError):
    """A constraint is malformed or failed to evaluate (message is one line and names the fix)."""


class UndefinedValueError(ConstraintError):
    """An expression's arithmetic is undefined for this configuration (e.g. division by zero).

    :meth:`Constraint.is_satisfied` treats it as *violated*; it is not a bug in the constraint.
    ``detail`` says what was undefined (``"division by zero"``).
    """

    detail = ""


MAX_TEXT_LENGTH = 4000
MAX_DEPTH = 40
MAX_HEIGHT = 100

# --------------------------------------------------------------------------- tokenizer
_NUMBER = re.compile(r"([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = ("**", "//", "<=", ">=", "==", "!=", "+", "-", "*", "/", "%", "<", ">", "(", ")",
              "[", "]", ",")
_KEYWORDS = {"and", "or", "not", "in", "True", "False"}
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}
_BAD_CHARS = {
    "=": ("'=' is assignment", "compare with '=='"),
    "!": ("'!' is not an operator", "use 'not' or '!='"),
    "&": ("bitwise/C operators are not supported", "use 'and'"),
    "|": ("bitwise/C operators are not supported", "use 'or'"),
    "^": ("bitwise operators are not supported", "use '**' for powers"),
    "~": ("bitwise operators are not supported", "use 'not' or '-'"),
    ".": ("attribute access is not allowed", "constraints may only read parameters by name"),
    "{": ("sets and dicts are not supported", "use a list literal [a, b]"),
    "}": ("sets and dicts are not supported", "use a list literal [a, b]"),
}


class _Tok:
    __slots__ = ("kind", "value", "pos")

    def __init__(self, kind: str, value: Any, pos: int) -> None:
        self.kind, self.value, self.pos = kind, value, pos  # kind: NUM STR NAME KW OP END


def _fail(text: str, pos: int, problem: str, hint: str) -> ConstraintError:
    shown = text if len(text) <= 80 else text[:77] + "..."
    return ConstraintError(f"constraint {shown!r}: {problem} at column {pos + 1}; {hint}")


def _tokenize(text: str) -> List[_Tok]:
    toks: List[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if _NUMBER.match(text, i):
            i = _read_number(text, i, toks)
        elif _NAME.match(text, i):
            i = _read_name(text, i, toks)
        elif ch in "'\"":
            i = _read_string(text, i, toks)
        elif ch == "`":
            end = text.find("`", i + 1)
            if end < 0 or end == i + 1:
                raise _fail(text, i, "unterminated or empty `quoted name`", "close it with a backtick")
            _check_name(text, i, text[i + 1:end])
            toks.append(_Tok("NAME", text[i + 1:end], i))
            i = end + 1
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
            if op is None:
                problem, hint = _BAD_CHARS.get(ch, (f"unexpected character {ch!r}",
                                                    "see the operator list in tunerlib.parameters.constraints"))
                raise _fail(text, i, problem, hint)
            toks.append(_Tok("OP", op, i))
            i += len(op)
    toks.append(_Tok("END", None, n))
    return toks


def _read_number(text: str, i: int, toks: List[_Tok]) -> int:
    m = _NUMBER.match(text, i)
    assert m is not None
    lit, end = m.group(0), m.end()
    if end < len(text) and (text[end].isalnum() or text[end] == "_"):
        raise _fail(text, i, f"malformed number starting {text[i:end + 1]!r}",
                    "write decimal numbers like 8, 0.5 or 1e3")
    is_int = m.group(1).isdigit() and not m.group(2)
    if is_int and len(lit) > 1 and lit[0] == "0" and lit.strip("0"):
        raise _fail(text, i, f"leading zeros in {lit!r}", "write the number without leading zeros")
    toks.append(_Tok("NUM", int(lit) if is_int else float(lit), i))
    return end


def _check_name(text: str, pos: int, name: str) -> None:
    if name.startswith("__"):
        raise _fail(text, pos, f"name {name!r} starts with '__'", "dunder names are not allowed")


def _read_name(text: str, i: int, toks: List[_Tok]) -> int:
    m = _NAME.match(text, i)
    assert m is not None
    word = m.group(0)
    if word in _KEYWORDS:
        toks.append(_Tok("KW", word, i))
    elif keyword.iskeyword(word):
        hint = "use '==' or '!='" if word == "is" else "only and/or/not/in/True/False are supported"
        raise _fail(text, i, f"'{word}' is not supported in constraints", hint)
    else:
        _check_name(text, i, word)
        toks.append(_Tok("NAME", word, i))
    return m.end()


def _read_string(text: str, i: int, toks: List[_Tok]) -> int:
    quote, j, out = text[i], i + 1, []
    while j < len(text) and text[j] != quote:
        if text[j] == "\n":
            break
        if text[j] == "\\":
            esc = text[j + 1] if j + 1 < len(text) else ""
            if esc not in _ESCAPES:
                what = f"'\\{esc}'" if esc.isprintable() else f"(a backslash before {esc!r})"
                raise _fail(text, j, f"unsupported escape {what}", "use \\\\, \\', \\\", \\n or \\t")
            out.append(_ESCAPES[esc])
            j += 2
            continue
        out.append(text[j])
        j += 1
    if j >= len(text) or text[j] != quote:
        raise _fail(text, i, "unterminated string", f"close it with {quote}")
    toks.append(_Tok("STR", "".join(out), i))
    return j + 1


# --------------------------------------------------------------------------- parser
_COMP_OPS = {"<", "<=", ">", ">=", "==", "!="}


class _Parser:
    """Recursive descent following Python's expression grammar (or/and/not/comparison/arith/...)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.depth = 0

    # -- helpers
    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def at(self, kind: str, *values: Any) -> bool:
        t = self.tok
        return t.kind == kind and (not values or t.value in values)

    def take(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, tok: Optional[_Tok] = None, expected: str = "an operand") -> ConstraintError:
        tok = tok or self.tok
        if tok.kind == "END":
            prev = self.toks[self.i - 1] if self.i else None
            opened = self.unclosed()
            if opened is not None:
                hint = f"close the {opened.value!r} opened at column {opened.pos + 1}"
            elif prev is not None and prev.kind in ("OP", "KW") and prev.value not in (")", "]", "True", "False"):
                hint = f"write e.g. {self.text.rstrip()[-60:] + ' 8'!r}"
            else:
                hint = "complete the expression, e.g. 'a < 8'"
            return _fail(self.text, tok.pos, "unexpected end of expression", hint)
        return _fail(self.text, tok.pos, f"unexpected {_short(tok.value)}", f"expected {expected}")

    def unclosed(self) -> Optional[_Tok]:
        """The innermost '(' or '[' not closed before the current token, if any."""
        stack: List[_Tok] = []
        for t in self.toks[: self.i]:
            if t.kind == "OP" and t.value in "([":
                stack.append(t)
            elif t.kind == "OP" and t.value in ")]" and stack:
                stack.pop()
        return stack[-1] if stack else None

    def expect(self, value: str, what: str) -> _Tok:
        if not self.at("OP", value):
            raise self.error(expected=what)
        return self.take()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _fail(self.text, self.tok.pos, "expression nested too deeply",
                        f"use at most {MAX_DEPTH} levels of parentheses/operators")

    def tall(self, node: Optional[Node], tok: _Tok) -> Any:
        """Return ``node`` unless the tree grows taller than MAX_HEIGHT (None: always too tall)."""
        if node is None or node.h > MAX_HEIGHT:
            raise _fail(self.text, tok.pos, "expression too long",
                        f"chain at most {MAX_HEIGHT} operators or use a Python callable")
        return node

    # -- grammar
    def parse(self) -> Node:
        if not self.text.strip():
            raise _fail(self.text, 0, "empty expression", "write e.g. 'a < 8'")
        node = self.expression()
        if not self.at("END"):
            t = self.tok
            if t.kind == "OP" and t.value == ",":
                raise _fail(self.text, t.pos, "tuples are not supported", "use a list literal [a, b]")
            raise self.error(expected="an operator or the end of the expression")
        return node

    def expression(self) -> Node:
        self.enter()
        node = self.boolop("or", self.and_test)
        self.depth -= 1
        return node

    def and_test(self) -> Node:
        return self.boolop("and", self.not_test)

    def boolop(self, word: str, sub: Callable[[], Node]) -> Node:
        nodes = [sub()]
        while self.at("KW", word):
            tok = self.take()
            nodes.append(sub())
            if len(nodes) > MAX_HEIGHT:
                self.tall(None, tok)
        return nodes[0] if len(nodes) == 1 else BoolOp(word, nodes)

    def not_test(self) -> Node:
        if self.at("KW", "not"):
            self.take()
            self.enter()
            node = Unary("not", self.not_test())
            self.depth -= 1
            return node
        return self.comparison()

    def comparison(self) -> Node:
        first = self.arith()
        rest: List[Tuple[str, Node]] = []
        while True:
            if self.at("OP", *_COMP_OPS):
                op = self.take().value
            elif self.at("KW", "in"):
                self.take()
                op = "in"
            elif self.at("KW", "not") and self.toks[self.i + 1].kind == "KW" and self.toks[self.i + 1].value == "in":
                self.i += 2
                op = "not in"
            else:
                break
            rest.append((op, self.arith()))
            if len(rest) > MAX_HEIGHT:
                self.tall(None, self.tok)
        return Compare(first, rest) if rest else first

    def arith(self) -> Node:
        node = self.term()
        while self.at("OP", "+", "-"):
            tok = self.take()
            node = self.tall(Binary(tok.value, node, self.term()), tok)
        return node

    def term(self) -> Node:
        node = self.factor()
        while self.at("OP", "*", "/", "//", "%"):
            tok = self.take()
            node = self.tall(Binary(tok.value, node, self.factor()), tok)
        return node

    def factor(self) -> Node:
        if self.at("OP", "-", "+"):
            op = self.take().value
            self.enter()
            node = self.factor()
            self.depth -= 1
            return Unary(op, node)
        return self.power()

    def power(self) -> Node:
        base = self.primary()
        if self.at("OP", "**"):
            tok = self.take()
            self.enter()
            node = self.tall(Binary("**", base, self.factor()), tok)
            self.depth -= 1
            return node
        return base

    def primary(self) -> Node:
        start = self.tok
        node = self.atom()
        if self.at("OP", "("):
            if not isinstance(node, Name) or start.kind != "NAME":
                raise _fail(self.text, self.tok.pos, "only whitelisted functions can be called",
                            f"call one of {', '.join(FUNCTIONS)}")
            node = self.call(start)
        if self.at("OP", "["):
            raise _fail(self.text, self.tok.pos, "subscripts are not allowed",
                        "use index(perm, item) for positions in a permutation")
        return node

    def call(self, name_tok: _Tok) -> Node:
        name = name_tok.value
        if name not in FUNCTIONS:
            raise _fail(self.text, name_tok.pos, f"unknown function {name!r}",
                        f"use one of {', '.join(FUNCTIONS)}")
        self.take()  # '('
        args = self.sequence(")", "an argument or ')'")
        _, lo, hi = FUNCTIONS[name]
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise _fail(self.text, name_tok.pos, f"{name}() takes {want} argument(s), got {len(args)}",
                        f"call it like {name}({', '.join(['x', 'y'][:max(lo, 1)])})")
        return Call(name, args)

    def sequence(self, close: str, what: str) -> List[Node]:
        items: List[Node] = []
        while not self.at("OP", close):
            items.append(self.expression())
            if self.at("OP", ","):
                self.take()
            elif not self.at("OP", close):
                raise self.error(expected=f"',' or '{close}'")
        self.take()
        return items

    def atom(self) -> Node:
        t = self.tok
        if t.kind in ("NUM", "STR"):
            self.take()
            return Const(t.value)
        if t.kind == "KW" and t.value in ("True", "False"):
            self.take()
            return Const(t.value == "True")
        if t.kind == "NAME":
            self.take()
            return Name(t.value)
        if self.at("OP", "("):
            self.take()
            if self.at("OP", ")"):
                raise _fail(self.text, t.pos, "empty parentheses", "put an expression inside ( )")
            node = self.expression()
            if self.at("OP", ","):
                raise _fail(self.text, self.tok.pos, "tuples are not supported", "use a list literal [a, b]")
            self.expect(")", "')'")
            return node
        if self.at("OP", "["):
            self.take()
            self.enter()
            node = ListLit(self.sequence("]", "a list item or ']'"))
            self.depth -= 1
            return node
        raise self.error()


# --------------------------------------------------------------------------- public API
class Expression:
    """A parsed, safe constraint expression.

    ``names`` is the set of parameter names it reads; ``evaluate(config)`` returns its value.
    Created by :func:`parse_expression`; immutable and cheap to evaluate repeatedly.
    """

    __slots__ = ("text", "names", "_root")

    def __init__(self, text: str, root: Node) -> None:
        self.text = text
        self._root = root
        found: set = set()
        root.collect(found)
        self.names: FrozenSet[str] = frozenset(found)

    def evaluate(self, config: Mapping[str, Any], label: Optional[str] = None) -> Any:
        """Evaluate against ``config`` (called per configuration); returns the expression's value.

        Raises :class:`UndefinedValueError` for undefined arithmetic and :class:`ConstraintError`
        for misuse; ``label`` names the constraint in the message (default: the text).
        """
        try:
            return self._root.ev(config)
        except (_Undefined, ZeroDivisionError, OverflowError) as exc:
            err = UndefinedValueError(f"constraint {label or self.text!r}: undefined arithmetic "
                                      f"({exc}); the configuration counts as violating it")
            err.detail = str(exc)
            raise err from None
        except (_Misuse, TypeError) as exc:
            raise ConstraintError(f"constraint {label or self.text!r}: {exc}; fix the expression "
                                  "or the parameter values it reads") from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expression) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


def parse_expression(text: str) -> Expression:
    """Parse a constraint expression string (see the module docstring) into an :class:`Expression`.

    Raises :class:`ConstraintError` with a one-line message naming the column of the problem.
    """
    if not isinstance(text, str):
        raise ConstraintError(f"constraint expression must be a string, got {type(text).__name__}")
    if len(text) > MAX_TEXT_LENGTH:
        raise ConstraintError(f"constraint expression is {len(text)} characters long; "
                              f"keep it under {MAX_TEXT_LENGTH} or use a Python callable")
    return Expression(text, _Parser(text).parse())
