"""``--backend replay``: the recorded CATBench TACO measurements, through :mod:`tunerlib.replay`
and :mod:`tunerlib.replay.recorded`.

Nothing is compiled: the search space is CATBench's variant of the kernel's space
(``tunerlib.replay.recorded.BENCHMARKS``: ``taco_<kernel>``, with its known constraints) and every
configuration is looked up in ``<kernel>_7742.csv.gz`` (a 128-thread CPU) or in the table given
with ``--data`` (recorded on any machine, under any file name: its columns are read by name, the
thread counts are the recorded ones, the space and constraints stay the kernel's).  A configuration that
was never recorded is INFEASIBLE with ``extra["not_measured"] = True`` and counted separately from
failed runs (:class:`tunerlib.replay.ReplayStats`).  The CATBench tables are sparse samples (about
10^4 rows of spaces of about 10^8 configurations), so by default only their recorded configurations
are searched (``--table-space``, a ``TableConstraint``); ``--whole-space`` searches the whole space,
where nearly every proposal is "not measured".  Times are in seconds (the tables record ms; the
reader converts), in the results database and in the final table alike.  The paper's default and expert schedules are
mapped into CATBench's parameters where their values are legal there (static scheduling, no
monotonic/dynamic flags) and reported with their recorded times, or as not measured.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import taco_spaces
from tunerlib import Configuration, DesiredResult, Result
from tunerlib.measure import BEST, Row, format_table
from tunerlib.parameters import ConfigurationManipulator
from tunerlib.replay import ReplayInterface, searched_space
from tunerlib.replay.recorded import BENCHMARKS, benchmark_from_file, shared_folder

TABLE_DIR = Path("data") / "taco_cache"


def table_path(kernel: str, data: Optional[str]) -> Path:
    """Where the kernel's table lies: ``data`` is a table file, a taco_cache folder or the shared
    folder; None means ``$TUNERLIB_SHARED_DIR``.  Raises FileNotFoundError (one line)."""
    fname = Path(BENCHMARKS[f"taco_{kernel}"].path).name
    if data is None:
        candidates = [shared_folder(None, "--data PATH (the taco_cache folder, the shared folder or a table "
                                          "file)") / TABLE_DIR / fname]
    elif Path(data).is_file():
        return Path(data)
    else:
        candidates = [Path(data) / fname, Path(data) / TABLE_DIR / fname]
    for path in candidates:
        if path.is_file():
            return path
    where = " or ".join(str(p) for p in candidates)
    raise FileNotFoundError(f"replay table {where} not found; pass --data with the taco_cache folder, "
                            "the shared folder, or the table file")


class ReplayBackend:
    """Replays one kernel's table; :meth:`run` answers a configuration, :meth:`report` summarises."""

    def __init__(self, kernel: str, data: Optional[str], options: Any) -> None:
        self.kernel = kernel
        self.benchmark = benchmark_from_file(table_path(kernel, data), like=f"taco_{kernel}")
        self.interface = ReplayInterface(options, benchmark=self.benchmark)
        self.table_space, self.space_note = searched_space(self.benchmark, bool(getattr(options, "table_space", False)),
                                                           bool(getattr(options, "whole_space", False)))

    def manipulator(self) -> ConfigurationManipulator:
        """CATBench's space of the kernel (a new one per call); with ``--table-space`` only the
        recorded configurations."""
        return self.benchmark.manipulator(self.table_space)

    def mapped(self, cfg: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
        """A BaCO-space configuration written in CATBench's parameters, or None when a value is
        outside CATBench's ranges."""
        m = self.benchmark.manipulator()
        out: Dict[str, Any] = {"omp_scheduling_type": 0 if cfg["omp_scheduling_type"] == "static" else 1,
                               "omp_monotonic": 0, "omp_dynamic": 0, "permutation": list(cfg["permutation"])}
        for name in m.names:
            if name not in out:
                if name not in cfg:
                    return None
                out[name] = cfg[name]
        return out if m.is_valid(out) and m.is_feasible(out) else None

    def seed_configurations(self) -> List[Dict[str, Any]]:
        """The mapped default configuration when it lies in CATBench's space (and was recorded,
        with ``--table-space``)."""
        cfg = self.mapped(taco_spaces.default_config(self.kernel))
        if cfg is None or (self.table_space and self.benchmark.lookup(cfg) is None):
            return []
        return [cfg]

    def run(self, cfg: Mapping[str, Any]) -> Result:
        """The recorded result of ``cfg`` (INFEASIBLE + ``not_measured`` when absent)."""
        return self.interface.run(DesiredResult(Configuration(dict(cfg), "replay")), None, None)

    def report(self, best: Optional[Mapping[str, Any]]) -> str:
        """Replay statistics, then the default / expert / best recorded times in seconds and the speed-up
        of the best (:func:`tunerlib.measure.format_table`; ``best`` None: the run measured nothing)."""
        rows = []
        for name, cfg in (("default", self.mapped(taco_spaces.default_config(self.kernel))),
                          ("expert", self.mapped(taco_spaces.expert_config(self.kernel))), (BEST, best)):
            if cfg is None:
                rows.append(Row(name, None, "no measured result" if name == BEST else "outside CATBench's space"))
            else:
                rows.append(Row(name, *self.benchmark.recorded(cfg)))
        title = (f"taco {self.kernel} (replay of {self.benchmark.table.source}): {self.interface.stats.render()}\n"
                 f"  {self.space_note}")
        return (format_table(title, rows, BEST) + "\n"
                + f"  table optimum in the space: {self.benchmark.optimum:.6g} s")
