"""Text views of a search space: the one-line summary and the ``--print-params`` table.

:func:`describe_space` and :func:`print_params` read a space only through its public methods (the
:class:`SpaceView` protocol, which :class:`~.manipulator.ConfigurationManipulator` satisfies); the
manipulator's methods of the same names call them.
"""
from __future__ import annotations

import math
import sys
from typing import Any, Dict, List, Mapping, Optional, Protocol, Set, TextIO

from .base import Parameter
from .constraints import Constraint


class SpaceView(Protocol):
    """What the views read of a search space."""

    @property
    def parameters(self) -> List[Parameter]: ...

    @property
    def constraints(self) -> List[Constraint]: ...

    def groups(self) -> List[Set[str]]: ...

    def log10_search_space_size(self) -> float: ...

    def violated_constraints(self, config: Mapping[str, Any]) -> List[str]: ...


def describe_space(space: SpaceView) -> str:
    """One summary line: parameter counts by kind, constraints, groups and size."""
    params = space.parameters
    kinds: Dict[str, int] = {}
    for p in params:
        kinds[p.kind or type(p).__name__] = kinds.get(p.kind or type(p).__name__, 0) + 1
    by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    log10 = space.log10_search_space_size()
    if log10 == math.inf:
        size = "infinite (continuous parameters)"
    elif log10 < 15:
        size = f"{round(10 ** log10):,} configurations"
    else:
        size = f"about 10^{log10:.1f} configurations"
    return (f"{len(params)} parameters ({by_kind or 'none'}), {len(space.constraints)} constraints, "
            f"{len(space.groups())} independent groups; search space {size} before constraints")


def print_params(space: SpaceView, file: Optional[TextIO] = None, default: Optional[Mapping[str, Any]] = None,
                 default_header: str = "default") -> None:
    """Print a table of parameters (name, kind, legal values and, when ``default`` is given, its
    value of each parameter under ``default_header``) and the constraints, then the summary line;
    writes to ``file`` or stdout."""
    out = file if file is not None else sys.stdout
    shown = default is not None
    rows = [("name", "kind", "legal values", default_header if shown else "")]
    for p in space.parameters:
        value = _clip(repr(default[p.name]), 40) if default is not None and p.name in default else ""
        rows.append((p.name, p.kind or type(p).__name__, _clip(p.describe(), 60), value))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for i, r in enumerate(rows):
        print(("  ".join(r[k].ljust(widths[k]) for k in range(3)) + "  " + r[3]).rstrip(), file=out)
        if i == 0:
            print("-" * (sum(widths) + 4 + (2 + max(len(r[3]) for r in rows) if shown else 0)), file=out)
    constraints = space.constraints
    print(f"constraints ({len(constraints)}):", file=out)
    for c in constraints:
        print(f"  {c.describe()}", file=out)
    if default is not None:
        broken = space.violated_constraints(default)
        if broken:
            print(f"the {default_header} configuration violates: {', '.join(broken)}", file=out)
    print(describe_space(space), file=out)


def _clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters (ending in ``...`` when cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
