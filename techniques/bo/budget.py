"""The size of BayesianOptimization's initial design, from the run's test limit when it is known.

``d + 1`` random configurations in ``d`` dimensions are the fewest a first GP can be fitted on, and
with a short budget (K-means at 20 evaluations) every further design point is an evaluation the model
no longer steers.  With a longer budget the first GP's view decides which basin the run stays in: its
expected improvement is largest next to the best design point, and the proposals that follow refine
that one basin (rise_mm@table at 100 evaluations, docs/benchmarks/default-technique.md).  A design
that grows with the budget, as BaCO and HyperMapper size theirs, spends a fixed share of a known test
limit on random configurations, never fewer than ``d + 1`` and never more than ``cap`` designs' worth.
With no known count (a deadline alone, or the default cap) the design is ``d + 1``.  The share is the
option ``design_share``, 0 (``d + 1``) by default: 0.2 helps rise_mm@table at 100 evaluations and costs
on conv_a100, the TACO spaces and perturbed K-means copies at 60 (docs/benchmarks/default-technique.md).

Options that change the model once a run has results enough (``ridge_after``, ``hyper_after``) count
those results in initial designs with :func:`designs_reached`.
"""
from __future__ import annotations

from typing import Optional

from ..base import SearchContext


def known_test_limit(context: SearchContext) -> Optional[int]:
    """The run's test limit when the user gave one (``--test-limit``: ``budget_kind`` "tests"), else None."""
    if context.budget_kind != "tests" or not context.test_limit:
        return None
    return int(context.test_limit)


def design_size(dimensions: int, context: SearchContext, share: float, cap: float,
                fixed: Optional[int] = None) -> int:
    """The number of initial design points: ``fixed`` when given (the ``initial_samples`` option), else
    ``max(d + 1, min(cap x (d + 1), round(share x test limit)))`` with a known test limit and ``d + 1``
    without one (or with ``share`` 0).  Called by ``bind``."""
    if fixed is not None:
        return fixed
    base = dimensions + 1
    limit = known_test_limit(context)
    if limit is None or share <= 0:
        return base
    return max(base, min(int(cap * base), int(round(share * limit))))


def designs_reached(ok_results: int, designs: int, design: int) -> bool:
    """Whether ``ok_results`` OK results number at least ``designs`` initial designs of ``design`` points
    each (always with ``designs`` 0); called at each model fit for the options counted that way."""
    return ok_results >= designs * design
