"""Operator declaration: how a parameter method is marked as an operator, and an operator described
as data (:class:`OperatorSpec`, listed by ``Parameter.operators``).

Operators are methods decorated with :func:`operator`, which records their arity
(how many configurations they read) as data.  Calling convention::

    param.op3_cross_OX1(child, parent1, parent2, rng=rng, strength=0.3)

* the first positional argument is the *child* configuration, modified in place;
* then ``arity - 1`` parent configurations (``opn_*`` operators take one list);
* ``rng`` (a :class:`random.Random`) is keyword-only and required, so every
  operator is deterministic given the caller's generator;
* the remaining keyword arguments are the operator's hyper-parameters, with
  defaults; :meth:`~.base.Parameter.operators` lists them.

Every operator leaves the child with a legal value for the parameter.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Tuple

#: arity used for ``opn_*`` operators (any number of parents, passed as a list)
ARITY_N = -1


@dataclass(frozen=True)
class OperatorSpec:
    """Description of one operator, as data."""

    name: str
    arity: int  # number of configurations read including the child; ARITY_N for opn_
    defaults: Tuple[Tuple[str, Any], ...] = field(default_factory=tuple)
    doc: str = ""

    @property
    def min_parents(self) -> int:
        """Parents (besides the child) the caller must supply."""
        return 1 if self.arity == ARITY_N else max(self.arity - 1, 0)


def operator(arity: int) -> Callable[[Callable], Callable]:
    """Declare a method as an operator with the given arity (1-4, or ARITY_N)."""
    if arity not in (1, 2, 3, 4, ARITY_N):
        raise ValueError(f"operator arity must be 1, 2, 3, 4 or ARITY_N, got {arity}")

    def mark(fn: Callable) -> Callable:
        fn._tl_operator_arity = arity  # type: ignore[attr-defined]
        return fn

    return mark


def find_operators(cls: type) -> Dict[str, OperatorSpec]:
    """The operators of class ``cls`` (its methods marked by :func:`operator`, inherited ones
    included), by name; called once per class by ``Parameter.operators``."""
    found: Dict[str, OperatorSpec] = {}
    for name in dir(cls):
        fn = getattr(cls, name, None)
        arity = getattr(fn, "_tl_operator_arity", None)
        if arity is None or fn is None:
            continue
        sig = inspect.signature(fn)
        defaults = tuple(
            (p.name, p.default)
            for p in sig.parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "rng"
            and p.default is not inspect.Parameter.empty
        )
        found[name] = OperatorSpec(name, arity, defaults, (fn.__doc__ or "").strip().split("\n")[0])
    return found
