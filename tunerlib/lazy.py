"""Lazy package attributes (PEP 562): a package names what it exports and where each name lives, and
the module holding a name is imported only when the name is first read.

Used by ``tunerlib``, ``tunerlib.replay`` and ``tunerlib.replay.recorded`` so that importing them stays
light (no SQLAlchemy, scikit-learn or tuning machinery until a name that needs it is used)::

    __getattr__, __dir__ = lazy_exports(__name__, {"TuningRun": "engine.run"}, __all__)
"""
from __future__ import annotations

import sys
from importlib import import_module
from typing import Any, Callable, List, Mapping, Sequence, Tuple

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str],
                 names: Sequence[str]) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    ``exports`` maps each lazily loaded name to the submodule (relative to ``package``) that defines
    it; ``names`` is what ``dir(package)`` lists.  ``__getattr__`` is called by Python for a name the
    package does not hold yet: it imports the submodule, caches the value in the package's globals
    (so the next read is a plain lookup) and returns it; any other name raises AttributeError, as for
    an ordinary module.
    """
    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> List[str]:
        return list(names)

    return __getattr__, __dir__
