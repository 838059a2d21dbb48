"""Several objectives at once: :class:`MultiObjective`, the ``--objectives`` syntax and the run's checks.

A multi-objective run minimises (or maximises) several metrics of each :class:`~tunerlib.Result`:
``time`` (s), ``energy``, ``size``, ``accuracy`` or any ``extra`` key.  Its answer is the Pareto front
(:mod:`tunerlib.front`), not one number.  Constraints on metrics stay feasibility: a result that
breaks one is INFEASIBLE, never an objective.

``--objectives`` syntax (:func:`parse_objectives`): a comma-separated list of metric names; a name is
minimised unless prefixed ``max:`` (``min:`` may be written for clarity), e.g. ``time,energy`` or
``time,max:accuracy``.  Units come from the tuner's ``metric_units`` (a dict on the interface class),
then :data:`DEFAULT_UNITS`; a metric without a known unit is unitless.  One metric makes an ordinary
single-objective run.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import UsageError
from .objectives import MaximizeAttribute, MaximizeAccuracy, MinimizeAttribute, MinimizeTime, Objective
from .result import Result

__all__ = ["DEFAULT_UNITS", "MultiObjective", "OBJECTIVES_KEY", "UNITS_KEY", "check_resume_objectives",
           "check_technique", "metric_name", "objective_count", "objective_values", "parse_objectives",
           "run_args", "run_objective", "stored_objectives"]

#: the key of a run's stored ``args`` that lists its objectives (describe() of each); a run without it
#: had the single objective of its ``objective`` text
OBJECTIVES_KEY = "objective_list"

#: the key of a run's stored ``args`` that maps each objective's metric to its unit (None: unitless)
UNITS_KEY = "objective_units"

#: units of the built-in metrics (a tuner's ``metric_units`` overrides them)
DEFAULT_UNITS: Dict[str, str] = {"time": "s", "energy": "J", "size": "B"}


class MultiObjective(Objective):
    """Several objectives, each read from every result; the first is the run's "best" metric.

    Called by the search driver once per completed result (:meth:`values`); :meth:`value` is the
    first oriented objective, so everything written for one objective keeps working.
    """

    def __init__(self, objectives: Sequence[Objective]) -> None:
        if len(objectives) < 2:
            raise ValueError("MultiObjective needs at least two objectives; use the objective itself")
        if not all(isinstance(o, Objective) and not isinstance(o, MultiObjective) for o in objectives):
            raise ValueError("MultiObjective takes single objectives (MinimizeTime(), MinimizeAttribute(...))")
        names = [metric_name(o) for o in objectives]
        if len(set(names)) != len(names):
            raise ValueError(f"MultiObjective lists a metric twice: {names}")
        self.objectives: Tuple[Objective, ...] = tuple(objectives)
        self.unit = objectives[0].unit

    @property
    def count(self) -> int:
        """How many objectives."""
        return len(self.objectives)

    @property
    def names(self) -> List[str]:
        """Metric names in order (``["time", "energy"]``)."""
        return [metric_name(o) for o in self.objectives]

    @property
    def units(self) -> List[Optional[str]]:
        """Each objective's unit (None: unitless)."""
        return [o.unit for o in self.objectives]

    @property
    def sign(self) -> float:
        return self.objectives[0].sign

    def raw(self, result: Result) -> Optional[float]:
        return self.objectives[0].raw(result)

    def describe(self) -> str:
        """``minimize time, minimize energy``: stored with the run."""
        return ", ".join(o.describe() for o in self.objectives)

    def values(self, result: Result) -> Tuple[float, ...]:
        """The oriented objective vector of a result (lower is better; all ``inf`` unless OK).

        Raises :class:`~tunerlib.objectives.ObjectiveError` for an OK result lacking a metric."""
        return tuple(o.value(result) for o in self.objectives)

    def displays(self, values: Sequence[float]) -> Dict[str, float]:
        """``{"time": 0.05, "energy": 510.0}``: an oriented vector as the user's metrics."""
        return {n: o.display(v) for n, o, v in zip(self.names, self.objectives, values)}


def metric_name(objective: Objective) -> str:
    """The metric an objective reads (``time``, ``accuracy`` or the attribute's name)."""
    name = getattr(objective, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(objective, MinimizeTime):
        return "time"
    if isinstance(objective, MaximizeAccuracy):
        return "accuracy"
    return objective.describe().split(" ", 1)[-1]


def objective_count(objective: Objective) -> int:
    """1 for an ordinary objective, the number of objectives of a :class:`MultiObjective`."""
    return objective.count if isinstance(objective, MultiObjective) else 1


def objective_values(objective: Objective, result: Result) -> Tuple[float, ...]:
    """The oriented vector of a multi-objective run's result; ``()`` for a single objective."""
    return objective.values(result) if isinstance(objective, MultiObjective) else ()


def _one(spec: str, units: Mapping[str, str]) -> Objective:
    direction, _, name = spec.rpartition(":")
    name = name.strip()
    direction = direction.strip().lower() or "min"
    if direction not in ("min", "max") or not name or not all(c.isalnum() or c in "_-." for c in name):
        raise UsageError(f"--objectives: {spec!r} is not a metric; write names such as time,energy "
                         "(prefix max: to maximise one, e.g. max:accuracy)")
    unit = units.get(name, DEFAULT_UNITS.get(name))
    if name == "time" and direction == "min" and unit == "s":
        return MinimizeTime()
    return (MinimizeAttribute if direction == "min" else MaximizeAttribute)(name, unit=unit)


def parse_objectives(text: str, units: Optional[Mapping[str, str]] = None) -> Objective:
    """The objective of ``--objectives TEXT`` (see the module docstring); UsageError (one line) for
    bad syntax or a metric given twice."""
    specs = [s for s in (part.strip() for part in text.split(",")) if s]
    if not specs:
        raise UsageError("--objectives needs at least one metric, e.g. --objectives time,energy")
    objectives = [_one(s, units or {}) for s in specs]
    names = [metric_name(o) for o in objectives]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--objectives names {', '.join(twice)} twice; give each metric once")
    return objectives[0] if len(objectives) == 1 else MultiObjective(objectives)


def run_objective(interface: Any, options: Any) -> Objective:
    """Called once per run: ``--objectives`` when given (with the tuner's ``metric_units``), else the
    tuner's own :meth:`~tunerlib.MeasurementInterface.objective`."""
    text = getattr(options, "objectives", None)
    if not text:
        return interface.objective()
    return parse_objectives(text, getattr(interface, "metric_units", None) or {})


def check_technique(technique: Any, objective: Objective) -> None:
    """Called before a run is created: UsageError (one line) when the run has several objectives and
    the technique does not handle them (``Technique.multi_objective``)."""
    count = objective_count(objective)
    if count > 1 and not getattr(technique, "multi_objective", False):
        raise UsageError(f"technique {technique.name!r} optimises one objective and this run has {count} "
                         f"({objective.describe()}); use --technique auto or NSGA2, or give one objective")


def stored_objectives(objective: Objective) -> List[str]:
    """What a new run records under :data:`OBJECTIVES_KEY`."""
    if isinstance(objective, MultiObjective):
        return [o.describe() for o in objective.objectives]
    return [objective.describe()]


def run_args(objective: Objective) -> Dict[str, Any]:
    """What a new run records in its ``args`` about its objectives (:data:`OBJECTIVES_KEY`, :data:`UNITS_KEY`)."""
    units = dict(zip(objective.names, objective.units)) if isinstance(objective, MultiObjective) else None
    return {OBJECTIVES_KEY: stored_objectives(objective), UNITS_KEY: units}


def check_resume_objectives(info: Dict[str, Any], objective: Objective) -> None:
    """Called by ``--resume`` before the run is taken: UsageError (one line) when the run recorded other
    objectives than this one (a run that recorded no list had one objective)."""
    recorded = (info.get("args") or {}).get(OBJECTIVES_KEY)
    current = stored_objectives(objective)
    if recorded is None:
        if len(current) == 1:
            return
        recorded = ["one objective"]
    if list(recorded) != current:
        raise UsageError(f"--resume: run {info.get('uuid')} optimised {', '.join(recorded)}, not "
                         f"{', '.join(current)}; resume it with the objectives it was started with, or "
                         "drop --resume to start a new run")

