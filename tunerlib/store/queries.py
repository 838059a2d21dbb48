"""Reading the store: search affinity per representation and technique, similar representations.

:func:`load_affinities` reads (:func:`read_rows`), in one query, the last snapshot of every technique in every run and
pools it per (representation, technique): affinity = total gained / total requests over the runs
(``new-bests``: new bests; ``improvement``: summed relative improvement; see
:mod:`.performance`). Everything else works on that in-memory :class:`AffinityTable`, so a
recommendation during a run costs no database access.

Similarity (thesis §6.1): by parameters, the asymmetric log-count :func:`~.representation.distance`;
by technique performance, the Pearson correlation of affinities over mutually known techniques.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from sqlalchemy import and_, func, select

from . import schema as S
from ..techniques.recommendation import AFFINITY_METRICS
from .performance import MEASURED_AFFINITIES
from .representation import decode, distance, type_counts
from .crosssession import CrossSessionStore

#: fewest mutually known techniques for a Pearson correlation to count (with two it is always +-1)
MIN_SHARED = 3
#: requests' worth of prior belief (the mean affinity) added to every technique's pooled record when
#: techniques are ranked: a technique seen for 10 requests moves a tenth of the way from the mean
PRIOR_REQUESTS = 100
#: the same for run-rank scores, in runs (a technique's share of a run's requests is its weight)
RUN_RANK_PRIOR = 1.0


@dataclass
class RepInfo:
    """A stored representation: its names, program and type counts."""

    id: int
    name: str
    project: str
    program: str
    parameter_info: str
    counts: Dict[str, int]
    runs: int = 0


@dataclass
class AffinityTable:
    """{representation id: {technique name: (score, weight)}} for ranking techniques (``affinity``) and
    for the similarity of representations (``similarity``: affinities, weight = requests), plus what
    each technique is. With an affinity metric both are the same table."""

    metric: str
    reps: Dict[int, RepInfo] = field(default_factory=dict)
    affinity: Dict[int, Dict[str, Tuple[float, float]]] = field(default_factory=dict)
    similarity: Dict[int, Dict[str, Tuple[float, float]]] = field(default_factory=dict)
    prior: float = PRIOR_REQUESTS
    roots: Dict[str, str] = field(default_factory=dict)
    full_names: Dict[str, Optional[str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not any(self.affinity.values())


def _final_snapshots():
    tp = S.TechniquePerformance
    last = (select(tp.tuning_run_id, tp.technique_id, func.max(tp.tests).label("tests"))
            .group_by(tp.tuning_run_id, tp.technique_id).subquery())
    return (select(S.TuningRun.representation_id, tp.tuning_run_id, S.TuningRun.best_value, tp.technique_id,
                   tp.requests, tp.new_bests, tp.improvement)
            .join(last, and_(tp.tuning_run_id == last.c.tuning_run_id, tp.technique_id == last.c.technique_id,
                             tp.tests == last.c.tests))
            .join(S.TuningRun, S.TuningRun.id == tp.tuning_run_id))


@dataclass
class StoreRows:
    """What the affinity table is built from, as read from a store (or from the starter history,
    :mod:`.starter`): no configuration, only structure, technique names and performance snapshots.

    ``representations``: (id, name, project, program, parameter_info, runs); ``snapshots``: the last
    snapshot of each technique in each run, (representation id, run id, the run's best value, technique
    name, requests, new bests, improvement); ``techniques``: (name, root, full name)."""

    representations: List[tuple] = field(default_factory=list)
    snapshots: List[tuple] = field(default_factory=list)
    techniques: List[tuple] = field(default_factory=list)


def read_rows(store: CrossSessionStore) -> StoreRows:
    """Every representation, final snapshot and technique name of ``store``, in one read each."""
    out = StoreRows()
    with store.engine.connect() as conn:
        runs: Dict[int, int] = {r[0]: r[1] for r in conn.execute(select(S.TuningRun.representation_id, func.count())
                                                                    .group_by(S.TuningRun.representation_id))}
        out.representations = [(*tuple(r), runs.get(r[0], 0)) for r in conn.execute(
            select(S.Representation.id, S.Representation.name, S.Program.project, S.Program.name,
                   S.Representation.parameter_info).join(S.Program, S.Program.id == S.Representation.program_id))]
        # snapshots before technique names: a run uploaded between the two statements (each its own
        # read where others upload, e.g. history generation) then adds no snapshot of an unknown name
        snapshots = [tuple(r) for r in conn.execute(_final_snapshots())]
        names = {r.id: (r.name, r.root, r.full_name) for r in conn.execute(
            select(S.Technique.id, S.Technique.name, S.Technique.root, S.Technique.full_name))}
    out.snapshots = [(rep, run, best, names[tech][0], requests, new_bests, gained)
                     for rep, run, best, tech, requests, new_bests, gained in snapshots]
    out.techniques = list(names.values())
    return out


def load_affinities(store: CrossSessionStore, metric: str = "new-bests",
                    exclude_programs: Iterable[str] = ()) -> AffinityTable:
    """The pooled table of the whole store (:func:`table_from_rows` of :func:`read_rows`)."""
    return table_from_rows(read_rows(store), metric, exclude_programs)


def table_from_rows(rows: StoreRows, metric: str = "new-bests",
                    exclude_programs: Iterable[str] = ()) -> AffinityTable:
    """The pooled table of ``rows``, leaving out representations of the programs named in
    ``exclude_programs`` (``project/program`` or ``program``: leave-one-out benchmarks).

    ``metric`` is an affinity (``new-bests``, ``improvement``) or ``run-rank``: techniques ranked by
    how well the runs they took part in did among the runs of their representation (1 for the best
    run, 0 for the worst; runs with the same best share the mean of their ranks), weighted by their
    share of each run's requests; the similarity between representations then uses ``new-bests``
    affinities."""
    if metric not in AFFINITY_METRICS:
        raise ValueError(f"metric {metric!r} is not one of {', '.join(AFFINITY_METRICS)}")
    table = AffinityTable(metric)
    excluded = set(exclude_programs)
    for rep, name, project, program, info, runs in rows.representations:
        if program not in excluded and f"{project}/{program}" not in excluded:
            table.reps[rep] = RepInfo(rep, name, project, program, info, type_counts(decode(info)), runs)
    kept = [tuple(r) for r in rows.snapshots if r[0] in table.reps]
    similarity = metric if metric in MEASURED_AFFINITIES else "new-bests"
    table.similarity = _pooled(kept, lambda r: r[5] if similarity == "new-bests" else r[6], lambda r: r[4])
    if metric == "run-rank":
        table.affinity, table.prior = _run_rank(kept), RUN_RANK_PRIOR
    else:
        table.affinity = table.similarity
    for name, root, full in rows.techniques:
        table.roots[name], table.full_names[name] = root, full
    return table


def _pooled(rows: Sequence[tuple], gained: Any, weight: Any) -> Dict[int, Dict[str, Tuple[float, float]]]:
    """{rep: {technique: (sum gained / sum weight, sum weight)}} over ``rows``."""
    sums: Dict[Tuple[int, str], List[float]] = {}
    for row in rows:
        acc = sums.setdefault((row[0], row[3]), [0.0, 0.0])
        acc[0] += gained(row)
        acc[1] += weight(row)
    out: Dict[int, Dict[str, Tuple[float, float]]] = {}
    for (rep, name), (g, w) in sums.items():
        if w > 0:
            out.setdefault(rep, {})[name] = (g / w, w)
    return out


def _run_rank(rows: Sequence[tuple]) -> Dict[int, Dict[str, Tuple[float, float]]]:
    """Run-rank scores (see :func:`load_affinities`); representations with one ranked run give none."""
    best: Dict[int, Dict[int, float]] = {}
    total: Dict[int, float] = {}
    for rep, run, value, _, requests, _, _ in rows:
        if value is not None:
            best.setdefault(rep, {})[run] = value
            total[run] = total.get(run, 0) + requests
    score: Dict[int, float] = {}
    for runs in best.values():
        if len(runs) < 2:
            continue
        ranks: Dict[float, List[int]] = {}
        for i, run in enumerate(sorted(runs, key=lambda r: (runs[r], r))):
            ranks.setdefault(runs[run], []).append(i)
        for run, value in runs.items():  # runs with the same best share the mean of their ranks
            score[run] = 1.0 - (sum(ranks[value]) / len(ranks[value])) / (len(runs) - 1)
    kept = [r for r in rows if r[1] in score and total[r[1]] > 0]
    return _pooled(kept, lambda r: score[r[1]] * r[4] / total[r[1]], lambda r: r[4] / total[r[1]])


def pearson(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    """Pearson's correlation coefficient; None when either side is constant or too short."""
    n = len(xs)
    if n < MIN_SHARED or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def nearest_by_parameters(table: AffinityTable, counts: Mapping[str, int]) -> List[Tuple[float, int]]:
    """(distance, representation id) of every representation that has affinities, nearest first
    (ties: more runs first, then id)."""
    found = [(distance(counts, table.reps[rep].counts), rep) for rep in table.affinity if table.affinity[rep]]
    return sorted(found, key=lambda dr: (dr[0], -table.reps[dr[1]].runs, dr[1]))


def correlated(table: AffinityTable, current: Mapping[str, float],
               skip: Iterable[int] = ()) -> List[Tuple[float, int]]:
    """(Pearson correlation, representation id) over the techniques each representation shares with
    ``current``, most correlated first; representations sharing fewer than MIN_SHARED techniques (or
    with constant affinities on them) are left out."""
    skipped = set(skip)
    out = []
    for rep, known in table.similarity.items():
        if rep in skipped:
            continue
        shared = sorted(n for n in current if n in known)
        rho = pearson([current[n] for n in shared], [known[n][0] for n in shared])
        if rho is not None:
            out.append((rho, rep))
    return sorted(out, key=lambda cr: (-cr[0], -table.reps[cr[1]].runs, cr[1]))


def ranked(table: AffinityTable, reps: Iterable[int], by_affinity: bool = False
           ) -> List[Tuple[str, float, float, float]]:
    """(technique, shrunk score, weight, pooled score) over the representations ``reps``, best first by
    shrunk score (ties: more weight first, then name); scores from ``table.affinity`` (the table's
    metric), or with ``by_affinity`` from ``table.similarity`` (search affinities).

    The pooled score gained / weight of a technique seen little is mostly luck, so it is shrunk toward
    the mean of all techniques there, as if more weight (:data:`PRIOR_REQUESTS` requests, or for
    run-rank :data:`RUN_RANK_PRIOR` runs) had earned that mean."""
    source = table.similarity if by_affinity else table.affinity
    pooled: Dict[str, List[float]] = {}
    for rep in reps:
        for name, (aff, requests) in source.get(rep, {}).items():
            acc = pooled.setdefault(name, [0.0, 0.0])
            acc[0] += aff * requests
            acc[1] += requests
    total = sum(r for _, r in pooled.values())
    mean = sum(g for g, _ in pooled.values()) / total if total else 0.0
    k = PRIOR_REQUESTS if by_affinity else table.prior
    rows = [(name, (gained + k * mean) / (requests + k), requests, gained / requests)
            for name, (gained, requests) in pooled.items() if requests]
    return sorted(rows, key=lambda r: (-r[1], -r[2], r[0]))
