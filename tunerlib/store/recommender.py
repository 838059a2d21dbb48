"""The store's side of the recommendation bandit (thesis §6.1): a :class:`StoreRecommender` answers
from an :class:`~.queries.AffinityTable` loaded once when the run starts.

* DBI initial set (Step 1-2): the representations nearest by parameter structure (all of those tied at
  the smallest distance, pooled by requests), their techniques ranked by affinity.
* Recommendation (Step 5-6): the representation whose affinities correlate best (Pearson, > 0) with
  the run's current ones; where none does (fewer than two shared techniques), the nearest by
  parameters. Its techniques ranked by search affinity (shrunk, see :func:`~.queries.ranked`; one
  representation's runs are too few to rank techniques by run-rank, while its thousands of
  requests rank them by affinity well), keeping only
  those that scored better there than every technique the bandit holds (a held technique unknown
  there counts as that representation's mean) and never one that never found a new best: a swap
  only ever brings in a technique that should be an upgrade. (Measured: swapping for anything better
  than the worst held technique churned the set every interval and lost 5-7 % on att48/berlin52.)
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional

from .queries import AffinityTable, correlated, nearest_by_parameters, ranked


class StoreRecommender:
    """Implements :class:`tunerlib.techniques.recommendation.Recommender` over an affinity table."""

    #: where the table came from, in words ("the store", "the starter history"); set by the run that
    #: builds it (a bandit names "the recommender" when it is unset)
    source: str

    def __init__(self, table: AffinityTable, counts: Mapping[str, int]) -> None:
        """``counts``: parameter type counts of the space being tuned (:func:`.representation.type_counts`)."""
        self.table = table
        self.counts = dict(counts)
        self.log: List[Dict[str, object]] = []   #: one entry per answer (tests, explanations)

    def _nearest(self) -> List[int]:
        near = nearest_by_parameters(self.table, self.counts)
        return [rep for dist, rep in near if dist == near[0][0]] if near else []

    def initial_techniques(self) -> List[str]:
        reps = self._nearest()
        names = [name for name, _, _, raw in ranked(self.table, reps) if raw > 0]
        self.log.append({"step": "initial", "representations": self._names(reps), "techniques": names[:10]})
        return names

    def recommend(self, affinities: Mapping[str, float]) -> List[str]:
        similar = [(rho, rep) for rho, rep in correlated(self.table, affinities) if rho > 0]
        reps = [similar[0][1]] if similar else self._nearest()
        if not reps:
            return []
        rows = ranked(self.table, reps, by_affinity=True)
        known = {name: score for name, score, _, _ in rows}
        mean = sum(known.values()) / len(known) if known else 0.0
        floor = max((known.get(name, mean) for name in affinities), default=0.0)
        names = [name for name, score, _, raw in rows if raw > 0 and score > floor and name not in affinities]
        self.log.append({"step": "recommend", "representations": self._names(reps),
                         "correlation": similar[0][0] if similar else None, "techniques": names[:10]})
        return names

    def _names(self, reps: Iterable[int]) -> List[str]:
        return [self.table.reps[r].name for r in reps]


def describe_table(table: AffinityTable) -> Optional[str]:
    """Why a table cannot help (None when it can)."""
    if not table.reps:
        return "it holds no runs"
    if table.empty and table.metric == "run-rank" and any(table.similarity.values()):
        return ("run-rank needs two or more runs of a representation to rank them; upload more runs "
                "or pass --affinity-metric new-bests")
    if table.empty:
        return "its runs have no technique performance"
    return None
