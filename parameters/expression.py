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

This module holds the public :class:`Expression` / :func:`parse_expression` and
:class:`UndefinedValueError`; :class:`ConstraintError` and the tokenizer live in
:mod:`.expression_lexer`, the parser in :mod:`.expression_parser`, and the node classes and functions
in :mod:`.expression_nodes`.
"""
from __future__ import annotations

from typing import Any, FrozenSet, Mapping, Optional

from .expression_lexer import ConstraintError
from .expression_nodes import (FUNCTIONS, MAX_POWER_BITS, Binary, BoolOp, Call, Compare, Const, ListLit,
                               Name, Node, Unary, _Misuse, _Undefined)
from .expression_parser import _Parser

__all__ = ["ConstraintError", "UndefinedValueError", "Expression", "parse_expression", "FUNCTIONS",
           "MAX_TEXT_LENGTH", "MAX_POWER_BITS",
           "Node", "Const", "Name", "ListLit", "Unary", "Binary", "BoolOp", "Compare", "Call"]


class UndefinedValueError(ConstraintError):
    """An expression's arithmetic is undefined for this configuration (e.g. division by zero).

    :meth:`Constraint.is_satisfied` treats it as *violated*; it is not a bug in the constraint.
    ``detail`` says what was undefined (``"division by zero"``).
    """

    detail = ""


MAX_TEXT_LENGTH = 4000


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
