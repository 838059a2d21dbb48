"""The registry is the technique catalogue (:mod:`.catalogue`); this name is kept for callers."""
from __future__ import annotations

from .catalogue import Catalogue, Entry

TechniqueRegistry = Catalogue

__all__ = ["Entry", "TechniqueRegistry"]
