"""The architecture rules of design.md §9, checked on the source (ast): imports point down the four
floors (parameters <- techniques <- core <- tools), there is no import cycle inside the installed
package, and modules stay under 500 lines and functions under 60.

Every import statement counts, also one inside a function (a lazy import is still a dependency);
only imports under ``if TYPE_CHECKING:`` do not, since they exist for annotations alone.
"""
import ast
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
    assert {"tunerlib.parameters", "tunerlib.techniques.bo.gp", "tunerlib.tuningrun", "tunerlib.tools"} <= set(MODULES)
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
