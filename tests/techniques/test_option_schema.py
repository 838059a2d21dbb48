"""Each technique's option schema (``OPTIONS``) is the one declaration of its options.

Walks the catalogue (and the composable technique bases): no constructor of a technique names an
option of its schema as a parameter (a second default), clamps one or checks its range by hand
(a second range), and no schema names an option twice.  The class annotations that tell a type
checker about the attributes :func:`configure` sets agree with the schema.
"""
import ast
import inspect
import textwrap
import typing
from typing import Dict, Optional

import pytest

from tunerlib.techniques import Technique, TechniqueError, registry
from tunerlib.techniques.composable_bases import TECHNIQUE_BASES
from tunerlib.techniques.options import configure, defaults, validate

CAT = registry()


def _technique_classes():
    classes = set(TECHNIQUE_BASES.values())
    for entry in CAT.entries():
        target = CAT.target(entry.name)
        if inspect.isclass(target) and issubclass(target, Technique):
            classes.add(target)
    return sorted(classes, key=lambda c: c.__qualname__)


CLASSES = _technique_classes()


def _constructors(cls):
    """(class, ``__init__``) of every technique class in ``cls``'s MRO that defines one."""
    return [(k, vars(k)["__init__"]) for k in cls.__mro__
            if issubclass(k, Technique) and "__init__" in vars(k)]


def _mentions(node, names):
    """The option names ``node`` reads, as a bare name or as ``self.<name>``."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in names:
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute) and sub.attr in names and isinstance(sub.value, ast.Name):
            found.add(sub.attr)
    return found


def second_declarations(cls):
    """Every place outside ``cls.OPTIONS`` that declares one of its options: constructor parameters,
    hand-written range checks (an ``if`` that raises) and clamps (``max``/``min``) in a constructor."""
    names = {o.name for o in cls.OPTIONS}
    problems = []
    for owner, init in _constructors(cls):
        where = f"{owner.__qualname__}.__init__"
        for param in inspect.signature(init).parameters.values():
            if param.name in names:
                problems.append(f"{where} takes option {param.name!r} as a parameter")
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and any(isinstance(n, ast.Raise) for b in node.body for n in ast.walk(b)):
                for name in sorted(_mentions(node.test, names)):
                    problems.append(f"{where} checks option {name!r} by hand")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min"):
                for name in sorted(_mentions(node, names)):
                    problems.append(f"{where} clamps option {name!r} by hand")
    return problems


def test_the_walk_sees_the_techniques():
    qualnames = {c.__qualname__ for c in CLASSES}
    assert {"GreedyComposableTechnique", "StructuralSurrogate", "BayesianOptimization", "TPE",
            "AUCBanditMetaTechnique", "GeneticAlgorithm"} <= qualnames


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_no_option_is_declared_twice(cls):
    assert second_declarations(cls) == []
    names = [o.name for o in cls.OPTIONS]
    assert len(names) == len(set(names)), f"{cls.__qualname__}.OPTIONS names an option twice: {names}"


#: options whose attribute a base class declares for something else (the technique reads the value once)
OTHER_ATTRIBUTES = {("GlobalGA", "elite")}


def _annotation(option):
    """The class annotation of the attribute ``configure`` sets for ``option``."""
    base = Dict[str, str] if option.type is dict else option.type
    return Optional[base] if option.optional else base


@pytest.mark.parametrize("cls", [c for c in CLASSES if c.OPTIONS], ids=lambda c: c.__qualname__)
def test_option_attributes_are_annotated_with_their_schema_types(cls):
    hints = typing.get_type_hints(cls)
    as_attributes = not any("attributes=False" in inspect.getsource(init) for _, init in _constructors(cls))
    for option in cls.OPTIONS:
        if (cls.__name__, option.name) in OTHER_ATTRIBUTES:
            continue
        if as_attributes or option.name in hints:
            assert hints.get(option.name) == _annotation(option), \
                f"{cls.__qualname__}.{option.name} is annotated {hints.get(option.name)}, not {_annotation(option)}"


@pytest.mark.parametrize("cls", [c for c in CLASSES if c.OPTIONS], ids=lambda c: c.__qualname__)
def test_schema_defaults_pass_the_schema(cls):
    assert validate(cls.OPTIONS, defaults(cls.OPTIONS), cls.__qualname__) == defaults(cls.OPTIONS)


def test_the_check_finds_each_kind_of_second_declaration():
    from tunerlib.techniques.options import Option

    class Twice(Technique):
        OPTIONS = (Option("size", int, 3, 1, 10), Option("rate", float, 0.5, 0.0, 1.0))

        def __init__(self, name=None, size=3, **options):
            super().__init__(name)
            configure(self, options)
            if self.rate > 1.0:
                raise TechniqueError("rate")
            self.width = max(1, size)

        def desired_configuration(self):
            return None

    assert second_declarations(Twice) == [
        "test_the_check_finds_each_kind_of_second_declaration.<locals>.Twice.__init__ takes option 'size' "
        "as a parameter",
        "test_the_check_finds_each_kind_of_second_declaration.<locals>.Twice.__init__ checks option 'rate' by hand",
        "test_the_check_finds_each_kind_of_second_declaration.<locals>.Twice.__init__ clamps option 'size' by hand"]


def test_configure_fills_defaults_and_rejects_bad_values_in_one_line():
    cls = CAT.target("TPE")
    tech = cls(gamma=0.2)
    assert tech.gamma == 0.2 and tech.startup == 10 and tech.option_values()["gamma"] == 0.2
    for bad, words in (({"gamma": 0.9}, "out of range"), ({"startup": "x"}, "integer"),
                       ({"nonsense": 1}, "has no option 'nonsense'")):
        with pytest.raises(TechniqueError, match=words) as info:
            cls(**bad)
        assert "\n" not in str(info.value)
