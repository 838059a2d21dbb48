"""Model-based search over structural features (tour edges, orders, one-hot choices, unit values)."""
from .technique import StructuralSurrogate, register

__all__ = ["StructuralSurrogate", "register"]
