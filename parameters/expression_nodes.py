"""Evaluation semantics of the constraint expression language: value helpers, the whitelisted functions
(:data:`FUNCTIONS`) and the AST node classes that :mod:`tunerlib.parameters.expression` parses into.

Nodes signal problems with two internal exceptions that :class:`~.expression.Expression` turns into
public errors: :class:`_Misuse` (wrong types, missing parameter -> ``ConstraintError``) and
:class:`_Undefined` (undefined arithmetic -> ``UndefinedValueError``).
"""
from __future__ import annotations

import math
import operator as _op
from typing import Any, Callable, Dict, List, Mapping, Tuple


class _Misuse(Exception):
    """Internal: a type/usage error while evaluating; becomes a ConstraintError."""


class _Undefined(Exception):
    """Internal: undefined arithmetic while evaluating; becomes an UndefinedValueError."""


MAX_POWER_BITS = 100_000

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
    h: int  # the height of the tree below this node (a leaf is 1)

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
        left, right = self.left.ev(env), self.right.ev(env)  # both first, as Python does
        a, b = _num(left, f"'{self.op}'"), _num(right, f"'{self.op}'")
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
