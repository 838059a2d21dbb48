"""tunerlib.techniques: the technique API, the catalogue, techniques and meta-techniques.

Imports only :mod:`tunerlib.parameters`; techniques never see the database.  Technique modules are
loaded when a technique of theirs is first created (:mod:`.catalogue`), so importing this package
imports neither scipy nor scikit-learn.
"""
from __future__ import annotations

from typing import Sequence

from .bandit import AUCBandit, AUCBanditMetaTechnique
from .base import Feedback, Proposal, SearchContext, SequentialTechnique, Technique, TechniqueError
from .builtin import DEFAULT_TECHNIQUE, register_builtin
from .bundles import generate_bandit
from .catalogue import Catalogue
from .recommendation import AFFINITY_METRICS
from .pareto import (crowding_distance, dominates, hypervolume, hypervolume_improvement, non_dominated,
                     non_dominated_sort)
from .naming import is_generated_name, resolve, technique_from_name, technique_name
from .registry import TechniqueRegistry
from .simple import GreedyMutation, PureRandom

_CATALOGUE = Catalogue()
register_builtin(_CATALOGUE)


def registry() -> Catalogue:
    """The process-wide technique catalogue (add your own with ``register``)."""
    return _CATALOGUE


catalogue = registry


def register(name: str, factory, description: str = "") -> None:
    """Register a technique factory (or ``"module:attr"``) under ``name`` (duplicates are rejected)."""
    _CATALOGUE.register(name, factory, description)


def _create_one(name: str) -> Technique:
    """A catalogue name, a catalogue name with options (``Name;option,value``), or a generated
    composable-technique name (see :mod:`.naming`)."""
    if name in _CATALOGUE:
        return _CATALOGUE.create(name)
    if name.split(";", 1)[0] in _CATALOGUE:
        return _CATALOGUE.create_named(name)
    if not is_generated_name(name):
        return _CATALOGUE.create(name)  # the unknown-name error, with suggestions
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


__all__ = ["AFFINITY_METRICS", "AUCBandit", "AUCBanditMetaTechnique", "Catalogue", "DEFAULT_TECHNIQUE", "Feedback", "GreedyMutation",
           "crowding_distance", "dominates", "hypervolume", "hypervolume_improvement", "non_dominated",
           "non_dominated_sort",
           "Proposal", "PureRandom", "SearchContext", "SequentialTechnique", "Technique", "TechniqueError",
           "TechniqueRegistry", "catalogue", "create_technique", "generate_bandit", "register", "registry",
           "resolve", "technique_from_name", "technique_name"]
