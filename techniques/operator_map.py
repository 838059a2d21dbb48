"""Operator maps for composable techniques: parameter kind → operator choice.

An :class:`OperatorMap` says which operator a composable technique applies to the parameters of
each kind, and with which operator hyper-parameters.  Keys are parameter ``kind`` strings
(``"int"``, ``"float"``, ``"permutation"``, ``"bool_array"``, ...; a :class:`Parameter` subclass is
accepted too and converted to its ``kind``).  Only registered kinds are keys: abstract bases such as
``NumericParameter`` have no kind and cannot be mapped.

Lookup walks the parameter class's MRO: a parameter uses the entry of its own kind, else the entry of
the nearest base class that has a kind (so an ``"int"`` entry also applies to ``log_int`` and ``pow2``
parameters, ``"float"`` to ``log_float`` and ``"permutation"`` to ``schedule``) unless those kinds
have their own entries.  Parameters with no entry get the technique base's default operator.

:class:`OperatorChoice` is ``(op, args, kwargs)``.  Operators follow the calling convention of
:mod:`tunerlib.parameters.operators` (everything after the configurations is a keyword), so positional
``args`` bind, in order, to the operator's keyword hyper-parameters as declared, skipping
``velocity`` (e.g. ``op4_set_linear`` with ``args=(1.0, 0.5, -0.5)`` means ``a=1.0, b=0.5, c=-0.5``,
as OpenTuner's ``[1.0, F, -F]``).  ``velocity`` is technique state and may not be given.

Random operator hyper-parameter ranges used by :func:`random_choice` (documented contract):

=====================  ===========================================================
``strength``           uniform [0.1, 0.7]  (crossover/inversion section fraction)
``sigma``              uniform [0.02, 0.4] (Gaussian step, unit space)
``p``                  uniform [0.05, 0.5] (adjacent-swap probability)
``k``                  uniform [0.5, 2.0]  (``op1_scale`` factor)
``c``                  uniform [0.2, 1.0]  (swarm inertia / keep weight)
``c1``, ``c2``         uniform [0.2, 2.0]  (swarm attraction weights)
``vmax``               uniform [1.0, 6.0]  (binary swarm velocity clip)
``xchoice``            one of PX, PMX, CX, OX1, OX3
``op4_set_linear``     ``a=1.0, b=F, c=-F`` with F uniform [0.1, 1.0] (the DE form)
anything else          left at the operator's default (``weights``, unknown names)
=====================  ===========================================================

Floats are rounded to 3 decimals so generated names stay short.  ``op1_nop`` is never drawn.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Type, Union

from ..parameters import ARITY_N, OperatorSpec, Parameter
from .base import TechniqueError

#: crossovers accepted by the permutation ``xchoice`` hyper-parameter
XCHOICES = ("PX", "PMX", "CX", "OX1", "OX3")

_FLOAT_RANGES: Dict[str, Tuple[float, float]] = {
    "strength": (0.1, 0.7), "sigma": (0.02, 0.4), "p": (0.05, 0.5), "k": (0.5, 2.0),
    "c": (0.2, 1.0), "c1": (0.2, 2.0), "c2": (0.2, 2.0), "vmax": (1.0, 6.0),
}


def is_json_value(value: Any) -> bool:
    """True for JSON-compatible values: None, bool, int, finite float, str, lists of those."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(is_json_value(v) for v in value)
    return False


def _plain(value: Any) -> Any:
    """Tuples become lists (so a choice equals its parsed-back form)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class OperatorChoice:
    """One operator-map entry: operator name, positional hyper-parameters, keyword hyper-parameters."""

    op: str
    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.op, str) or not self.op.isidentifier():
            raise TechniqueError(f"operator name must be an identifier like 'op3_cross_OX1', got {self.op!r}")
        object.__setattr__(self, "args", tuple(_plain(a) for a in self.args))
        object.__setattr__(self, "kwargs", {str(k): _plain(v) for k, v in dict(self.kwargs).items()})
        for v in list(self.args) + list(self.kwargs.values()):
            if not is_json_value(v):
                raise TechniqueError(f"operator {self.op!r}: hyper-parameter value {v!r} is not a JSON "
                                     "number, string, boolean, null or list; use one of those")

    def bound_kwargs(self, spec: OperatorSpec) -> Dict[str, Any]:
        """Keyword arguments for the call: ``args`` bound to the spec's hyper-parameters, then ``kwargs``."""
        names = hparam_names(spec)
        out = dict(zip(names, self.args))
        out.update(self.kwargs)
        return out

    def __hash__(self) -> int:
        return hash((self.op, len(self.args), tuple(sorted(self.kwargs))))


def hparam_names(spec: OperatorSpec) -> List[str]:
    """The operator's settable hyper-parameters in declaration order (``velocity`` excluded)."""
    return [n for n, _ in spec.defaults if n != "velocity"]


def parameter_class(kind: str) -> Type[Parameter]:
    """The registered parameter class of ``kind``; TechniqueError naming the known kinds otherwise."""
    cls = Parameter._kinds.get(kind)
    if cls is None:
        raise TechniqueError(f"unknown parameter kind {kind!r} in operator map; known kinds: "
                             f"{', '.join(sorted(Parameter._kinds))}")
    return cls


def kind_of(param: Union[Parameter, Type[Parameter]]) -> str:
    """The registered kind of a parameter (or class): its own, else its nearest base's ('' if none)."""
    cls = param if isinstance(param, type) else type(param)
    for klass in cls.__mro__:
        kind = klass.__dict__.get("kind")
        if kind and Parameter._kinds.get(kind) is klass:
            return kind
    return ""


def required_parents(spec: OperatorSpec) -> int:
    """Configurations (primary parent included) an operator needs: its arity, 2 for ``opn_*``."""
    return 2 if spec.arity == ARITY_N else spec.arity


def check_choice(kind: str, choice: OperatorChoice) -> OperatorSpec:
    """Validate ``choice`` for parameters of ``kind``; returns the operator's spec."""
    cls = parameter_class(kind)
    spec = cls.operators().get(choice.op)
    if spec is None:
        raise TechniqueError(f"parameter kind {kind!r} has no operator {choice.op!r}; choose one of "
                             f"{', '.join(sorted(cls.operators()))}")
    names = hparam_names(spec)
    if len(choice.args) > len(names):
        raise TechniqueError(f"operator {kind}:{choice.op} takes at most {len(names)} positional "
                             f"hyper-parameters {names}, got {len(choice.args)}; drop the extra ones")
    for key in choice.kwargs:
        if key == "velocity":
            raise TechniqueError(f"operator {kind}:{choice.op}: 'velocity' is technique state, not a "
                                 "hyper-parameter; remove it from the operator map")
        if key not in names:
            raise TechniqueError(f"operator {kind}:{choice.op} has no hyper-parameter {key!r}; "
                                 f"its hyper-parameters are {names or 'none'}")
        if key in names[: len(choice.args)]:
            raise TechniqueError(f"operator {kind}:{choice.op}: hyper-parameter {key!r} given both "
                                 "positionally and by keyword; give it once")
    return spec


MapInput = Union["OperatorMap", Mapping[Any, Union[OperatorChoice, str]], None]


class OperatorMap(Mapping[str, OperatorChoice]):
    """Immutable, validated mapping parameter kind → :class:`OperatorChoice` (sorted by kind).

    Construction checks that every kind is registered and has the operator with those
    hyper-parameters; :meth:`check_parents` (called by techniques at construction) checks arity.
    """

    def __init__(self, entries: MapInput = None) -> None:
        items: Dict[str, OperatorChoice] = {}
        for key, choice in dict(entries or {}).items():
            kind = kind_of(key) if isinstance(key, type) and issubclass(key, Parameter) else key
            if not isinstance(kind, str) or not kind:
                raise TechniqueError(f"operator map keys must be parameter kinds like 'int' or "
                                     f"'permutation', got {key!r}")
            if isinstance(choice, str):
                choice = OperatorChoice(choice)
            if not isinstance(choice, OperatorChoice):
                raise TechniqueError(f"operator map entry {kind!r} must be an OperatorChoice or an "
                                     f"operator name, got {type(choice).__name__}")
            if kind in items:
                raise TechniqueError(f"operator map names kind {kind!r} twice; keep one entry")
            check_choice(kind, choice)
            items[kind] = choice
        self._items = {k: items[k] for k in sorted(items)}
        self._specs = {k: parameter_class(k).operators()[c.op] for k, c in self._items.items()}

    def __getitem__(self, kind: str) -> OperatorChoice:
        return self._items[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OperatorMap):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple((k, hash(v)) for k, v in self._items.items()))

    def __repr__(self) -> str:
        return f"OperatorMap({self._items!r})"

    def lookup(self, param: Parameter) -> Optional[OperatorChoice]:
        """The entry for ``param``: its kind's, else the nearest mapped base kind's, else None."""
        for klass in type(param).__mro__:
            kind = klass.__dict__.get("kind")
            if kind and kind in self._items:
                return self._items[kind]
        return None

    def check_parents(self, minimum: int, owner: str) -> None:
        """TechniqueError when an entry needs more configurations than ``owner`` guarantees."""
        for kind, choice in self._items.items():
            need = required_parents(self._specs[kind])
            if need > minimum:
                raise TechniqueError(f"{owner} guarantees {minimum} parent configuration(s) but operator "
                                     f"{kind}:{choice.op} needs {need}; map {kind!r} to an operator of "
                                     f"arity <= {minimum}")


# ---- random generation ------------------------------------------------------------------
def usable_operators(kind: str, minimum: int) -> List[str]:
    """Operators of ``kind`` whose arity fits ``minimum`` parents, ``op1_nop`` excluded, sorted."""
    ops = parameter_class(kind).operators()
    return sorted(n for n, s in ops.items() if n != "op1_nop" and required_parents(s) <= minimum)


def _random_kwargs(op: str, spec: OperatorSpec, rng: random.Random) -> Dict[str, Any]:
    names = hparam_names(spec)
    if op == "op4_set_linear":
        f = round(rng.uniform(0.1, 1.0), 3)
        return {"a": 1.0, "b": f, "c": -f}
    out: Dict[str, Any] = {}
    for name in names:
        if name == "xchoice":
            out[name] = rng.choice(XCHOICES)
        elif name in _FLOAT_RANGES:
            lo, hi = _FLOAT_RANGES[name]
            out[name] = round(rng.uniform(lo, hi), 3)
    return out


def random_choice(kind: str, minimum: int, rng: random.Random) -> OperatorChoice:
    """A random usable operator of ``kind`` with random hyper-parameters (ranges in the module doc)."""
    ops = usable_operators(kind, minimum) or ["op1_nop"]
    op = rng.choice(ops)
    spec = parameter_class(kind).operators()[op]
    return OperatorChoice(op, (), _random_kwargs(op, spec, rng))


def kinds_of(params: Iterable[Parameter]) -> List[str]:
    """Sorted distinct registered kinds of ``params`` (parameters without any kind are skipped)."""
    return sorted({k for k in (kind_of(p) for p in params) if k})
