"""Bayesian optimisation (issue 6): BaCO-style GP surrogate, feasibility model and chain of trees.

Modules: :mod:`.distances` (per-parameter distances), :mod:`.gp` (Matérn 5/2 GP),
:mod:`.feasibility` (random-forest P(feasible)), :mod:`.neighbours` and :mod:`.acquisition` (EI
and its local-search optimiser), :mod:`.technique` (the :class:`BayesianOptimization` technique).
The chain of trees for known constraints is :class:`tunerlib.parameters.FeasibleSpace`.
"""
from __future__ import annotations

from ..naming import register_option_technique
from ..registry import TechniqueRegistry
from .technique import BayesianOptimization, BOOptions

__all__ = ["BayesianOptimization", "BOOptions", "register"]


def register(registry: TechniqueRegistry) -> None:
    """Register ``BayesianOptimization`` (default options) in ``registry``."""
    registry.register("BayesianOptimization", BayesianOptimization, BayesianOptimization.description)
    register_option_technique("BayesianOptimization", BayesianOptimization)
