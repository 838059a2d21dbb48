"""Known constraints: predicates over a configuration.

A :class:`Constraint` is either a Python callable ``f(config) -> bool`` that declares the names of the
parameters it reads, or an *expression string* such as ``"tile_x * tile_y <= 1024"`` or
``"index(order, 'i') < index(order, 'j')"``, whose reads are found by the parser.

The expression language (:func:`parse_expression`, :class:`Expression` and its error policy) lives in
:mod:`tunerlib.parameters.expression`, with its tokenizer, parser and node classes in the ``expression_*``
modules beside it; its public names are re-exported here so that
``from tunerlib.parameters.constraints import parse_expression`` keeps working.
:meth:`Constraint.is_satisfied` returns ``False`` for undefined arithmetic (``UndefinedValueError``) and
raises :class:`ConstraintError` for misuse, as documented there.
"""
from __future__ import annotations

import json
import random
import sys
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .expression import (FUNCTIONS, MAX_POWER_BITS, MAX_TEXT_LENGTH, Binary, BoolOp, Call, Compare, Const,
                         ConstraintError, Expression, ListLit, Name, Node, Unary, UndefinedValueError,
                         parse_expression)
from .expression_nodes import _short
from .expression_parser import MAX_DEPTH, MAX_HEIGHT

__all__ = ["Constraint", "ConstraintError", "UndefinedValueError", "Expression", "parse_expression",
           "canonical_constraint_info", "check_constraints", "sample_configs", "FUNCTIONS", "MAX_TEXT_LENGTH",
           "MAX_DEPTH", "MAX_HEIGHT", "MAX_POWER_BITS", "Node", "Const", "Name", "ListLit", "Unary", "Binary",
           "BoolOp", "Compare", "Call"]


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
        #: set by a tuning run: misuse on a configuration counts as violating the constraint (see
        #: :meth:`is_satisfied`) instead of raising
        self.misuse_violates = False
        #: the first misuse seen while :attr:`misuse_violates` (None: none), and how many there were
        self.misuse: Optional[str] = None
        self.misuse_count = 0

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
        or returns None, raises :class:`ConstraintError` naming this constraint -- unless
        :attr:`misuse_violates` is set (a tuning run sets it once the constraint passed its start-up
        check, :func:`check_constraints`): then the configuration counts as violating the constraint,
        the first message is kept in :attr:`misuse` and printed as one warning line on stderr.
        """
        if not self.misuse_violates:
            return self._satisfied(config)
        try:
            return self._satisfied(config)
        except ConstraintError as exc:
            self.misuse_count += 1
            if self.misuse is None:
                self.misuse = str(exc)
                print(f"tunerlib: warning: {exc}; configurations on which it fails count as violating it "
                      "(fix the constraint and start a new run)", file=sys.stderr)
            return False

    def _satisfied(self, config: Mapping[str, Any]) -> bool:
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


#: configurations each constraint is evaluated on by :func:`check_constraints`
CHECK_SAMPLES = 64


def check_constraints(constraints: Sequence[Constraint], configs: Sequence[Mapping[str, Any]]) -> None:
    """Called once when a tuning run starts, before anything is recorded: evaluate every constraint on
    ``configs`` (the space's seed configuration and random ones that ignore the constraints).

    Raises :class:`ConstraintError` (one line) for misuse on any of them (``a < 'x'`` with an
    integer ``a``, a callable that raises) and for a constraint whose arithmetic is undefined on
    every one (``a < 2**10000000`` overflows: it would reject every configuration).  Afterwards a
    misuse on some other configuration counts as violating the constraint
    (:attr:`Constraint.misuse_violates`).
    """
    for c in constraints:
        tried = [cfg for cfg in configs if c.applies_to(cfg)]
        undefined: List[UndefinedValueError] = []
        for cfg in tried:
            try:
                if c.expression is not None:
                    c.expression.evaluate(cfg, label=c.name)
                c._satisfied(cfg)
            except UndefinedValueError as exc:
                undefined.append(exc)
            except ConstraintError as exc:
                raise ConstraintError(f"{exc} (on {_short(dict(cfg))}, checked at start-up)") from None
        if tried and len(undefined) == len(tried):
            raise ConstraintError(f"constraint {c.name!r}: undefined arithmetic ({undefined[0].detail}) on all "
                                  f"{len(tried)} configurations sampled at start-up, so it would reject every "
                                  "configuration; fix the expression")
        c.misuse_violates = True


def sample_configs(parameters: Sequence[Any], seed_config: Mapping[str, Any], count: int = CHECK_SAMPLES,
                   seed: int = 0) -> List[Dict[str, Any]]:
    """``seed_config`` and ``count - 1`` configurations of random parameter values (constraints not
    applied; the same ones every time for one space): what :func:`check_constraints` evaluates."""
    rng = random.Random(seed)
    return [dict(seed_config)] + [{p.name: p.random_value(rng) for p in parameters} for _ in range(count - 1)]
