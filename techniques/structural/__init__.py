"""Model-based search over structural features (tour edges, orders, one-hot choices, unit values)."""
from .lowrank import LowRankStructuralSurrogate
from .metric import MetricStructuralSurrogate
from .technique import StructuralSurrogate, register
from .tours import iterated_search, tour_value

__all__ = ["LowRankStructuralSurrogate", "MetricStructuralSurrogate", "StructuralSurrogate", "iterated_search", "register", "tour_value"]
