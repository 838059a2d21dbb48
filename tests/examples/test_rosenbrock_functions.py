"""Tests of the Rosenbrock example's test functions (examples/rosenbrock/functions.py)."""
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


functions = _load("rosenbrock_functions", REPO / "examples" / "rosenbrock" / "functions.py")
FUNCTIONS = functions.FUNCTIONS


def test_registry_names():
    assert sorted(FUNCTIONS) == ["ackley", "rastrigin", "rosenbrock", "sphere"]
    for name, spec in FUNCTIONS.items():
        assert spec.name == name


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dimensions", [1, 2, 3, 4, 10, 50])
def test_value_at_known_optimum(name, dimensions):
    spec = FUNCTIONS[name]
    if dimensions < spec.min_dimensions:
        with pytest.raises(ValueError, match="at least 2 values"):
            spec(spec.optimum(dimensions))
        return
    x = spec.optimum(dimensions)
    assert len(x) == dimensions
    value = spec(x)
    assert isinstance(value, float)
    assert value == pytest.approx(spec.optimum_value, abs=1e-12)
    assert spec(np.array(x)) == value          # lists and arrays alike


@pytest.mark.parametrize("name, x, expected", [
    ("rosenbrock", [0.0, 0.0], 1.0),
    ("rosenbrock", [-1.0, 1.0], 4.0),                       # 100 (1 - 1)^2 + (1 + 1)^2
    ("rosenbrock", [1.0, 2.0], 100.0),                      # 100 (2 - 1)^2 + 0
    ("rosenbrock", [0.0, 0.0, 0.0], 2.0),
    ("sphere", [1.0, 2.0, -2.0], 9.0),
    ("rastrigin", [1.0], 1.0),                              # 10 + 1 - 10 cos(2 pi)
    ("rastrigin", [0.5, 0.0], 20.25),                       # 20 + 0.25 - 10 cos(pi) - 10
    ("ackley", [1.0, 1.0], 20.0 - 20.0 * math.exp(-0.2)),   # cos(2 pi) = 1 cancels e
])
def test_known_values(name, x, expected):
    assert FUNCTIONS[name](x) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(FUNCTIONS)),
       st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=8))
def test_values_not_below_minimum(name, x):
    spec = FUNCTIONS[name]
    value = spec(x)
    assert math.isfinite(value)
    assert value >= spec.optimum_value - 1e-12
    if max(abs(v - spec.optimum_coordinate) for v in x) > 1e-3:
        assert value > spec.optimum_value


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("bad", [[], [[1.0, 2.0], [3.0, 4.0]], np.zeros((2, 2, 2))])
def test_rejects_wrong_shapes(name, bad):
    with pytest.raises(ValueError, match="1-D vector"):
        FUNCTIONS[name](bad)



# ------------------------------------------------------------------------------ the tuner end to end

def _core_available() -> bool:
    try:
        from tunerlib import MeasurementInterface  # noqa: F401
    except ImportError:
        return False
    return True


needs_core = pytest.mark.skipif(not _core_available(), reason="tunerlib core (MeasurementInterface) not importable")


@pytest.fixture(scope="module")
def tuner():
    return _load("rosenbrock_tuner_example", REPO / "examples" / "rosenbrock" / "rosenbrock_tuner.py")


@needs_core
@pytest.mark.parametrize("extra", [[], ["--function", "rastrigin", "--integer", "--dimensions", "2"]])
def test_tuner_runs(tuner, tmp_path, capsys, extra):
    code = tuner.RosenbrockTuner.main(["--test-limit", "40", "--seed", "2", "--database",
                                       str(tmp_path / "r.db"), "--quiet", *extra])
    out = capsys.readouterr().out
    assert code == 0
    assert "best point for" in out and "known minimum 0" in out
    value = float(next(l for l in out.splitlines() if l.startswith("value: ")).split()[1])
    assert value >= 0


@needs_core
def test_tuner_bad_options(tuner, tmp_path, capsys):
    db = str(tmp_path / "r.db")
    assert tuner.RosenbrockTuner.main(["--dimensions", "1", "--database", db]) == 2
    assert tuner.RosenbrockTuner.main(["--domain", "-1", "--database", db]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "--dimensions 1 is too small" in err[0] and "--domain -1" in err[1]
