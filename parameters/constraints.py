"""Known constraints: predicates over a configuration, and a safe expression language for them.

A :class:`Constraint` is either a Python callable ``f(config) -> bool`` that declares the names of the
parameters it reads, or an *expression string* such as ``"tile_x * tile_y <= 1024"`` or
``"index(order, 'i') < index(order, 'j')"``, whose reads are found by the parser.

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
  :meth:`Constraint.is_satisfied` returns ``False`` (``"n % tile == 0"`` with ``tile = 0`` is simply
  infeasible).  :meth:`Expression.evaluate` raises :class:`UndefinedValueError` for these.
* **misuse** -- an operation on the wrong types (``order < 3`` with a list ``order``, arithmetic on
  strings), an ``index()`` item that is not in the permutation, a missing parameter -- is a bug in the
  constraint and raises :class:`ConstraintError` naming the constraint.  A Python *callable* that
  raises anything is treated the same way (``ConstraintError`` chained to the original exception).
"""
from __future__ import annotations

import json
import keyword
import math
import operator as _op
import re
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple


class ConstraintError(ValueError):
    """A constraint is malformed or failed to evaluate (message is one line and names the fix)."""


class UndefinedValueError(ConstraintError):
    """An expression's arithmetic is undefined for this configuration (e.g. division by zero).

    :meth:`Constraint.is_satisfied` treats it as *violated*; it is not a bug in the constraint.
    """


class _Misuse(Exception):
    """Internal: a type/usage error while evaluating; becomes a ConstraintError."""


class _Undefined(Exception):
    """Internal: undefined arithmetic while evaluating; becomes an UndefinedValueError."""


MAX_TEXT_LENGTH = 4000
MAX_DEPTH = 40
MAX_HEIGHT = 100
MAX_POWER_BITS = 100_000

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
                raise _fail(text, j, f"unsupported escape '\\{esc}'", "use \\\\, \\', \\\", \\n or \\t")
            out.append(_ESCAPES[esc])
            j += 2
            continue
        out.append(text[j])
        j += 1
    if j >= len(text) or text[j] != quote:
        raise _fail(text, i, "unterminated string", f"close it with {quote}")
    toks.append(_Tok("STR", "".join(out), i))
    return j + 1


# --------------------------------------------------------------------------- evaluation helpers
def _num(x: Any, what: str) -> Any:
    if isinstance(x, (int, float)):
        return x
    raise _Misuse(f"{what} needs numbers, got {type(x).__name__} {_short(x)}")


def _short(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 40 else r[:37] + "..."


def _pow(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1 \
            and b * abs(a).bit_length() > MAX_POWER_BITS:
        raise _Undefined("power too large")
    r = a ** b
    if isinstance(r, complex):
        raise _Undefined("complex power")
    return r


_ARITH: Dict[str, Callable[[Any, Any], Any]] = {
    "+": _op.add, "-": _op.sub, "*": _op.mul, "/": _op.truediv, "//": _op.floordiv,
    "%": _op.mod, "**": _pow,
}


def _contains(a: Any, b: Any) -> bool:
    if not isinstance(b, (list, str)):
        raise _Misuse(f"'in' needs a list or string on its right, got {type(b).__name__} {_short(b)}")
    if isinstance(b, str) and not isinstance(a, str):
        raise _Misuse(f"'in <string>' needs a string on its left, got {_short(a)}")
    return a in b


_COMPARE: Dict[str, Callable[[Any, Any], bool]] = {
    "<": _op.lt, "<=": _op.le, ">": _op.gt, ">=": _op.ge, "==": _op.eq, "!=": _op.ne,
    "in": _contains, "not in": lambda a, b: not _contains(a, b),
}


def _f_minmax(fn: Callable) -> Callable:
    def call(*args: Any) -> Any:
        items = args[0] if len(args) == 1 else list(args)
        if not isinstance(items, list):
            raise _Misuse(f"{fn.__name__}() of one argument needs a list, got {_short(items)}")
        if not items:
            raise _Misuse(f"{fn.__name__}() of an empty list")
        return fn(items)
    return call


def _f_log2(x: Any) -> float:
    x = _num(x, "log2()")
    if x <= 0:
        raise _Undefined("log2 of a number <= 0")
    return math.log2(x)


def _f_convert(kind: type) -> Callable[[Any], Any]:
    def call(x: Any) -> Any:
        if not isinstance(x, (int, float, str)):
            raise _Misuse(f"{kind.__name__}() needs a number or string, got {_short(x)}")
        try:
            return kind(x)
        except (OverflowError, ValueError) as exc:
            if isinstance(x, str):
                raise _Misuse(f"{kind.__name__}() cannot convert {_short(x)}") from None
            raise _Undefined(str(exc)) from None
    return call


def _f_round(x: Any, ndigits: Any = None) -> Any:
    _num(x, "round()")
    if ndigits is not None and not isinstance(ndigits, int):
        raise _Misuse("round() needs an integer number of digits")
    try:
        return round(x) if ndigits is None else round(x, ndigits)
    except (OverflowError, ValueError) as exc:
        raise _Undefined(str(exc)) from None


def _f_len(x: Any) -> int:
    if not isinstance(x, (list, str)):
        raise _Misuse(f"len() needs a list or string, got {_short(x)}")
    return len(x)


def _f_index(perm: Any, item: Any) -> int:
    if not isinstance(perm, list):
        raise _Misuse(f"index() needs a permutation (list) first, got {_short(perm)}")
    try:
        return perm.index(item)
    except ValueError:
        raise _Misuse(f"index(): {_short(item)} is not an item of {_short(perm)}") from None


#: name -> (implementation, min args, max args)
FUNCTIONS: Dict[str, Tuple[Callable[..., Any], int, int]] = {
    "min": (_f_minmax(min), 1, 64), "max": (_f_minmax(max), 1, 64),
    "abs": (lambda x: abs(_num(x, "abs()")), 1, 1), "len": (_f_len, 1, 1),
    "log2": (_f_log2, 1, 1), "int": (_f_convert(int), 1, 1), "float": (_f_convert(float), 1, 1),
    "round": (_f_round, 1, 2), "index": (_f_index, 2, 2),
}


# --------------------------------------------------------------------------- AST nodes
class Node:
    """Base of expression tree nodes; ``ev(env)`` computes the value, ``collect(names)`` the reads."""

    __slots__ = ("h",)

    def ev(self, env: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def collect(self, names: set) -> None:
        """Add the parameter names this node reads to ``names``."""


class Const(Node):
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value, self.h = value, 1

    def ev(self, env: Mapping[str, Any]) -> Any:
        return self.value


class Name(Node):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name, self.h = name, 1

    def ev(self, env: Mapping[str, Any]) -> Any:
        try:
            return env[self.name]
        except KeyError:
            raise _Misuse(f"parameter {self.name!r} is not in the configuration") from None

    def collect(self, names: set) -> None:
        names.add(self.name)


class ListLit(Node):
    __slots__ = ("items",)

    def __init__(self, items: List[Node]) -> None:
        self.items, self.h = items, 1 + max((i.h for i in items), default=0)

    def ev(self, env: Mapping[str, Any]) -> Any:
        return [i.ev(env) for i in self.items]

    def collect(self, names: set) -> None:
        for i in self.items:
            i.collect(names)


class Unary(Node):
    __slots__ = ("op", "operand")

    def __init__(self, op: str, operand: Node) -> None:
        self.op, self.operand, self.h = op, operand, operand.h + 1

    def ev(self, env: Mapping[str, Any]) -> Any:
        v = self.operand.ev(env)
        if self.op == "not":
            return not v
        v = _num(v, f"unary '{self.op}'")
        return -v if self.op == "-" else +v

    def collect(self, names: set) -> None:
        self.operand.collect(names)


class Binary(Node):
    __slots__ = ("op", "left", "right", "fn")

    def __init__(self, op: str, left: Node, right: Node) -> None:
        self.op, self.left, self.right, self.fn = op, left, right, _ARITH[op]
        self.h = 1 + max(left.h, right.h)

    def ev(self, env: Mapping[str, Any]) -> Any:
        a = _num(self.left.ev(env), f"'{self.op}'")
        b = _num(self.right.ev(env), f"'{self.op}'")
        try:
            return self.fn(a, b)
        except (ZeroDivisionError, OverflowError) as exc:
            raise _Undefined(str(exc)) from None

    def collect(self, names: set) -> None:
        self.left.collect(names)
        self.right.collect(names)


class BoolOp(Node):
    __slots__ = ("op", "operands")

    def __init__(self, op: str, operands: List[Node]) -> None:
        self.op, self.operands, self.h = op, operands, 1 + max(n.h for n in operands)

    def ev(self, env: Mapping[str, Any]) -> Any:
        v: Any = None
        for node in self.operands:
            v = node.ev(env)
            if (not v) if self.op == "and" else v:
                return v
        return v

    def collect(self, names: set) -> None:
        for node in self.operands:
            node.collect(names)


class Compare(Node):
    __slots__ = ("first", "rest")

    def __init__(self, first: Node, rest: List[Tuple[str, Node]]) -> None:
        self.first, self.rest = first, rest
        self.h = 1 + max([first.h] + [n.h for _, n in rest])

    def ev(self, env: Mapping[str, Any]) -> Any:
        left = self.first.ev(env)
        for op, node in self.rest:
            right = node.ev(env)
            if not _COMPARE[op](left, right):
                return False
            left = right
        return True

    def collect(self, names: set) -> None:
        self.first.collect(names)
        for _, node in self.rest:
            node.collect(names)


class Call(Node):
    __slots__ = ("func", "args", "fn")

    def __init__(self, func: str, args: List[Node]) -> None:
        self.func, self.args, self.fn = func, args, FUNCTIONS[func][0]
        self.h = 1 + max((a.h for a in args), default=0)

    def ev(self, env: Mapping[str, Any]) -> Any:
        return self.fn(*[a.ev(env) for a in self.args])

    def collect(self, names: set) -> None:
        for a in self.args:
            a.collect(names)


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
            raise UndefinedValueError(f"constraint {label or self.text!r}: undefined arithmetic "
                                      f"({exc}); the configuration counts as violating it") from None
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


class Constraint:
    """A known constraint: a predicate over a configuration plus the parameter names it reads.

    ``predicate`` is an expression string (reads are derived from it; an explicit ``reads`` must
    include them all) or a callable ``f(config) -> bool`` (then ``reads`` is required).  ``name``
    defaults to the expression text or the callable's ``__name__``.
    """

    def __init__(self, predicate: Any, reads: Optional[Iterable[str]] = None,
                 name: Optional[str] = None) -> None:
        declared = self._check_reads(reads)
        self.expression: Optional[Expression] = None
        self.function: Optional[Callable[[Mapping[str, Any]], Any]] = None
        if isinstance(predicate, str):
            self.expression = parse_expression(predicate)
            derived = self.expression.names
            if declared is not None and not derived <= set(declared):
                raise ConstraintError(f"constraint {predicate!r}: reads {list(declared)} omits "
                                      f"{sorted(derived - set(declared))} which the expression reads; "
                                      "list every name or leave reads out")
            reads_t = tuple(declared) if declared is not None else tuple(sorted(derived))
            default_name = predicate
        elif callable(predicate):
            if not declared:
                raise ConstraintError(f"callable constraint {getattr(predicate, '__name__', predicate)!r} "
                                      "needs reads=[names of the parameters it reads]")
            self.function, reads_t = predicate, tuple(declared)
            default_name = getattr(predicate, "__name__", "constraint")
        else:
            raise ConstraintError(f"constraint must be an expression string or a callable, "
                                  f"got {type(predicate).__name__}")
        if name is not None and (not isinstance(name, str) or not name):
            raise ConstraintError(f"constraint name must be a non-empty string, got {name!r}")
        self.reads: Tuple[str, ...] = reads_t
        self.name: str = name if name is not None else default_name
        self.explicit_name = name is not None

    @staticmethod
    def _check_reads(reads: Optional[Iterable[str]]) -> Optional[List[str]]:
        if reads is None:
            return None
        if isinstance(reads, str):
            raise ConstraintError(f"reads must be a list of parameter names, got the string {reads!r}; "
                                  f"write reads=[{reads!r}]")
        out: List[str] = []
        for r in reads:
            if not isinstance(r, str) or not r:
                raise ConstraintError(f"reads must hold parameter names (strings), got {r!r}")
            if r not in out:
                out.append(r)
        return out

    @property
    def is_expression(self) -> bool:
        """True for expression constraints (serializable), False for Python callables."""
        return self.expression is not None

    def applies_to(self, config: Mapping[str, Any]) -> bool:
        """True when ``config`` (possibly partial) holds every parameter this constraint reads."""
        return all(r in config for r in self.reads)

    def is_satisfied(self, config: Mapping[str, Any]) -> bool:
        """Called for every candidate configuration; True when it satisfies this constraint.

        Undefined arithmetic in an expression counts as violated; misuse, or a callable that raises
        or returns None, raises :class:`ConstraintError` naming this constraint.
        """
        if self.expression is not None:
            try:
                value = self.expression.evaluate(config, label=self.name)
            except UndefinedValueError:
                return False
            if not isinstance(value, (bool, int, float)):
                raise ConstraintError(f"constraint {self.name!r} evaluated to {_short(value)}, not a "
                                      "boolean; compare it, e.g. 'len(x) > 2'")
            return bool(value)
        try:
            value = self.function(config)  # type: ignore[misc]
        except KeyError as exc:
            raise ConstraintError(f"constraint {self.name!r} read {exc} which is not in the configuration; "
                                  f"declare every parameter it reads in reads= (now {list(self.reads)})") from exc
        except Exception as exc:
            raise ConstraintError(f"constraint {self.name!r} raised {type(exc).__name__}: "
                                  f"{str(exc).splitlines()[0] if str(exc) else ''}; fix the predicate") from exc
        if value is None:
            raise ConstraintError(f"constraint {self.name!r} returned None; make the predicate "
                                  "return True or False")
        return bool(value)

    __call__ = is_satisfied

    def describe(self) -> str:
        """One line: the expression, or the callable's name and reads."""
        if self.expression is not None:
            return self.expression.text if self.name == self.expression.text \
                else f"{self.name}: {self.expression.text}"
        return f"{self.name} (Python callable reading {', '.join(self.reads)})"

    def info(self) -> Dict[str, Any]:
        """JSON-compatible identity without the cosmetic name, also for callables (for parameter_info)."""
        if self.expression is not None:
            return {"expression": self.expression.text, "reads": sorted(self.reads)}
        return {"callable": self.name, "reads": sorted(self.reads)}

    def to_json(self) -> Dict[str, Any]:
        """``{"expression", "reads", "name"}`` for expression constraints.

        Raises :class:`ConstraintError` for callables: Python code cannot be serialized.
        """
        if self.expression is None:
            raise ConstraintError(f"constraint {self.name!r} is a Python callable and cannot be "
                                  "serialized; write it as an expression string to save it")
        return {"expression": self.expression.text, "reads": list(self.reads), "name": self.name}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Constraint":
        """Rebuild from :meth:`to_json` output (or a bare expression string)."""
        if isinstance(data, str):
            return cls(data)
        if not isinstance(data, Mapping) or not isinstance(data.get("expression"), str):
            raise ConstraintError(f"constraint definition must be an object with an 'expression' "
                                  f"string, got {_short(data)}")
        return cls(data["expression"], reads=data.get("reads"), name=data.get("name"))

    def __repr__(self) -> str:
        return f"Constraint({self.describe()!r})"


def canonical_constraint_info(constraints: Sequence[Constraint]) -> List[str]:
    """Sorted canonical JSON strings of the constraints' identities (order-independent)."""
    return sorted(json.dumps(c.info(), sort_keys=True, separators=(",", ":")) for c in constraints)
