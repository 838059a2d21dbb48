"""Benchmark problems for tools/compare.py: TSPLIB instances, test functions, recorded replays.

Each :class:`Problem` builds its search space and evaluates a configuration to a number (lower is
better) or None (failed).  TSPLIB and the test functions reuse the example tuners' readers
(``tsp/tsplib.py``, ``rosenbrock/functions.py``), loaded by path from the examples folder
(``examples=``, tools/compare.py's ``--examples DIR``; default: the ``examples/`` folder of the
checkout these tools run from, :func:`tools.example_problems.examples_dir`).  The TSPLIB
instances and recorded tables come from the shared data folder (``shared=``, ``--shared DIR``, else
``$TUNERLIB_SHARED_DIR``); without one, the problems that need it are absent.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, FloatParameter, PermutationParameter
from tools.example_problems import Folder, examples_dir, load_example
from tools.replay_problems import shared_data_dir


def shared_root(given: Folder = None) -> Path:
    """The shared data folder (``given``, else ``$TUNERLIB_SHARED_DIR``); without either a folder
    that cannot exist, so every problem that needs it is absent (``.exists()`` is False)."""
    try:
        return shared_data_dir(given)
    except FileNotFoundError:
        return Path(os.devnull) / "no-shared-data"


#: the default shared data folder, ``$TUNERLIB_SHARED_DIR`` when this module was imported (:func:`shared_root`)
SHARED = shared_root()
TSP_INSTANCES = ["att48", "berlin52", "eil51", "gr48", "dantzig42", "ftv44", "p43", "ry48p"]


@dataclass
class Problem:
    """A benchmark problem: space factory, evaluation, optimum and default budgets; ``unit`` names the
    unit of the values (``"s"`` for times: replays and measured examples; ``""`` for tour lengths and
    test-function values)."""

    name: str
    make_space: Callable[[], ConfigurationManipulator]
    evaluate: Callable[[Dict[str, Any]], Optional[float]]
    optimum: Optional[float] = None
    budgets: List[int] = field(default_factory=lambda: [300, 1000, 3000])
    data: Dict[str, Any] = field(default_factory=dict)
    unit: str = ""


def _load_example_module(rel: str, name: str, examples: Folder = None):
    """The example module ``rel`` (relative to the examples folder) under the module name ``name``."""
    return load_example(examples_dir(examples) / rel, name)


def _tour_problem(name: str, matrix: np.ndarray, optimum: Optional[float], **extra: Any) -> Problem:
    """A closed-tour problem over the cities of ``matrix`` (a permutation of ``0 .. n-1``)."""
    n = matrix.shape[0]

    def space() -> ConfigurationManipulator:
        return ConfigurationManipulator([PermutationParameter("tour", list(range(n)))])

    def evaluate(cfg: Dict[str, Any]) -> float:
        tour = np.asarray(cfg["tour"])
        return float(matrix[tour, np.roll(tour, -1)].sum())

    return Problem(name, space, evaluate, optimum, data={"matrix": matrix.tolist(), "n": n}, **extra)


def tsp_problem(instance_path: Path, examples: Folder = None) -> Problem:
    """A TSPLIB instance as a permutation problem (closed tour length)."""
    tsplib = _load_example_module("tsp/tsplib.py", "tunerlib_bench_tsplib", examples)
    inst = tsplib.read_instance(str(instance_path))
    return _tour_problem(inst.name, np.asarray(inst.matrix), tsplib.lookup_optimum(str(instance_path), inst.name))


def random_tsp_problem(n: int, seed: int = 0, examples: Folder = None) -> Problem:
    """``random{n}``: a random EUC_2D instance (``examples/tsp/tsplib.random_instance(n, seed)``).

    Its optimum is unknown; the reference is the best tour of an iterated local search (2-opt and or-opt
    on the true distances, :data:`REFERENCE_KICKS` double-bridge kicks), so ratios are to that."""
    return _random_problem("random", "random_instance", n, seed, examples)


def random_atsp_problem(n: int, seed: int = 0, examples: Folder = None) -> Problem:
    """``randomatsp{n}``: a random road-like asymmetric instance
    (``examples/tsp/tsplib.random_asymmetric_instance(n, seed)``); ratios are to the reference tour of
    :func:`reference_tour_length`, as for ``random{n}``."""
    return _random_problem("randomatsp", "random_asymmetric_instance", n, seed, examples)


def _random_problem(prefix: str, generator: str, n: int, seed: int, examples: Folder) -> Problem:
    """The tour problem ``{prefix}{n}`` on ``examples/tsp/tsplib.{generator}(n, seed)``'s matrix."""
    tsplib = _load_example_module("tsp/tsplib.py", "tunerlib_bench_tsplib", examples)
    matrix = np.asarray(getattr(tsplib, generator)(n, seed).matrix, dtype=float)
    problem = _tour_problem(f"{prefix}{n}", matrix, reference_tour_length(matrix, seed),
                            budgets=[1000, 3000, 10000])
    problem.data["seed"] = seed
    return problem


#: double-bridge kicks of the iterated local search that gives random instances their reference
REFERENCE_KICKS = 400


def reference_tour_length(matrix: np.ndarray, seed: int = 0) -> float:
    """Best tour length found by an iterated 2-opt + or-opt local search from 4 random starts."""
    from tunerlib.techniques.structural import iterated_search, tour_value
    rng = np.random.default_rng(seed)
    n = matrix.shape[0]
    best = np.inf
    for _ in range(4):
        tour, _, _ = iterated_search(rng.permutation(n), matrix, rng, REFERENCE_KICKS // 4, max_moves=50 * n)
        best = min(best, tour_value(tour, matrix))
    return float(best)


def function_problem(name: str, dims: int, domain: float, examples: Folder = None) -> Problem:
    """A continuous test function (rosenbrock, sphere, rastrigin, ackley) on [-domain, domain]^dims."""
    functions = _load_example_module("rosenbrock/functions.py", "tunerlib_bench_functions", examples)
    fn = functions.FUNCTIONS[name]
    names = [f"x{i}" for i in range(dims)]

    def space() -> ConfigurationManipulator:
        return ConfigurationManipulator([FloatParameter(v, -domain, domain) for v in names])

    def evaluate(cfg: Dict[str, Any]) -> float:
        return float(fn.function([cfg[v] for v in names]))

    return Problem(f"{name}{dims}d", space, evaluate, 0.0, budgets=[100, 300, 1000],
                   data={"function": name, "dims": dims, "domain": domain})


def default_problems(names: Optional[List[str]] = None, shared: Folder = None,
                     examples: Folder = None) -> Dict[str, Problem]:
    """The benchmark problems (TSPLIB instances present under the shared folder, Rosenbrock) and the
    recorded replays there, by name; any other TSPLIB instance there, ``random<n>``, the test
    functions in any dimension (``rastrigin40d``, ``ackley8d``, ``sphere4d``, ``rosenbrock40d``) and the example
    problems (:mod:`tools.example_problems`) when named.  ``shared``: the shared data folder
    (default ``$TUNERLIB_SHARED_DIR``); ``examples``: the examples folder (see the module docstring)."""
    root = shared_root(shared)
    problems: Dict[str, Problem] = {}
    tsp_dir = root / "data" / "tsplib"

    def wanted(name: str) -> bool:  # build only what is asked for
        return names is None or name in names
    for inst in filter(wanted, TSP_INSTANCES):
        for ext in (".tsp", ".atsp"):
            path = tsp_dir / f"{inst}{ext}"
            if path.exists():
                problems[inst] = tsp_problem(path, examples)
    for dims in (4, 8):
        if wanted(f"rosenbrock{dims}d"):
            problems[f"rosenbrock{dims}d"] = function_problem("rosenbrock", dims, 5.0, examples)
    problems.update(_replay(names, root))
    for name in names or ():
        if name not in problems and name.startswith("random") and name[6:].isdigit():
            problems[name] = random_tsp_problem(int(name[6:]), examples=examples)
        if name not in problems and name.startswith("randomatsp") and name[10:].isdigit():
            problems[name] = random_atsp_problem(int(name[10:]), examples=examples)
        function = re.fullmatch(r"(rosenbrock|sphere|rastrigin|ackley)([1-9][0-9]*)d", name)
        if name not in problems and function:
            problems[name] = function_problem(function[1], int(function[2]), 5.0, examples)
        if name not in problems:
            for ext in (".tsp", ".atsp"):
                if (tsp_dir / f"{name}{ext}").exists():
                    problems[name] = tsp_problem(tsp_dir / f"{name}{ext}", examples)
    if names:
        from tools.example_problems import example_problems
        problems.update(example_problems([n for n in names if n not in problems], Problem, examples))
        unknown = [n for n in names if n not in problems]
        if unknown:
            from tools.example_problems import example_problem_names
            hint = "" if root.exists() else ("; the TSPLIB and recorded problems need the shared data folder: "
                                             "pass --shared DIR or set $TUNERLIB_SHARED_DIR")
            raise SystemExit(f"compare: unknown problem(s) {unknown}; known: "
                             f"{sorted(problems) + example_problem_names()}{hint}")
        problems = {n: problems[n] for n in names}
    return problems


def _replay(names: Optional[List[str]], root: Path) -> Dict[str, Problem]:
    """Recorded-measurement replays (tools/replay_problems.py) present under the shared folder ``root``,
    and the named table files (``FILE``, ``BENCHMARK=FILE``, either with ``@table``), which need no
    shared folder."""
    from tunerlib.replay.recorded import available_benchmarks
    from tools.replay_problems import TABLE_SUFFIX, is_table_file_name, replay_problems
    files = [n for n in names or () if is_table_file_name(n)]
    available = available_benchmarks(root, True) if root.exists() else []
    wanted = [n for n in available if names is None or n in names]
    wanted += [n for n in names or () if n.endswith(TABLE_SUFFIX) and n[: -len(TABLE_SUFFIX)] in available]
    wanted += files
    if not wanted:
        return {}
    return {name: Problem(name, rp.manipulator, rp.evaluate, rp.optimum, list(rp.budgets),
                          data={"replay": True, "sparse": rp.sparse, "expert_value": rp.expert_value,
                                "family": getattr(rp.benchmark.spec, "family", ""), "benchmark": rp.benchmark,
                                "simulated_s": rp.simulated_s, "table_space": name.endswith(TABLE_SUFFIX),
                                "status": rp.status},
                          unit="s")
            for name, rp in replay_problems(root, wanted).items()}


def tsplib_names(shared: Folder = None) -> List[str]:
    """Every TSPLIB instance (TSP and ATSP) under the shared data folder (default
    ``$TUNERLIB_SHARED_DIR``), sorted."""
    tsp_dir = shared_root(shared) / "data" / "tsplib"
    return sorted({p.stem for ext in ("*.tsp", "*.atsp") for p in tsp_dir.glob(ext)})
