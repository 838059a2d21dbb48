"""Whether a tour's value depends on its direction, judged from one measured reversal.

Every permutation has direction features, so the model cannot tell from its layout whether the steps'
costs are symmetric.  After the embedding is accepted, :class:`~.metric.MetricStructuralSurrogate`
measures the incumbent reversed once: on a symmetric cost it is worth the incumbent exactly, on a
directed one it differs.  The measured local search then leaves out, on a directed cost, the moves that
reverse a section (2-opt, reversed or-opt): each changes every step inside the section, so the ranking
weights' errors on all of them add up, and on asymmetric instances few of those moves shorten the tour
(randomatsp150, seed 0, continued from the acceptance: 5 new bests in 295 measured moves that change
more than 5 steps, against 95 in 661 that change 3).

Called by :class:`~.metric.MetricStructuralSurrogate` when it proposes and observes the reversal.
"""
from __future__ import annotations

import math

#: the relative difference of the incumbent's value and its reversal's above which a cost is directed
#: (a symmetric cost's values differ by rounding only)
DIRECTED_GAP = 1e-6


def directed(value: float, reversed_value: float) -> bool:
    """Whether the tours' values ``value`` (the incumbent's) and ``reversed_value`` (the same tour
    reversed) differ by more than :data:`DIRECTED_GAP` of their size; False when either is not finite."""
    if not (math.isfinite(value) and math.isfinite(reversed_value)):
        return False
    return abs(reversed_value - value) > DIRECTED_GAP * max(abs(value), abs(reversed_value), 1e-300)
