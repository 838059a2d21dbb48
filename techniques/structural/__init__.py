"""Model-based search over structural features (tour edges, orders, one-hot choices, unit values)."""
from .lowrank import LowRankStructuralSurrogate
from .technique import StructuralSurrogate, register
from .tours import iterated_search, tour_value

__all__ = ["LowRankStructuralSurrogate", "StructuralSurrogate", "iterated_search", "register", "tour_value"]
