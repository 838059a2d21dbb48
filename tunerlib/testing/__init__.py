"""The technique conformance kit, shipped so that a user's own technique can be checked.

Register the technique first (``tunerlib.techniques.register(name, factory)``), then::

    from tunerlib.testing import check_technique
    check_technique("MyTechnique")            # raises ConformanceError naming the first broken rule

Every check takes a technique *name* (a registered name or a generated composable-technique name) and
runs fresh instances, so checks are independent.  They cover what the search driver relies on:

* :func:`check_full_budget` -- through the real driver (:func:`tunerlib.tune_function`) the whole budget
  is measured on each of :data:`SPACES` (permutation, numeric, mixed with every parameter kind, and
  constrained), and every measured configuration is legal and satisfies the known constraints;
* :func:`check_deterministic` -- the same seed gives the same measurements, another seed others;
* :func:`check_asynchronous` -- several requests in flight, results in random order, other
  techniques' results and duplicates mixed in, and no stall;
* :func:`check_failed_feedback` -- failed and infeasible results and foreign results are tolerated;
* :func:`check_tiny_spaces` -- spaces with one configuration or none (a technique may answer None,
  "nothing new", or refuse such a space at bind() with a TechniqueError), and a small space measured
  to exhaustion;
* :func:`check_multi_objective` -- a technique that declares ``multi_objective`` measures the whole
  budget of a two-objective problem through the real driver, legally, and the run's Pareto front is the
  non-dominated set of what it measured, also with results fed out of order with ``Feedback.values``;
  any other technique is refused by a two-objective run at construction (a one-line UsageError).

tests/techniques/test_conformance.py runs every check on every registered technique.
"""
from __future__ import annotations

import math
import random
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tunerlib.parameters import (BooleanParameter, ConfigurationManipulator, EnumParameter, IntegerParameter,
                                 PermutationParameter)
from tunerlib.techniques import Feedback, Proposal, Technique, TechniqueError, create_technique

from ..script.api import TuningRunManager, tune_function
from ..errors import UsageError
from ..multiobjective import MultiObjective
from ..objectives import MinimizeAttribute
from ..result import Result
from ..techniques.pareto import non_dominated

from .spaces import (SPACES, Cost, Space, constrained_space, mixed_space,  # noqa: F401 (the kit's API)
                     numeric_space, permutation_space)


class ConformanceError(AssertionError):
    """A technique broke one of the kit's rules (the message names the technique, check and space)."""


def _fail(name: str, check: str, message: str) -> ConformanceError:
    return ConformanceError(f"{name}: {check}: {message}")


def _check_legal(name: str, manipulator: ConfigurationManipulator, config: Dict[str, Any],
                 key: Optional[str] = None) -> None:
    try:
        manipulator.validate(config)
    except Exception as exc:
        raise _fail(name, "legality", f"illegal proposal {config}: {exc}") from None
    if not manipulator.is_feasible(config):
        raise _fail(name, "legality", f"proposal violates a known constraint: {config}")
    if key is not None and key != manipulator.hash_config(config):  # the search driver stores this key
        raise _fail(name, "legality", f"proposal carries key {key[:12]}..., not its configuration's hash: {config}")


def _create(name: str) -> Technique:
    return create_technique([name])


# ---- checks through the real driver ---------------------------------------------------------------
def check_full_budget(name: str, space: str, budget: int = 200, seed: int = 3) -> None:
    """Run ``budget`` measurements of ``name`` on ``SPACES[space]`` through :func:`tunerlib.tune_function`:
    every one must be measured, legal and feasible, with a finite value."""
    manipulator, fn = SPACES[space]()
    bad: List[Dict[str, Any]] = []

    def checked(cfg):
        if not manipulator.is_valid(cfg) or not manipulator.is_feasible(cfg):
            bad.append(cfg)
        return fn(cfg)
    run = tune_function(manipulator, checked, test_limit=budget, technique=[name], seed=seed)
    if bad:
        raise _fail(name, "full budget", f"measured an illegal or infeasible configuration on {space}: {bad[0]}")
    if run.summary.tests != budget:
        raise _fail(name, "full budget", f"{run.summary.tests} of {budget} measured on {space} "
                                         f"({run.summary.stopped_because})")
    if not all(math.isfinite(v) for v in run.values) or run.summary.best_value != min(run.values):
        raise _fail(name, "full budget", f"non-finite values or a wrong best on {space}")


def check_deterministic(name: str, budget: int = 60, seed: int = 11) -> None:
    """The same ``seed`` twice gives the same measurements (mixed space); ``seed + 1`` gives others."""
    runs = [tune_function(*mixed_space(), test_limit=budget, technique=[name], seed=s).values
            for s in (seed, seed, seed + 1)]
    if runs[0] != runs[1]:
        raise _fail(name, "determinism", f"seed {seed} gave two different runs")
    if runs[0] == runs[2]:
        raise _fail(name, "determinism", f"seeds {seed} and {seed + 1} gave the same run")


def check_tiny_spaces(name: str) -> None:
    """Spaces with one configuration or none get proposals forever; an 18-configuration space is
    measured to exhaustion (and its optimum found) through the driver."""
    tiny = [ConfigurationManipulator(), ConfigurationManipulator([BooleanParameter("b")]),
            ConfigurationManipulator([PermutationParameter("p", [1, 2])]),
            ConfigurationManipulator([EnumParameter("e", ["u"])])]
    for manipulator in tiny:
        sequential(name, manipulator, lambda i, c: ("ok", 1.0), 40, seed=0, tiny=True)
    m = ConfigurationManipulator([IntegerParameter("a", 0, 2), IntegerParameter("b", 0, 2), BooleanParameter("c")])
    run = tune_function(m, lambda c: c["a"] + 2 * c["b"] + c["c"], test_limit=100, technique=[name], seed=2)
    if run.summary.tests != 18 or run.summary.best_value != 0:
        raise _fail(name, "tiny spaces", f"{run.summary.tests} of 18 configurations measured, "
                                         f"best {run.summary.best_value} (optimum 0)")


# ---- checks of the technique protocol itself ------------------------------------------------------
def drive(name: str, manipulator: ConfigurationManipulator, fn: Cost, n: int, seed: int,
          batch: int = 4, foreign: float = 0.2) -> List[str]:
    """Answer ``n`` of the technique's own proposals with several in flight and in random order, mix in
    other techniques' results (probability ``foreign`` per step) and answer duplicates at once.

    Returns the configuration keys measured for the technique, in order; raises ConformanceError on an
    illegal or infeasible proposal or a stall (2000 steps without a new proposal)."""
    tech, rng = _create(name), random.Random(seed)
    tech.bind(manipulator, random.Random(seed), tech.name)
    known: Dict[str, float] = {}
    best, idle = [math.inf], 0
    inflight: List[Tuple[Proposal, str]] = []  # (proposal, its configuration's key)
    keys: List[str] = []

    def answer(prop_cfg, key, requestor):
        value = known[key] if key in known else fn(prop_cfg)
        new = key not in known and value < best[0]
        known[key], best[0] = value, min(best[0], value)
        tech.observe(Feedback(prop_cfg, key, value, "ok", requestor, new))

    while len(keys) < n:
        if idle >= 2000:
            raise _fail(name, "asynchronous", f"stalled after {len(keys)} results")
        _top_up(name, tech, manipulator, inflight, batch, known, answer)
        if foreign and rng.random() < foreign:
            cfg = manipulator.random(rng)
            answer(cfg, manipulator.hash_config(cfg), "someone-else")
        if not inflight:
            idle += 1
            continue
        idle = 0
        prop, key = inflight.pop(rng.randrange(len(inflight)))
        answer(prop.config, key, prop.requestor)
        keys.append(key)
    return keys


def _top_up(name, tech, manipulator, inflight, batch, known, answer) -> None:
    """Ask for proposals until ``batch`` are in flight or the technique says wait (None)."""
    for _ in range(batch * 50):
        if len(inflight) >= batch:
            return
        prop = tech.propose()
        if prop is None:
            return
        _check_legal(name, manipulator, prop.config, prop.key)
        key = manipulator.hash_config(prop.config)
        if key in known:
            answer(prop.config, key, prop.requestor)
        else:
            inflight.append((prop, key))


def check_asynchronous(name: str, n: int = 150, seed: int = 5) -> None:
    """:func:`drive` on the constrained and the mixed space: ``n`` results each, no error, no stall."""
    for space in (constrained_space, mixed_space):
        drive(name, *space(), n, seed)


def sequential(name: str, manipulator: ConfigurationManipulator,
               answer: Callable[[int, Dict[str, Any]], Tuple[str, float]], n: int, seed: int,
               foreign: Optional[Cost] = None, tiny: bool = False) -> None:
    """Ask for ``n`` proposals one at a time; answer the i-th with ``answer(i, config) -> (state,
    value)`` and, when ``foreign`` is given, follow it with another technique's result (a random
    configuration valued by ``foreign``).  With nothing in flight a proposal must come (never None),
    legal and feasible.  With ``tiny`` (a space of one configuration or none) None ("nothing new") is
    allowed, and so is refusing the space at bind() with a TechniqueError."""
    tech, rng = _create(name), random.Random(seed + 7)
    try:
        tech.bind(manipulator, random.Random(seed), tech.name)
    except TechniqueError:
        if tiny:
            return
        raise
    for i in range(n):
        prop = tech.propose()
        if prop is None and tiny:
            continue
        if prop is None:
            raise _fail(name, "sequential", "proposed nothing with no request in flight")
        _check_legal(name, manipulator, prop.config, prop.key)
        state, value = answer(i, prop.config)
        tech.observe(Feedback(prop.config, manipulator.hash_config(prop.config), value, state,
                              prop.requestor, False))
        if foreign is not None:
            other = manipulator.random(rng)
            tech.observe(Feedback(other, manipulator.hash_config(other), foreign(other), "ok",
                                  "someone-else", False))


def check_failed_feedback(name: str, n: int = 150, seed: int = 2) -> None:
    """Every third result failed, every third infeasible, and another technique's result after each:
    the technique keeps making legal proposals."""
    manipulator, fn = constrained_space()

    def answer(i, cfg):
        state = ("ok", "error", "infeasible")[i % 3]
        return state, (fn(cfg) if state == "ok" else math.inf)
    sequential(name, manipulator, answer, n, seed, foreign=fn)


def two_objectives(cfg: Dict[str, Any], cost: Cost) -> Tuple[float, float]:
    """A second objective that conflicts with ``cost`` on the mixed space: (cost, distance of ``i`` and
    ``f`` from the far corner)."""
    return cost(cfg), abs(cfg["i"] - 100) / 10 + abs(cfg["f"] - 1.0) + (cfg["e"] != "c")


def check_multi_objective(name: str, budget: int = 120, seed: int = 4) -> None:
    """See the module docstring: the whole budget on the mixed space with two objectives through the real
    driver, the run's front checked against the measured vectors; then :func:`drive`-style feedback with
    ``Feedback.values``, out of order, with failures."""
    if not getattr(_create(name), "multi_objective", False):
        try:
            TuningRunManager.for_space(mixed_space()[0], _two(), quiet=True, technique=[name], test_limit=5,
                                       database="memory://")
        except UsageError:
            return
        raise _fail(name, "multi-objective", "a two-objective run accepted a technique without multi_objective")
    manipulator, fn = mixed_space()
    manager = TuningRunManager.for_space(manipulator, _two(), quiet=True, technique=[name], test_limit=budget,
                                         seed=seed, database="memory://")   # nothing left in the caller's folder
    measured: List[Tuple[float, float]] = []
    while (desired := manager.get_next_desired_result()) is not None:
        cfg = desired.configuration.data
        _check_legal(name, manipulator, cfg)
        measured.append(two_objectives(cfg, fn))
        manager.report_result(desired, Result(extra={"f1": measured[-1][0], "f2": measured[-1][1]}))
    summary = manager.finish()
    if len(measured) != budget:
        raise _fail(name, "multi-objective", f"{len(measured)} of {budget} measured ({summary.stopped_because})")
    expected = sorted({measured[i] for i in non_dominated(measured)})
    found = sorted((p["objectives"]["f1"], p["objectives"]["f2"]) for p in summary.pareto_front or [])
    if found != expected:
        raise _fail(name, "multi-objective", f"the run's front {found} is not the measured one {expected}")
    _drive_values(name, seed)


def _two() -> MultiObjective:
    return MultiObjective([MinimizeAttribute("f1"), MinimizeAttribute("f2")])


def _drive_values(name: str, seed: int, n: int = 90, batch: int = 4) -> None:
    manipulator, fn = mixed_space()
    tech, rng = _create(name), random.Random(seed)
    tech.bind(manipulator, random.Random(seed), tech.name)
    inflight: List[Tuple[Any, str]] = []
    for i in range(n):
        for _ in range(batch * 50):
            if len(inflight) >= batch:
                break
            prop = tech.propose()
            if prop is None:
                break
            _check_legal(name, manipulator, prop.config, prop.key)
            inflight.append((prop, manipulator.hash_config(prop.config)))
        if not inflight:
            raise _fail(name, "multi-objective", f"proposed nothing with no request in flight after {i} results")
        prop, key = inflight.pop(rng.randrange(len(inflight)))
        ok = i % 4 != 3
        values = two_objectives(prop.config, fn) if ok else (math.inf, math.inf)
        tech.observe(Feedback(prop.config, key, values[0], "ok" if ok else "error", prop.requestor,
                              False, values=values))


def _full_budget(space: str) -> Callable[[str, float], None]:
    """The full-budget check on ``space``, as a CHECKS entry."""
    return lambda name, scale: check_full_budget(name, space, _scaled(200, scale))


def _scaled(n: int, scale: float) -> int:
    return max(30, round(n * scale))


#: every check of the kit, by name: name -> function(technique_name, scale); ``scale`` multiplies its
#: budget (at least 30), for techniques whose proposals cost much CPU
CHECKS: Dict[str, Callable[[str, float], None]] = {
    **{f"full-budget-{space}": _full_budget(space) for space in SPACES},
    "deterministic": lambda name, scale: check_deterministic(name, _scaled(60, scale)),
    "asynchronous": lambda name, scale: check_asynchronous(name, _scaled(150, scale)),
    "failed-feedback": lambda name, scale: check_failed_feedback(name, _scaled(150, scale)),
    "tiny-spaces": lambda name, scale: check_tiny_spaces(name),
    "multi-objective": lambda name, scale: check_multi_objective(name, _scaled(120, scale))}


def check_technique(name: str, checks: Sequence[str] = tuple(CHECKS), scale: float = 1.0) -> None:
    """Run the named ``checks`` (default: all of :data:`CHECKS`) on the technique ``name``, each budget
    multiplied by ``scale``; raises :class:`ConformanceError` at the first broken rule, returns None
    when every check passes."""
    for check in checks:
        if check not in CHECKS:
            raise ValueError(f"unknown conformance check {check!r}; choose from {sorted(CHECKS)}")
        CHECKS[check](name, scale)
