"""``tools/compare.py`` knows the example test functions in any dimension by name (``rastrigin40d``):
wide continuous spaces for checking the default technique's rule beyond the shipped problems."""
import pytest

from tools.problems import default_problems


@pytest.mark.parametrize("name, function, dims", [("rastrigin40d", "rastrigin", 40), ("ackley8d", "ackley", 8),
                                                  ("sphere3d", "sphere", 3), ("rosenbrock40d", "rosenbrock", 40)])
def test_a_test_function_in_any_dimension_is_a_problem(name, function, dims):
    problem = default_problems([name])[name]
    space = problem.make_space()
    assert [p.name for p in space.parameters] == [f"x{i}" for i in range(dims)]
    assert problem.optimum == 0.0 and problem.data["function"] == function
    assert problem.evaluate({f"x{i}": 0.0 for i in range(dims)}) == pytest.approx(1.0 * (function == "rosenbrock")
                                                                                  * (dims - 1), abs=1e-9)


def test_an_unknown_function_name_is_still_refused():
    with pytest.raises(SystemExit, match="unknown problem"):
        default_problems(["griewank4d"])
