"""Fixture results databases for the reporting tests (tests/report; registered by its conftest): real tuning runs on a small mixed space, made
with the public ask/tell API (so every result state occurs) and tune_function."""
import math

import pytest

from tunerlib import MinimizeAttribute, Result, TuningRunManager
from tunerlib.parameters import ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter

RUNS_PER_LABEL = 3
EVALUATIONS = 40
SEED_CONFIG = {"x": -9, "y": 4.0, "mode": "b"}


def space():
    return ConfigurationManipulator([IntegerParameter("x", -10, 10), FloatParameter("y", -5.0, 5.0),
                                     EnumParameter("mode", ["a", "b", "c"])])


def objective(cfg):
    """Mostly x, a little y, next to nothing mode (what the importance test expects)."""
    return (cfg["x"] - 3) ** 2 + 0.2 * (cfg["y"] + 1) ** 2 + 0.01 * "abc".index(cfg["mode"]) + 0.5


def measure(cfg):
    """The Result of a configuration: failures of every kind in known places."""
    if cfg["x"] <= -9 and cfg["mode"] == "c":
        return Result(state="ERROR", extra={"error": f"ValueError: x={cfg['x']} breaks mode c"})
    if cfg["y"] > 4.5:
        return Result(state="TIMEOUT")
    if cfg["x"] >= 9 and cfg["mode"] == "a":
        return Result(state="INFEASIBLE")
    return Result(extra={"value": objective(cfg)})


def tune(database, label, technique, seed, evaluations=EVALUATIONS, seeds=()):
    manager = TuningRunManager.for_space(space(), MinimizeAttribute("value"), program_name="toy",
                                         seed_configurations=seeds, database=database, seed=seed,
                                         test_limit=evaluations, technique=technique, label=label,
                                         quiet=True)
    while (desired := manager.get_next_desired_result()) is not None:
        manager.report_result(desired, measure(desired.configuration.data))
    return manager.finish()


@pytest.fixture(scope="session")
def results_db(tmp_path_factory):
    """Path of a results database with 3 runs labelled ``bandit`` (default technique, a seed
    configuration) and 3 labelled ``random`` (PureRandom)."""
    path = str(tmp_path_factory.mktemp("report") / "results.db")
    for seed in range(RUNS_PER_LABEL):
        tune(path, "bandit", [], seed, seeds=[SEED_CONFIG])
        tune(path, "random", ["PureRandom"], seed)
    return path


@pytest.fixture(scope="session")
def empty_db(tmp_path_factory):
    """A results database whose only run has no result."""
    path = str(tmp_path_factory.mktemp("empty") / "empty.db")
    TuningRunManager.for_space(space(), MinimizeAttribute("value"), database=path, test_limit=5,
                               quiet=True).finish()
    return path


def db_values(path, run_id):
    """(state, value or None) of every result of a run, read straight from the database."""
    from tunerlib.db import ResultsDB
    with ResultsDB(path) as db:
        return [(r.state, r.extra.get("value") if r.state == "OK" else None) for r in db.run_results(run_id)]


def best_so_far(values):
    best, out = math.inf, []
    for _, v in values:
        if v is not None:
            best = min(best, v)
        out.append(best if math.isfinite(best) else math.nan)
    return out
