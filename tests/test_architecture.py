"""The architecture rules (docs/contributing/index.md, "Four floors"), checked on the source (ast): imports point down the four
floors (parameters <- techniques <- core <- tools), there is no import cycle inside the installed
package, and modules stay under 500 lines and functions under 60.  The core (tunerlib/)
mentions no recorded benchmark collection, reader or data-folder layout, and tools/ and examples/
import from tunerlib's packages only the names those export.

Every import statement counts, also one inside a function (a lazy import is still a dependency);
only imports under ``if TYPE_CHECKING:`` do not, since they exist for annotations alone.
"""
import ast
import functools
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> installed package (setup.cfg package_dir)
PACKAGES = {"parameters": "tunerlib.parameters", "techniques": "tunerlib.techniques", "tools": "tunerlib.tools",
            "tunerlib": "tunerlib"}
FLOORS = (("tunerlib.parameters", 0), ("tunerlib.techniques", 1), ("tunerlib.tools", 3))
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 500, 60
#: modules known to be over the line limit (each a candidate for splitting; the list may only shrink)
OVER_LIMIT: set = set()


def _modules():
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            if folder == "tunerlib" and parts and parts[0] in ("parameters", "techniques", "tools"):
                continue
            if "tests" in parts:
                continue
            found[".".join([package] + parts)] = path
    return found


MODULES = _modules()


def _package_of(module):
    return module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]


def _known(name):
    while name and name not in MODULES:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name


def _targets(module, node):
    if isinstance(node, ast.Import):
        return {_known(alias.name) for alias in node.names}
    base = node.module or ""
    if node.level:
        parts = _package_of(module).split(".")
        base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
    found = set()
    for alias in node.names:  # `from pkg import submodule` depends on the submodule only
        sub = f"{base}.{alias.name}"
        found.add(sub if sub in MODULES else _known(base))
    return found


def _type_checking_nodes(tree):
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skip.update(id(n) for n in ast.walk(child))
    return skip


@functools.lru_cache(maxsize=None)   # three tests read the same graph: parse each module once
def _graph():
    graph = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_nodes(tree)
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
                deps |= _targets(module, node)
        graph[module] = {d for d in deps if d and d != module}
    return graph


def _floor(module):
    for package, floor in FLOORS:
        if module == package or module.startswith(package + "."):
            return floor
    return 2


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
    assert {"tunerlib.parameters", "tunerlib.techniques.bo.gp", "tunerlib.engine.run", "tunerlib.tools"} <= set(MODULES)
    assert "tunerlib.parameters.base" in _graph()["tunerlib.parameters"]


def test_imports_point_down_the_floors():
    graph = _graph()
    upward = [(m, t) for m in graph for t in graph[m] if _floor(t) > _floor(m)]
    assert upward == []


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_and_functions_stay_small(module):
    text = MODULES[module].read_text()
    if module not in OVER_LIMIT:
        assert text.count("\n") <= MAX_MODULE_LINES, f"{module} has {text.count(chr(10))} lines"
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


# --------------------------------------------------------------------------- the core knows no domain
#: words that name a recorded benchmark collection, its readers or the shared folder's layout (issue 15:
#: they live in tunerlib.tools.recorded and the examples, never in tunerlib/)
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
    assert _domain_mentions("import tunerlib.tools.kerneltuner")
    assert _domain_mentions("def load(taco):\n    return taco")
    assert _domain_mentions("PATH = 'data/gpu_cache/x.csv'")
    assert _domain_mentions("'''The RISE kernels.'''")
    assert _domain_mentions("NAME = 'rise_kmeans'") and _domain_mentions("ROOT = '../shared'")
    assert _domain_mentions("X = 1  # see conv_a100")
    assert not _domain_mentions("'''This gives rise to sunrise; the tacos are convex; a shared folder.'''\n"
                                "enterprise = arise = 1")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.split(".")[1:2] not in (["parameters"],
                                                                                           ["techniques"],
                                                                                           ["tools"])))
def test_the_core_mentions_no_domain(module):
    """tunerlib/ (the core) names no recorded benchmark collection, reader or data-folder layout."""
    assert _domain_mentions(MODULES[module].read_text()) == []


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
                    if mod.startswith("tunerlib.tools"):
                        continue                                  # the tools' own floor
                    exported = set(getattr(importlib.import_module(mod), "__all__", ())) if _is_package(mod) else set()
                    if not exported or any(a.name not in exported and not _is_package(f"{mod}.{a.name}")
                                           for a in node.names):
                        found.add((path.relative_to(ROOT).as_posix(), mod))
                elif isinstance(node, ast.Import):
                    found |= {(path.relative_to(ROOT).as_posix(), a.name) for a in node.names
                              if a.name.startswith("tunerlib.") and not a.name.startswith("tunerlib.tools")
                              and not _is_package(a.name)}
    return found


def _is_package(name):
    return name in MODULES and MODULES[name].name == "__init__.py"


def test_tools_and_examples_import_only_exported_names():
    """tools/ and examples/ import from tunerlib's packages only names those export (``__all__``)."""
    assert _private_imports() - KNOWN_PRIVATE_IMPORTS == set()
    assert KNOWN_PRIVATE_IMPORTS <= _private_imports()       # the list shrinks when one is fixed
