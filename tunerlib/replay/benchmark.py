"""A replay benchmark: a benchmark's search space joined with its recorded table.

:class:`ReplayBenchmark` answers lookups (OK, failed or not measured), knows the optimum in the
space and builds the search space (optionally restricted to the recorded configurations).  The
space is the :class:`~tunerlib.replay.spec.BenchmarkSpec`'s; only machine-dependent values (see
:meth:`ParamDef.for_table <tunerlib.replay.spec.ParamDef.for_table>`) come from the table.
:func:`benchmark_from_table` replays a table nobody described: its space is inferred from the
recorded values.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from ..errors import UsageError
from ..parameters import ConfigurationManipulator, FeasibleSpace, TableConstraint, parse_expression
from .spec import BenchmarkSpec, ParamDef, declared_params, keys_in_space, params_from_values, substitute_constants
from .table import Record, RecordedTable


def benchmark_from_table(table: RecordedTable, spec: Optional[BenchmarkSpec] = None) -> "ReplayBenchmark":
    """A :class:`ReplayBenchmark` replaying a table of unknown space: the parameters are the
    recorded values (:func:`~tunerlib.replay.spec.params_from_values`), parameters with one
    recorded value are constants, there are no known constraints.  ``spec`` gives the name,
    description and budgets (default: the table's name)."""
    if spec is None:
        source = Path(table.source).name if table.source else table.name
        spec = BenchmarkSpec(table.name, table.source, description=f"recorded table {source} (no known constraints)")
    spec = replace(spec, params=params_from_values(table))
    constants = {n: v[0] for n, v in table.value_sets().items() if len(v) == 1}
    table = RecordedTable(table.name, table.params, table.records, constants, table.source, table.metadata)
    return ReplayBenchmark(spec, table)


class ReplayBenchmark:
    """A benchmark spec joined with its recorded table: what replay tuners and benchmarks use.

    :meth:`manipulator` builds a fresh search space; :meth:`lookup` / :meth:`status` /
    :meth:`evaluate` answer one configuration each (dict lookups).
    """

    def __init__(self, spec: BenchmarkSpec, table: RecordedTable) -> None:
        self.spec, self.table = spec, table
        self.name = spec.name
        self._params = (tuple(p.for_table(table) for p in spec.params) if spec.params is not None
                        else declared_params(table, spec.categorical))
        self._constraints = self._resolve_constraints()
        self._best: Optional[Tuple[float, Dict[str, Any]]] = None

    def _resolve_constraints(self) -> List[str]:
        out = []
        for text in self.spec.constraints:
            expr_text = substitute_constants(text, self.table.constants)
            expr = parse_expression(expr_text)
            if not expr.names:
                if not expr.evaluate({}):
                    raise ValueError(f"benchmark {self.name!r}: constraint {text!r} is false for the "
                                     f"constants {self.table.constants}")
                continue
            out.append(expr_text)
        return out

    # ---- space ----------------------------------------------------------------
    @property
    def constraints(self) -> List[str]:
        """Known constraints over the search parameters (constants substituted)."""
        return list(self._constraints)

    @property
    def param_defs(self) -> Tuple[ParamDef, ...]:
        """The search parameters' definitions."""
        return self._params

    def manipulator(self, table_space: bool = False) -> ConfigurationManipulator:
        """A new search space (parameters + known constraints); called once per tuning run.

        ``table_space=True`` restricts it to the recorded configurations (OK and failed, those
        with legal values) by a :class:`~tunerlib.parameters.TableConstraint`, as Kernel Tuner's
        simulation mode does: on a sparsely measured table every proposal then has an outcome.
        Raises :class:`~tunerlib.UsageError` (a ValueError) when no recorded row fits the space.
        """
        m = ConfigurationManipulator([p.build() for p in self._params], self._constraints)
        if table_space:
            names = m.names
            rows = [[cfg[n] for n in names] for cfg in self.recorded_configs()
                    if all(n in cfg and m.parameter(n).is_valid(cfg[n]) for n in names)]
            if not rows:
                raise UsageError(f"benchmark {self.name!r}: no recorded configuration has legal values "
                                 "for the search space, so a table space would be empty")
            m.add_constraint(TableConstraint(names, rows, name=f"recorded in {self.name}"))
        return m

    # ---- lookups ----------------------------------------------------------------
    def lookup(self, config: Mapping[str, Any]) -> Optional[Record]:
        """The record of ``config`` or None when it was not measured."""
        return self.table.lookup(config)

    def status(self, config: Mapping[str, Any]) -> str:
        """``"ok"``, ``"failed"`` or ``"not_measured"``."""
        rec = self.table.lookup(config)
        return "not_measured" if rec is None else ("ok" if rec.ok else "failed")

    def evaluate(self, config: Mapping[str, Any]) -> Optional[float]:
        """Recorded objective (seconds) of ``config``; None when failed or not measured."""
        rec = self.table.lookup(config)
        return None if rec is None else rec.value

    def recorded(self, config: Mapping[str, Any]) -> Tuple[Optional[float], Optional[str]]:
        """(recorded seconds, None), or (None, why not: ``"not measured"`` /
        ``"failed (recorded run failed)"``); called for the baselines of a final table."""
        rec = self.table.lookup(config)
        if rec is None:
            return None, "not measured"
        return (rec.value, None) if rec.ok else (None, "failed (recorded run failed)")

    def _in_space_best(self) -> Tuple[float, Dict[str, Any]]:
        if self._best is None:
            m = self.manipulator()
            ranked = sorted(((rec.value, i, key) for i, (key, rec) in enumerate(self.table.items())
                             if rec.value is not None), key=lambda t: (t[0], t[1]))
            for value, _, key in ranked:
                cfg = self.table.config_of(key)
                if m.is_valid(cfg) and m.is_feasible(cfg):
                    self._best = (float(value), cfg)
                    break
            else:
                raise ValueError(f"benchmark {self.name!r}: no successful recorded configuration lies in "
                                 "the search space; check the space definition")
        return self._best

    @property
    def optimum(self) -> float:
        """Minimum recorded objective (seconds) among OK records that lie in the search space (legal values,
        known constraints satisfied).  Equals :attr:`table_optimum` unless the table holds rows
        outside the space (a recorder that ignored a constraint)."""
        return self._in_space_best()[0]

    @property
    def table_optimum(self) -> float:
        """Minimum recorded objective among all OK records, in the space or not."""
        return self.table.optimum

    @property
    def best_config(self) -> Dict[str, Any]:
        """A configuration achieving :attr:`optimum` (search parameters only; first in file order)."""
        return dict(self._in_space_best()[1])

    @property
    def expert(self) -> Optional[Dict[str, Any]]:
        """The spec's expert configuration (None when none is given)."""
        return dict(self.spec.expert) if self.spec.expert else None

    @property
    def default(self) -> Optional[Dict[str, Any]]:
        """The spec's default configuration (None when none is given)."""
        return dict(self.spec.default) if self.spec.default else None

    def recorded_configs(self, ok_only: bool = False) -> Iterable[Dict[str, Any]]:
        """Configurations (search parameters only) of the table's records, in file order."""
        for key, rec in self.table.items():
            if rec.ok or not ok_only:
                yield self.table.config_of(key)

    def rows_in_space(self, ok_only: bool = False) -> Tuple[int, int]:
        """(records whose values are legal, of those the ones satisfying the known constraints)."""
        return self._count_in_space(lambda rec: rec.ok or not ok_only)

    def rows_within(self, factor: float) -> int:
        """Called by the table statistics: the OK records satisfying the known constraints whose value is
        at most ``factor`` x :meth:`optimum` (1 or more: the optimum itself; 0 when no row is in the space)."""
        limit = factor * self.optimum
        return self._count_in_space(lambda rec: rec.ok and rec.value is not None and rec.value <= limit)[1]

    def _count_in_space(self, keep: Callable[[Record], bool]) -> Tuple[int, int]:
        """:func:`keys_in_space` of the records ``keep`` accepts, their keys put in the space's order."""
        manipulator = self.manipulator()
        searched = [p for p in self.table.params if p not in self.table.constants]
        if sorted(searched) != sorted(manipulator.names):  # no record has exactly the space's parameters
            return 0, 0
        at = [self.table.params.index(n) for n in manipulator.names]
        return keys_in_space(manipulator, (tuple(key[i] for i in at) for key, rec in self.table.items()
                                           if keep(rec)))

    def feasible_count(self, max_nodes: int = 3_000_000) -> Optional[int]:
        """Number of configurations of the space satisfying the known constraints (exact, by
        enumeration per constraint group); None when enumeration would exceed ``max_nodes``."""
        return FeasibleSpace(self.manipulator()).count(max_nodes)

    def covers_space(self) -> bool:
        """Whether the table is exhaustive, from its data: every configuration of the space that satisfies
        the known constraints has a row (OK or failed).  False when the space is too large to count.
        Called once when a table file is joined with a kernel's space."""
        feasible = self.feasible_count()
        return feasible is not None and feasible > 0 and self.rows_in_space()[1] >= feasible

    def __repr__(self) -> str:
        return f"ReplayBenchmark({self.name!r}, {self.table!r})"


def searched_space(benchmark: "ReplayBenchmark", table_space: bool, whole_space: bool) -> Tuple[bool, str]:
    """Called by a replay tuner once, when it opens its table: (search only the recorded configurations?,
    one line saying which space is searched). The table space whenever ``table_space``, and for a sparse
    table (``spec.sparse``: its rows sample the kernel's space) unless ``whole_space``."""
    rows = len(benchmark.table)
    if table_space or (benchmark.spec.sparse and not whole_space):
        why = "--table-space" if table_space else "a sparse table: the default; --whole-space searches the whole space"
        return True, f"searched space: the table's {rows} recorded configurations ({why})"
    what = "sparse table" if benchmark.spec.sparse else "table"
    return False, (f"searched space: the kernel's whole space; the {what}'s {rows} recorded configurations are "
                   "the only ones measured, the rest are 'not measured'")
