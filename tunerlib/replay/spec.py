"""What a replay benchmark is, without its table: parameters, known constraints and budgets.

A :class:`BenchmarkSpec` names a recorded benchmark's search parameters (:class:`ParamDef`: ordered
legal values and a kind), its known constraints as tunerlib expression strings (they may name the
table's constants, substituted by :func:`substitute_constants` when the space is built), the budgets
to report at, and documented configurations (expert, default).  It knows no file format and no
folder: :class:`~tunerlib.replay.benchmark.ReplayBenchmark` joins a spec with a
:class:`~tunerlib.replay.table.RecordedTable` read by any reader.  Catalogues of known benchmarks
(with their readers and data folders) live outside the core, e.g. ``tunerlib.replay.recorded``.

:func:`rows_in_space` measures a space against the configurations of a table (the feasible count is
``tunerlib.parameters.FeasibleSpace.count``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..parameters import (ConfigurationManipulator, EnumParameter, OrdinalParameter, Parameter,
                          PermutationParameter, parse_expression)
from .table import RecordedTable, canonical_value, json_value

#: kinds of :class:`ParamDef`
PARAM_KINDS = ("ordinal", "enum", "permutation")


def _is_pow2_set(values: Sequence[Any]) -> bool:
    return len(values) > 1 and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                   and v & (v - 1) == 0 for v in values)


@dataclass(frozen=True)
class ParamDef:
    """One search parameter: ordered legal values and a kind (ordinal, enum or permutation).

    A machine-dependent parameter (a thread count) has no fixed values: ``recorded`` is the
    benchmark's rule for it (an expression over the parameter, e.g. ``"threads >= 2"``) and its
    values are those of the replayed table that satisfy the rule (:meth:`for_table`).
    """

    name: str
    values: Tuple[Any, ...]
    kind: str = "ordinal"
    recorded: Optional[str] = None

    def build(self) -> Parameter:
        """The tunerlib parameter (ordinals are log-scaled when every value is a power of two)."""
        if self.recorded is not None and not self.values:
            raise ValueError(f"parameter {self.name!r} takes its values from a table; call for_table first")
        if self.kind == "enum":
            return EnumParameter(self.name, list(self.values))
        if self.kind == "permutation":
            return PermutationParameter(self.name, list(self.values))
        vals = sorted(self.values)
        return OrdinalParameter(self.name, vals, log=_is_pow2_set(vals))

    def for_table(self, table: RecordedTable) -> "ParamDef":
        """This definition with the values of ``table`` that satisfy :attr:`recorded` (itself when
        the values are fixed).  Raises ValueError (one line) when no recorded value satisfies it."""
        if self.recorded is None:
            return self
        rule = parse_expression(self.recorded)
        seen = table.value_sets().get(self.name, [])
        values = tuple(v for v in seen if isinstance(v, int) and rule.evaluate({self.name: v}))
        if not values:
            raise ValueError(f"{table.source or table.name}: no recorded {self.name} satisfies "
                             f"{self.recorded!r} (recorded: {seen[:8]}); give a table of this benchmark")
        return ParamDef(self.name, values, self.kind)


@dataclass(frozen=True)
class BenchmarkSpec:
    """Static definition of a replay benchmark (no table, no file format).

    ``path`` says where its table lies (informative: relative to a data folder for catalogue
    entries, the file itself for a table given by path).  ``params`` None means "from the table":
    each non-constant table parameter with the values the reader declared (the table's
    ``metadata["domains"]``, name -> values) or else the recorded ones, ordinal unless named in
    ``categorical`` (then enum).  ``constraints`` may name the table's constants; they are
    substituted when the manipulator is built.  ``exhaustive`` tables record every feasible
    configuration (up to failures); ``sparse`` ones are samples.  ``expert`` and ``default`` are
    documented configurations of the benchmark (None when there are none).
    """

    name: str
    path: str = ""
    constraints: Tuple[str, ...] = ()
    params: Optional[Tuple[ParamDef, ...]] = None
    categorical: Tuple[str, ...] = ()
    exhaustive: bool = False
    budgets: Tuple[int, ...] = (20, 50, 100)
    expert: Optional[Mapping[str, Any]] = None
    default: Optional[Mapping[str, Any]] = None
    description: str = ""

    @property
    def sparse(self) -> bool:
        """True when the table is a sample of the space (most configurations are not measured)."""
        return not self.exhaustive

    @property
    def param_names(self) -> Optional[Tuple[str, ...]]:
        """The tuning-parameter columns a table of this benchmark holds; None when they come from
        the table itself."""
        if self.params is not None:
            return tuple(p.name for p in self.params)
        return None


def substitute_constants(expression: str, constants: Mapping[str, Any]) -> str:
    """Replace whole-word parameter names in ``expression`` by the repr of their constant value."""
    if not constants:
        return expression
    names = sorted(constants, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b")
    return pattern.sub(lambda m: repr(constants[m.group(1)]), expression)


def params_from_values(table: RecordedTable) -> Tuple[ParamDef, ...]:
    """Search parameters of an unknown table: each parameter's recorded values (tuple values are
    permutations of their length; parameters with a single value are left out)."""
    out: List[ParamDef] = []
    for name, values in table.value_sets().items():
        if values and isinstance(values[0], tuple):
            out.append(ParamDef(name, tuple(range(len(values[0]))), "permutation"))
        elif len(values) > 1:
            out.append(ParamDef(name, tuple(values), "ordinal" if not isinstance(values[0], str) else "enum"))
    return tuple(out)


def declared_params(table: RecordedTable, categorical: Sequence[str] = ()) -> Tuple[ParamDef, ...]:
    """Search parameters declared by ``table``: each non-constant parameter with the values in
    ``table.metadata["domains"]`` (the recorder's own list of legal values) or else the recorded
    ones; enum when named in ``categorical``, ordinal otherwise."""
    domains = table.metadata.get("domains") or {}
    recorded = table.value_sets()
    return tuple(ParamDef(n, tuple(canonical_value(v) for v in (domains[n] if n in domains else recorded[n])),
                          "enum" if n in categorical else "ordinal")
                 for n in table.params if n not in table.constants)


# --------------------------------------------------------------------------- rows in the space
def rows_in_space(manipulator: ConfigurationManipulator, configs: Iterable[Mapping[str, Any]]) -> Tuple[int, int]:
    """(configurations with legal values, of those the ones satisfying every known constraint).

    Memoised per parameter value and per constraint group projection, so tables of 10^4-10^5 rows
    with few distinct values per group are checked quickly; equal to calling ``is_valid`` and
    ``is_feasible`` on each configuration in the canonical form of a table's values (integral floats
    as ints, booleans as 0/1, sequences as lists: :func:`~tunerlib.replay.table.canonical_value`).
    """
    names = manipulator.names
    rows = (tuple(canonical_value(cfg[n]) for n in names) for cfg in configs
            if len(cfg) == len(names) and all(n in cfg for n in names))
    return keys_in_space(manipulator, rows)


def keys_in_space(manipulator: ConfigurationManipulator, rows: Iterable[Tuple[Any, ...]]) -> Tuple[int, int]:
    """:func:`rows_in_space` of configurations given as canonical value tuples in the order of
    ``manipulator.names`` (a table's keys): a configuration dict is built only for a value or a
    constraint-group projection not seen before."""
    names = manipulator.names
    index = {n: i for i, n in enumerate(names)}
    groups = [([index[n] for n in sorted(g)], manipulator.group_constraints(g)) for g in manipulator.groups()]
    valid: List[Dict[Any, bool]] = [{} for _ in names]
    feasible: List[Dict[Tuple[Any, ...], bool]] = [{} for _ in groups]
    n_legal = n_feasible = 0
    for row in rows:
        if not all(_memo(memo, v, lambda n=n, v=v: manipulator.parameter(n).is_valid(json_value(v)))
                   for memo, n, v in zip(valid, names, row)):
            continue
        n_legal += 1
        n_feasible += all(_memo(memo, tuple(row[i] for i in at), lambda row=row, checks=checks: all(
            c.is_satisfied(_config(names, row)) for c in checks))
                          for memo, (at, checks) in zip(feasible, groups))
    return n_legal, n_feasible


def _config(names: Sequence[str], row: Tuple[Any, ...]) -> Dict[str, Any]:
    return {n: json_value(v) for n, v in zip(names, row)}


def _memo(cache: Dict[Any, bool], key: Any, compute) -> bool:
    value = cache.get(key)
    if value is None:
        value = cache[key] = bool(compute())
    return value
