"""Bayesian optimisation: BaCO-style GP surrogate, feasibility model and chain of trees.

Modules: :mod:`.distances` (per-parameter distances), :mod:`.gp` (Matérn 5/2 GP),
:mod:`.feasibility` (random-forest P(feasible)), :mod:`.neighbours` and :mod:`.acquisition` (EI
and its local-search optimiser), :mod:`.technique` (the :class:`BayesianOptimization` technique).
The chain of trees for known constraints is :class:`tunerlib.parameters.FeasibleSpace`.

The names below are loaded on first use (PEP 562), so importing a light submodule (or the
technique catalogue) does not import scipy.
"""
from __future__ import annotations

from typing import Any

__all__ = ["BO_OPTIONS", "BayesianOptimization", "BOOptions", "register"]


def __getattr__(name: str) -> Any:
    if name in ("BO_OPTIONS", "BayesianOptimization", "BOOptions"):
        from . import technique
        return getattr(technique, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(registry: Any) -> None:
    """Register ``BayesianOptimization`` (default options; ``BayesianOptimization;option,value``
    names parse through its option schema) in ``registry``."""
    from ..builtin import add_module
    add_module(registry, "bo")
