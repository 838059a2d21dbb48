"""tunerlib.techniques: the technique API, the registry, techniques and meta-techniques.

Imports only :mod:`tunerlib.parameters`; techniques never see the database.
"""
from __future__ import annotations

from typing import Sequence

from .bandit import AUCBandit, AUCBanditMetaTechnique
from .base import Feedback, Proposal, SequentialTechnique, Technique, TechniqueError
from .builtin import DEFAULT_TECHNIQUE, register_builtin
from .bundles import generate_bandit
from .naming import is_generated_name, resolve, technique_from_name, technique_name
from .registry import TechniqueRegistry
from .simple import GreedyMutation, PureRandom

_REGISTRY = TechniqueRegistry()
register_builtin(_REGISTRY)


def registry() -> TechniqueRegistry:
    """The process-wide registry of technique factories (add your own with ``register``)."""
    return _REGISTRY


def register(name: str, factory, description: str = "") -> None:
    """Register a technique factory under ``name`` (duplicates are rejected)."""
    _REGISTRY.register(name, factory, description)


def _create_one(name: str) -> Technique:
    """A registered name, or a generated composable-technique name (see :mod:`.naming`)."""
    if name in _REGISTRY or not is_generated_name(name):
        return _REGISTRY.create(name)
    return resolve(name)


def create_technique(names: Sequence[str], C: float = 0.05, window: int = 500) -> Technique:
    """A fresh root technique: the named one, or an AUC bandit (exploration ``C``, sliding ``window``)
    over several names."""
    names = list(names) or [DEFAULT_TECHNIQUE]
    if len(set(names)) != len(names):
        raise TechniqueError(f"--technique lists a name twice: {names}")
    techs = [_create_one(n) for n in names]
    if len(techs) == 1:
        return techs[0]
    return AUCBanditMetaTechnique(techs, name="AUCBandit", C=C, window=window)


__all__ = ["AUCBandit", "AUCBanditMetaTechnique", "DEFAULT_TECHNIQUE", "Feedback", "GreedyMutation",
           "Proposal", "PureRandom", "SequentialTechnique", "Technique", "TechniqueError",
           "TechniqueRegistry", "create_technique", "generate_bandit", "register", "registry",
           "resolve", "technique_from_name", "technique_name"]
