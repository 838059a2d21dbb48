"""Ask/tell tuning from Python (notebooks, other frameworks' loops).

    manager = TuningRunManager.for_space(manipulator, objective=MinimizeAttribute("loss"),
                                         database="runs.db", seed=1)
    for _ in range(100):
        desired = manager.get_next_desired_result()
        if desired is None:
            break
        loss = evaluate(desired.configuration.data)
        manager.report_result(desired, Result(extra={"loss": loss}))
    print(manager.get_best_configuration())
    manager.finish()
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..engine.callbacks import Callback
from .interface import MeasurementInterface
from ..objectives import MinimizeAttribute, MinimizeTime, Objective
from ..options import TuningOptions
from ..parameters import ConfigurationManipulator
from ..engine.progress import Summary
from ..result import DesiredResult, Result
from ..engine.run import TuningRun


class _SpaceInterface(MeasurementInterface):
    """A MeasurementInterface made from a manipulator, for :meth:`TuningRunManager.for_space`."""

    def __init__(self, options: TuningOptions, manipulator: ConfigurationManipulator,
                 objective: Objective, name: str, seeds: Sequence[Dict[str, Any]] = ()) -> None:
        super().__init__(options)
        self._manipulator, self._objective, self._name = manipulator, objective, name
        self._seeds = [dict(c) for c in seeds]

    def seed_configurations(self) -> List[Dict[str, Any]]:
        return list(self._seeds)

    def manipulator(self) -> ConfigurationManipulator:
        return self._manipulator

    def objective(self) -> Objective:
        return self._objective

    def program_name(self) -> str:
        return self._name


class TuningRunManager:
    """Drive a tuning run yourself: ask for configurations, tell their results.

    A thin wrapper of :meth:`TuningRun.ask` / :meth:`TuningRun.tell`; ``callbacks`` are called after
    each result (see :mod:`tunerlib.engine.callbacks`)."""

    def __init__(self, interface: MeasurementInterface, options: Optional[TuningOptions] = None,
                 callbacks: Sequence[Callback] = ()) -> None:
        self._run = TuningRun(interface, options, callbacks)
        self._run.prepare()
        self._finished = False

    @classmethod
    def for_space(cls, manipulator: ConfigurationManipulator, objective: Optional[Objective] = None,
                  program_name: str = "ask-tell", seed_configurations: Sequence[Dict[str, Any]] = (),
                  callbacks: Sequence[Callback] = (), **options: Any) -> "TuningRunManager":
        """Build a manager from a search space; ``options`` are TuningOptions fields.
        ``seed_configurations`` are measured first (like a tuner script's seed_configurations)."""
        opts = TuningOptions(**options)
        return cls(_SpaceInterface(opts, manipulator, objective or MinimizeTime(), program_name,
                                   seed_configurations), opts, callbacks)

    @property
    def run(self) -> TuningRun:
        """The underlying TuningRun (its ``search.progress.best``, ``db``, ``run_id``, ``uuid``)."""
        return self._run

    def get_next_desired_result(self) -> Optional[DesiredResult]:
        """The next configuration to measure, or None when the limits or the space are exhausted."""
        return self._run.ask("api")

    def report_result(self, desired_result: DesiredResult, result: Result, cost: Optional[float] = None) -> None:
        """Record the result of a configuration returned by :meth:`get_next_desired_result`
        (TunerScriptError when ``result`` is not a tunerlib.Result); ``cost``: the seconds the
        measurement took, when known (the techniques' ``Feedback.cost``; ``auto``'s cost policy)."""
        record = None
        if cost is not None and isinstance(result, Result):
            record = result.record(collection_cost=float(cost), machine_id=self._run.machine_id)
        self._run.tell(desired_result, result, record)

    def get_best_configuration(self) -> Optional[Dict[str, Any]]:
        best = self._run.search.progress.best
        return None if best is None else best.config

    def get_best_result(self) -> Optional[Result]:
        best = self._run.search.progress.best
        return None if best is None else best.result

    def finish(self) -> Summary:
        """Close the run (idempotent) and return its summary."""
        if not self._finished:
            self._run.finish("finished by caller")
            self._finished = True
        return self._run.summary("finished by caller")


def tune_function(manipulator: ConfigurationManipulator, fn, *, test_limit: int,
                  technique: Optional[Sequence[str]] = None, seed: Optional[int] = None,
                  database: str = "memory://", program_name: str = "function",
                  seed_configurations: Sequence[Dict[str, Any]] = (),
                  measurement_cost: Optional[Callable[[Dict[str, Any]], float]] = None,
                  **options: Any) -> "FunctionRun":
    """Minimise ``fn(config) -> float`` over ``manipulator`` with at most ``test_limit`` measurements.

    ``options`` are further TuningOptions fields (``store``, ``upload``, ``bandit_c``, ...).

    ``seed_configurations`` are measured first (then the techniques take over).
    ``fn`` may return None or raise to mark a configuration as an error, or a :class:`Result` to report
    one as given (``Result(state="ERROR", extra={"not_measured": True})``: a replayed table has no row
    for it, which techniques see as ``Feedback.unmeasured``; an OK Result carries ``extra["value"]``).
    The default store is in memory (``memory://``, :class:`tunerlib.db.MemoryStore`); pass ``database``
    to keep the run.  Each result records the seconds its call of ``fn`` took, or
    ``measurement_cost(config)`` when given (a replayed table that stands for a measurement of that
    many seconds), which cost-aware techniques (``auto``) read.  Returns a :class:`FunctionRun` with
    the summary and the value of every measurement in order (``inf`` for errors and failed Results),
    from which best-so-far curves follow.
    """
    opts: Dict[str, Any] = {"test_limit": test_limit, "seed": seed, "database": database,
                            "quiet": True, "technique": list(technique or []), **options}
    manager = TuningRunManager.for_space(manipulator, MinimizeAttribute("value"), program_name,
                                         seed_configurations, **opts)
    values: List[float] = []
    while (desired := manager.get_next_desired_result()) is not None:
        config = desired.configuration.data
        start = time.perf_counter()
        try:
            value = fn(config)
        except Exception as exc:  # recorded as an ERROR result, like a failing run()
            value = Result(state="ERROR", extra={"error": repr(exc)})
        cost = measurement_cost(config) if measurement_cost is not None else time.perf_counter() - start
        if isinstance(value, Result):       # reported as given (a state, extra facts such as not_measured)
            manager.report_result(desired, value, cost)
            ok = value.state == "OK" and math.isfinite(value.extra.get("value", math.inf))
            values.append(float(value.extra["value"]) if ok else math.inf)
        elif value is None or not math.isfinite(value):
            manager.report_result(desired, Result(state="ERROR"), cost)
            values.append(math.inf)
        else:
            manager.report_result(desired, Result(extra={"value": float(value)}), cost)
            values.append(float(value))
    return FunctionRun(manager.finish(), values)


@dataclass
class FunctionRun:
    """What :func:`tune_function` returns."""

    summary: Summary
    values: List[float]

    def best_at(self, budget: int) -> float:
        """Best value among the first ``budget`` measurements (inf when none succeeded)."""
        return min(self.values[:budget], default=math.inf)
