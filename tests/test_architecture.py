"""The architecture rules (docs/contributing/index.md, "Floors"), checked on the source (ast): imports point down the
floors (parameters <- techniques <- core <- tools, and inside the core db <- shared vocabulary <- executors <- engine
<- script <- the commands), there is no import cycle inside the installed package, and modules stay under their line
limits (350 for the run core, 500 elsewhere) and functions under 60.  The core (tunerlib/) outside
tunerlib.replay.recorded mentions no recorded benchmark collection, reader or data-folder layout, and tools/ and
examples/ import from tunerlib's packages only the names those export.

Every import statement counts: one inside a function (a lazy import is still a dependency) and one under
``if TYPE_CHECKING:`` (an annotation is still a dependency: the module cannot be read without the other).
"""
import ast
import functools
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> package (setup.cfg package_dir); tools/ is run from a checkout, never installed
PACKAGES = {"parameters": "tunerlib.parameters", "techniques": "tunerlib.techniques", "tools": "tools",
            "tunerlib": "tunerlib"}
#: the floors, lowest first: a module may import only modules on its own floor or below.  The core
#: (tunerlib/) has floors of its own: the results database; the vocabulary every floor shares (records,
#: objectives, options, errors, processes and signals, the measurement kit, the cross-session store); the
#: executors; the engine; the tuner script's floor; and on top the commands, reports, replay and the kits.
CORE_FLOORS = (("tunerlib.db", 0),
               ("tunerlib.errors", 1), ("tunerlib.lazy", 1), ("tunerlib.result", 1), ("tunerlib.objectives", 1),
               ("tunerlib.options", 1), ("tunerlib.interrupts", 1), ("tunerlib.process", 1),
               ("tunerlib.measure", 1), ("tunerlib.store", 1), ("tunerlib.logs", 1), ("tunerlib.front", 1),
               ("tunerlib.multiobjective", 1), ("tunerlib.priorfile", 1), ("tunerlib.resumes", 1),
               ("tunerlib.executors", 2), ("tunerlib.engine", 3), ("tunerlib.script", 4))
TOP_OF_CORE = 5
FLOORS = (("tunerlib.parameters", (0, 0)), ("tunerlib.techniques", (1, 0)), ("tools", (3, 0)),
          *((package, (2, floor)) for package, floor in CORE_FLOORS))
#: the readers and catalogue of recorded benchmark tables (installed, since examples replay them): the one
#: part of tunerlib/ that names recorded collections; nothing else of the core imports it
RECORDED = "tunerlib.replay.recorded"
MAX_MODULE_LINES, MAX_CORE_MODULE_LINES, MAX_FUNCTION_LINES = 500, 350, 60
#: modules known to be over their line limit (each a candidate for splitting; the list may only shrink)
OVER_LIMIT: set = set()


def _modules(root=ROOT, packages=PACKAGES):
    """module name -> source file of every module under ``root`` (``packages``: source folder -> package)."""
    found = {}
    for folder, package in packages.items():
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            if folder == "tunerlib" and parts and parts[0] in ("parameters", "techniques"):
                continue
            if "tests" in parts:
                continue
            found[".".join([package] + parts)] = path
    return found


MODULES = _modules()


def _package_of(modules, module):
    return module if modules[module].name == "__init__.py" else module.rsplit(".", 1)[0]


def _known(modules, name):
    while name and name not in modules:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name


def _targets(modules, module, node):
    if isinstance(node, ast.Import):
        return {_known(modules, alias.name) for alias in node.names}
    base = node.module or ""
    if node.level:
        parts = _package_of(modules, module).split(".")
        base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
    found = set()
    for alias in node.names:  # `from pkg import submodule` depends on the submodule only
        sub = f"{base}.{alias.name}"
        found.add(sub if sub in modules else _known(modules, base))
    return found


def _graph_of(modules):
    """module -> the modules it imports: every import statement, at module level, inside a function or
    under ``if TYPE_CHECKING:``."""
    graph = {}
    for module, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps |= _targets(modules, module, node)
        graph[module] = {d for d in deps if d and d != module}
    return graph


@functools.lru_cache(maxsize=None)   # several tests read the same graph: parse each module once
def _graph():
    return _graph_of(MODULES)


def _floor(module):
    found = [(len(package), floor) for package, floor in FLOORS
             if module == package or module.startswith(package + ".")]
    if found:
        return max(found)[1]                  # the most specific package names the floor
    return (2, TOP_OF_CORE) if module.startswith("tunerlib") else (4, 0)

def _cycles(graph):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_scan_sees_the_packages():
    assert {"tunerlib.parameters", "tunerlib.techniques.bo.gp", "tunerlib.engine.run", "tools", RECORDED,
            "tunerlib.script.interface", "tunerlib.executors.base"} <= set(MODULES)
    assert "tunerlib.parameters.base" in _graph()["tunerlib.parameters"]


def test_the_floors_of_the_core():
    assert _floor("tunerlib.db.storage") < _floor("tunerlib.result") < _floor("tunerlib.executors.pool")
    assert _floor("tunerlib.executors.pool") < _floor("tunerlib.engine.run") < _floor("tunerlib.script.interface")
    assert _floor("tunerlib.script.interface") < _floor("tunerlib.cli")
    assert _floor("tunerlib.techniques.base") < _floor("tunerlib.db") and _floor("tunerlib.cli") < _floor("tools")


def test_imports_point_down_the_floors():
    graph = _graph()
    upward = [(m, t) for m in graph for t in graph[m] if _floor(t) > _floor(m)]
    assert upward == []


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _plant(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return _graph_of(_modules(tmp_path, {"pkg": "pkg"}))


def test_a_cycle_through_a_type_checking_import_is_caught(tmp_path):
    graph = _plant(tmp_path, {
        "__init__.py": "",
        "run.py": "from .sub.executor import Executor\n",
        "sub/__init__.py": "",
        "sub/executor.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..run import Run\n",
        "leaf.py": "def f():\n    from . import run\n"})
    assert graph["pkg.sub.executor"] == {"pkg.run"} and graph["pkg.leaf"] == {"pkg.run"}
    assert _cycles(graph) == [["pkg.run", "pkg.sub.executor"]]


def test_an_acyclic_planted_package_has_no_cycle(tmp_path):
    graph = _plant(tmp_path, {"__init__.py": "", "a.py": "from . import b\n", "b.py": "import os\n"})
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": set()} and _cycles(graph) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_and_functions_stay_small(module):
    text = MODULES[module].read_text()
    limit = MAX_MODULE_LINES if _floor(module)[0] != 2 else MAX_CORE_MODULE_LINES
    if module not in OVER_LIMIT:
        assert text.count("\n") <= limit, f"{module} has {text.count(chr(10))} lines (limit {limit})"
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


# --------------------------------------------------------------------------- the core knows no domain
#: words that name a recorded benchmark collection, its readers or the shared folder's layout
#: (they live in tunerlib.replay.recorded and the examples, never in tunerlib/)
_DOMAIN_CS = re.compile(r"\b(RISE|TACO|CATBench|BaCO)\b")
_DOMAIN_CI = re.compile(r"\b(kerneltuner\w*|kernel_tuner\w*|catbench\w*|baco\w*|gpu_cache|taco_cache|t1_specs|"
                        r"(?:rise|taco|gemm|conv|dedisp|pnpoly)_[a-z0-9_]+|read_(?:rise|taco)\w*)\b|\.\./shared\b",
                        re.IGNORECASE)


def _domain_mentions(text):
    found = [m.group(0) for m in _DOMAIN_CS.finditer(text)] + [m.group(0) for m in _DOMAIN_CI.finditer(text)]
    for node in ast.walk(ast.parse(text)):   # identifiers and modules spelt with a domain word
        names = ([node.id] if isinstance(node, ast.Name) else [node.attr] if isinstance(node, ast.Attribute)
                 else [node.module or ""] + [a.name for a in node.names] if isinstance(node, ast.ImportFrom)
                 else [a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [])
        found += [n for n in names if {"rise", "taco", "kerneltuner"} & set(re.split(r"[_.]", n.lower()))]
    return found


def test_the_domain_scan_finds_domain_words_and_only_those():
    assert _domain_mentions("from .rise import read_rise_csv")
    assert _domain_mentions("import tunerlib.replay.recorded.kerneltuner")
    assert _domain_mentions("def load(taco):\n    return taco")
    assert _domain_mentions("PATH = 'data/gpu_cache/x.csv'")
    assert _domain_mentions("'''The RISE kernels.'''")
    assert _domain_mentions("NAME = 'rise_kmeans'") and _domain_mentions("ROOT = '../shared'")
    assert _domain_mentions("X = 1  # see conv_a100")
    assert not _domain_mentions("'''This gives rise to sunrise; the tacos are convex; a shared folder.'''\n"
                                "enterprise = arise = 1")


def _core(module):
    return (module.split(".")[0] == "tunerlib" and module.split(".")[1:2] not in (["parameters"], ["techniques"])
            and not (module == RECORDED or module.startswith(RECORDED + ".")))


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _core(m)))
def test_the_core_mentions_no_domain(module):
    """tunerlib/ (the core) names no recorded benchmark collection, reader or data-folder layout."""
    assert _domain_mentions(MODULES[module].read_text()) == []


def test_the_core_does_not_import_the_recorded_benchmarks():
    graph = _graph()
    assert sorted(m for m in graph if _core(m) and any(t.startswith(RECORDED) for t in graph[m])) == []


# --------------------------------------------------------------------------- tools and examples use the public API
#: imports by tools and examples of names a package does not export (each a candidate for the public API;
#: this list may only shrink)
KNOWN_PRIVATE_IMPORTS: set = set()


def _private_imports():
    found = set()
    for folder in ("tools", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("tunerlib"):
                    mod = node.module
                    exported = set(getattr(importlib.import_module(mod), "__all__", ())) if _is_package(mod) else set()
                    if not exported or any(a.name not in exported and not _is_package(f"{mod}.{a.name}")
                                           for a in node.names):
                        found.add((path.relative_to(ROOT).as_posix(), mod))
                elif isinstance(node, ast.Import):
                    found |= {(path.relative_to(ROOT).as_posix(), a.name) for a in node.names
                              if a.name.startswith("tunerlib.") and not _is_package(a.name)}
    return found


def _is_package(name):
    return name in MODULES and MODULES[name].name == "__init__.py"


def test_tools_and_examples_import_only_exported_names():
    """tools/ and examples/ import from tunerlib's packages only names those export (``__all__``)."""
    assert _private_imports() - KNOWN_PRIVATE_IMPORTS == set()
    assert KNOWN_PRIVATE_IMPORTS <= _private_imports()       # the list shrinks when one is fixed


# --------------------------------------------------------------------------- the run and the search driver
def _search_attributes_read_by_the_engine():
    """Every attribute read as ``<x>.search.<name>`` in the engine outside the search driver's module."""
    found = set()
    for module, path in MODULES.items():
        if not module.startswith("tunerlib.engine.") or module == "tunerlib.engine.search":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "search":
                found.add(node.attr)
    return found


def test_the_run_reads_at_most_five_names_of_the_search_driver():
    assert _search_attributes_read_by_the_engine() <= {"progress", "fill", "submit", "poll", "restore"}


def test_the_search_driver_never_sees_the_run():
    """The search driver imports nothing of the engine, the executors or the script floor: the run's
    limit policy and event sink reach it as plain callables."""
    below = {t for t in _graph()["tunerlib.engine.search"] if t.startswith("tunerlib.")}
    assert not any(t.startswith(("tunerlib.engine", "tunerlib.executors", "tunerlib.script")) for t in below)


def test_one_place_claims_a_request():
    """``claim_next`` is called from one place in the library (``executors.measurement.claim``); the serial
    loop, the ask/tell API, the local pool, remote workers and the Dask hand-over all claim through it.  The
    storage backends and their contract kit (``tunerlib.testing.storage``) define and check it."""
    calls = [module for module, path in MODULES.items()
             if not module.startswith("tunerlib.db") and module != "tunerlib.testing.storage"
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "claim_next"]
    assert calls == ["tunerlib.executors.measurement"]
