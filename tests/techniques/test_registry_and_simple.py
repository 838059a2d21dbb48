"""Registry behaviour and the minimal techniques on real spaces."""
import pytest

from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, PermutationParameter)
from tunerlib.techniques import (DEFAULT_TECHNIQUE, TechniqueError, Catalogue,
                                 create_technique, registry)


def space():
    m = ConfigurationManipulator()
    m.add_parameter(IntegerParameter("a", 0, 50))
    m.add_parameter(FloatParameter("b", -1.0, 1.0))
    m.add_parameter(EnumParameter("c", ["p", "q", "r"]))
    m.add_parameter(PermutationParameter("d", list(range(6))))
    m.add_constraint("a >= 10 or c == 'p'")
    return m


def test_duplicate_names_rejected():
    reg = Catalogue()
    reg.register("X", lambda: None)
    with pytest.raises(TechniqueError, match="already registered"):
        reg.register("X", lambda: None)


def test_unknown_name_suggests():
    with pytest.raises(TechniqueError, match="did you mean 'PureRandom'"):
        create_technique(["PureRandm"])


def test_registry_creates_fresh_instances():
    a, b = registry().create("PureRandom"), registry().create("PureRandom")
    assert a is not b


def test_default_technique_is_registered():
    assert DEFAULT_TECHNIQUE in registry()
