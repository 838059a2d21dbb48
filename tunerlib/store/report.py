"""Answers of ``tunerlib store ...`` as rows (lists of dicts): techniques ranked by affinity for a
representation, a program or a domain (aggregated by technique, technique base or operator), and the
representations most similar to one (by parameters or by technique performance)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..techniques import TechniqueError
from ..techniques.naming import is_generated_name, parse_name
from .queries import (MIN_SHARED, PRIOR_REQUESTS, RUN_RANK_PRIOR, AffinityTable, correlated,
                      nearest_by_parameters, ranked)

GROUPINGS = ("technique", "base", "operator")


def select_reps(table: AffinityTable, representation: Optional[int] = None, program: Optional[str] = None,
                project: Optional[str] = None) -> List[int]:
    """Representation ids matching the filters (all when none is given); ValueError when nothing does."""
    reps = [r for r in table.reps.values()
            if (representation is None or r.id == representation)
            and (program is None or program in (r.program, f"{r.project}/{r.program}"))
            and (project is None or r.project == project)]
    if not reps:
        wanted = ", ".join(f"{k} {v}" for k, v in (("representation", representation), ("program", program),
                                                    ("project", project)) if v is not None)
        raise ValueError(f"the store has no representation for {wanted or 'anything'}: "
                         "`tunerlib store representations` lists them")
    return [r.id for r in reps]


def _operators(name: str, full: Optional[str]) -> List[str]:
    """``kind:operator`` entries of a composable technique's generated name (none for others)."""
    text = full or name
    if not is_generated_name(text):
        return []
    try:
        _, _, entries = parse_name(text)
    except TechniqueError:
        return []
    return [f"{kind}:{choice.op}" for kind, choice in sorted(entries.items())]


def technique_rows(table: AffinityTable, reps: Sequence[int], by: str = "technique") -> List[Dict]:
    """Rows (name, score, weight, members) ranked best first, grouped by ``by``: the score is the
    shrunk affinity or run-rank of :func:`~.queries.ranked`, the weight its requests (or runs)."""
    rows = ranked(table, reps)
    if by == "technique":
        return [{"technique": n, "score": a, "weight": _weight(q), "root": table.roots.get(n, n)}
                for n, a, q, _ in rows]
    groups: Dict[str, List[float]] = {}
    for name, aff, requests, _ in rows:
        keys = ([table.roots.get(name, name)] if by == "base"
                else _operators(name, table.full_names.get(name)))
        for key in keys:
            acc = groups.setdefault(key, [0.0, 0.0, 0])
            acc[0] += aff * requests
            acc[1] += requests
            acc[2] += 1
    out = [{by: k, "score": g / q, "weight": _weight(q), "techniques": n} for k, (g, q, n) in groups.items() if q]
    return sorted(out, key=lambda r: (-r["score"], -r["weight"], r[by]))


def _weight(w: float) -> float:
    """Requests are whole numbers; run-rank weights (shares of runs) are rounded for display."""
    return int(w) if float(w).is_integer() else round(w, 3)


def similar_rows(table: AffinityTable, rep: int, by: str = "parameters") -> List[Dict]:
    """The other representations, most similar to ``rep`` first."""
    if by == "parameters":
        pairs = nearest_by_parameters(table, table.reps[rep].counts)
        key = "distance"
    else:
        mine = {n: a for n, (a, _) in table.similarity.get(rep, {}).items()}
        pairs = correlated(table, mine)
        key = "correlation"
    return [{"representation": other, "name": table.reps[other].name, key: value,
             "parameter_info": table.reps[other].parameter_info, "runs": table.reps[other].runs}
            for value, other in pairs if other != rep]


def representation_rows(table: AffinityTable) -> List[Dict]:
    """Every representation with its program, structure and number of runs."""
    return [{"representation": r.id, "name": r.name, "runs": r.runs, "techniques": len(table.affinity.get(r.id, {})),
             "parameter_info": r.parameter_info} for r in sorted(table.reps.values(), key=lambda r: r.id)]


#: what a technique's score is, per ``--metric``
_SCORES = {"new-bests": "new bests per request", "improvement": "relative improvement per request",
           "run-rank": "rank of the runs it took part in, 1 best .. 0 worst"}


def technique_labels(metric: str) -> Tuple[Dict[str, str], str]:
    """({column: header}, a note under the table) saying what ``store techniques``' score and weight
    are under ``metric``."""
    weight = "runs (its share of each run's requests)" if metric == "run-rank" else "requests"
    prior = f"{RUN_RANK_PRIOR:g} run" if metric == "run-rank" else f"{PRIOR_REQUESTS} requests"
    labels = {"score": f"score ({metric})", "weight": f"weight ({weight.split(' (')[0]})",
              "root": "technique base", "techniques": "techniques"}
    note = (f"score: {_SCORES[metric]} in the stored runs, shrunk toward the mean of all techniques as if "
            f"{prior} had earned the mean (higher is better); weight: the {weight} behind the score")
    return labels, note


def why_no_similar(table: AffinityTable, rep: int, by: str) -> str:
    """Why :func:`similar_rows` found nothing for ``rep`` (one line, naming what would help)."""
    name = table.reps[rep].name
    others = [r for r in table.reps if r != rep]
    if not others:
        return f"the store holds no representation but {name}: upload runs of other programs"
    if by == "parameters":
        return (f"none of the {len(others)} other representations has technique performance records "
                "(their runs recorded no requests)")
    if not table.similarity.get(rep):
        return f"{name} has no technique performance records to correlate: try --by parameters"
    return (f"no other representation shares {MIN_SHARED} or more techniques with {name} with affinities that "
            "vary (a correlation needs them): try --by parameters")
