"""The recursive-descent parser of the constraint expression language.

:class:`_Parser` follows Python's expression grammar (``or``/``and``/``not``/comparison/arithmetic/
power/primary) over the tokens of :mod:`.expression_lexer` and builds the node classes of
:mod:`.expression_nodes`.  It bounds nesting (:data:`MAX_DEPTH`) and the height of operator chains
(:data:`MAX_HEIGHT`), and every syntax error is a one-line :class:`~.expression_lexer.ConstraintError`
naming the column and the fix.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from .expression_lexer import ConstraintError, _fail, _Tok, _tokenize
from .expression_nodes import (FUNCTIONS, Binary, BoolOp, Call, Compare, Const, ListLit, Name, Node, Unary,
                               _short)

MAX_DEPTH = 40
MAX_HEIGHT = 100
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
