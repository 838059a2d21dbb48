"""The runs of tools/compare.py saved to JSON (``--json FILE``) and read back (``--from-json FILE ...``).

The file maps ``"problem|technique"`` to the value sequences of its runs (each ending with the run's
CPU seconds, negated), ``"problem|technique|simulated_s"`` to the simulated seconds of every
evaluation where the problem records them, and ``"@units"`` to each problem's unit.  :func:`save_runs`
is called by ``compare.main`` after the runs, :func:`load_saved` instead of running, and
:func:`saved_budgets` when ``--from-json`` comes without ``--budgets``.
"""
from __future__ import annotations

import json
import os
from typing import List, Mapping, Optional, Sequence, Tuple

from tools.compare_runs import Runs, split_cpu
from tools.problems import Problem

#: suffix of the --json keys holding the simulated seconds of each evaluation ("problem|technique|simulated_s")
_COST_KEY = "simulated_s"
#: --json key of the problems' units (``{problem: "s"}``); files saved before it hold replay times in ms
_UNITS_KEY = "@units"


def save_runs(path: str, results: Runs, costs: Runs, problems: Mapping[str, Problem]) -> None:
    """--json: write the runs' values, their simulated seconds and the problems' units to ``path``,
    making its folder first (the runs are done by then: a missing folder must not lose them)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as fh:
        json.dump({**{f"{p}|{t}": v for (p, t), v in results.items()},
                   **{f"{p}|{t}|{_COST_KEY}": c for (p, t), c in costs.items()},
                   _UNITS_KEY: {p: prob.unit for p, prob in problems.items()}}, fh)


def saved_budgets(results: Runs, defaults: Sequence[int]) -> List[int]:
    """Budgets for saved runs when ``--budgets`` is not given: the default ones they reach and their
    length, so that the score covers the evaluations it covered when the runs were made (runs are
    made up to the largest budget; the score's range is capped there)."""
    longest = max((len(split_cpu(run)[0]) for runs in results.values() for run in runs), default=0)
    if not longest:
        return list(defaults)
    return sorted({b for b in defaults if b < longest} | {longest})


def load_saved(paths: Sequence[str], techniques: Optional[List[str]],
               problems: Mapping[str, Problem]) -> Tuple[Runs, Runs]:
    """Runs saved by ``--json`` (merged), restricted to the chosen ``problems`` and techniques: (values
    per run, simulated seconds per evaluation per run where saved).  A file without units (saved
    before replayed times were seconds) has its replay problems' values converted from ms."""
    results: Runs = {}
    costs: Runs = {}
    for path in paths:
        with open(path) as fh:
            saved = json.load(fh)
        in_ms = _UNITS_KEY not in saved
        saved.pop(_UNITS_KEY, None)
        for key, runs in saved.items():
            pname, tech = key.split("|", 1)
            target = results
            if tech.endswith("|" + _COST_KEY):
                tech, target = tech[: -len(_COST_KEY) - 1], costs
            if pname in problems and (techniques is None or tech in techniques):
                if in_ms and target is results and problems[pname].data.get("replay"):
                    runs = [[v / 1000 if v >= 0 else v for v in run] for run in runs]  # the CPU tail is < 0
                target.setdefault((pname, tech), []).extend(runs)
    return results, costs
