"""Compare techniques on benchmark problems: best value at several budgets over many seeds.

Runs every (technique, problem, seed) in parallel worker processes through tunerlib's public
``tune_function`` (in-memory results database), then prints, per problem and technique, the median
and the 20th/80th percentiles of the best value found within each budget, and the median ratio to
the known optimum.  With ``--opentuner-python PY`` (a Python with ``opentuner==0.8.8`` installed,
e.g. a separate virtual environment) OpenTuner's default technique runs on the TSP problems too and appears as the
row ``opentuner-0.8.8``.

    python tools/compare.py --problems att48 --techniques AUCBanditMetaTechniqueA PureRandom \\
        --budgets 300 1000 3000 --seeds 20

``--score`` adds, for every exhaustively recorded replay problem (the Kernel Tuner caches, the RISE
kmeans/stencil tables, any ``@table`` problem), the autotuning methodology's score of each technique
(tools/score.py: 0 random search, 1 the optimum, averaged over the budget range up to the largest
budget), the mean over problems in a closing table with Kernel Tuner's figures, and the runs within
5 % of the optimum.

The recommendation bandits (``rec-bndt-dbi`` ...) read the store given by ``--store`` (made by
``python -m tools.history generate``); ``--leave-one-out`` hides each problem's own runs from them, so the
history comes from the other problems only (the thesis' protocol, Table 7.3). Where the store holds no run of
a similar search space they read the starter history shipped with tunerlib, unless ``--no-starter-history``.

The TSPLIB instances and recorded tables come from the shared data folder (``--shared DIR``, else
``$TUNERLIB_SHARED_DIR``; without one those problems are absent), the problems measured by the
examples from ``--examples DIR`` (default: the ``examples/`` folder beside this tool in a checkout).
A table recorded elsewhere is named by its file: ``BENCHMARK=FILE`` (e.g.
``rise_kmeans=/tmp/kmeans_othergpu.csv.gz``) or a bare ``FILE`` whose columns identify its kernel is
replayed in that kernel's space, known constraints included; add ``@table`` to search only its
recorded configurations.  Such problems need no shared folder.

``--database-dir DIR`` also records every tunerlib run in a results database per problem,
``DIR/<problem>.db``, labelled with its technique, so that ``tunerlib plot DIR/att48.db`` and
``tunerlib report DIR/att48.db`` show the comparison (median and band across seeds per technique).
"""
from __future__ import annotations

# The command line: the options and main().  The runs are made by tools/compare_runs.py, saved and read
# back by tools/compare_saved.py (--json, --from-json), and reported by tools/compare_report.py (with
# the score's tables from tools/compare_scores.py).

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from tunerlib.techniques import AFFINITY_METRICS

if __package__ in (None, ""):  # run as ``python tools/NAME.py``: make the checkout holding tools/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import exit_from
from tools.compare_report import report
from tools.compare_runs import DEFAULT_TECHNIQUES, _PROBLEMS, _STORE, run_all
from tools.compare_saved import load_saved, save_runs, saved_budgets
from tools.problems import default_problems
# one run as compare.py makes it, and the state it reads: scripts drive single runs through them
from tools.compare_runs import _RECORD as _RECORD, _run_one as _run_one


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+",
                    help="problem names, or table files as BENCHMARK=FILE[@table] (default: all available)")
    ap.add_argument("--techniques", nargs="+",
                    help=f"techniques to run (default: {' '.join(DEFAULT_TECHNIQUES)}; with --from-json: "
                         "every saved one)")
    ap.add_argument("--budgets", nargs="+", type=int, help="budgets to report (default per problem)")
    ap.add_argument("--seeds", type=int, default=20, help="repetitions per technique and problem")
    ap.add_argument("--first-seed", type=int, default=0, metavar="N",
                    help="seeds N .. N + SEEDS - 1 (default 0), e.g. to validate on seeds not used for development")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--opentuner-python", help="python with opentuner==0.8.8 (TSP problems only)")
    ap.add_argument("--opentuner-seeds", type=int, default=5, help="OpenTuner repetitions (slow)")
    ap.add_argument("--store", help="cross-session store the recommendation bandits read (a path or URL)")
    ap.add_argument("--leave-one-out", action="store_true",
                    help="recommendations ignore the stored runs of the problem being tuned")
    ap.add_argument("--no-starter-history", action="store_true",
                    help="recommendations read only --store, never the starter history shipped with tunerlib "
                         "(which they read when the store holds no run of a similar search space)")
    ap.add_argument("--affinity-metric", choices=AFFINITY_METRICS,
                    help="search affinity of the recommendation bandits (default: theirs)")
    ap.add_argument("--score", action="store_true",
                    help="also report the autotuning-methodology score (0 random search, 1 the optimum; "
                         "tools/score.py) of every exhaustively recorded problem, up to the largest budget, "
                         "its mean over problems, and the runs within 5%% of the optimum")
    ap.add_argument("--database-dir", metavar="DIR",
                    help="also record every run in DIR/<problem>.db, labelled with its technique "
                         "(for `tunerlib plot` and `tunerlib report`)")
    ap.add_argument("--shared", metavar="DIR",
                    help="shared data folder holding data/tsplib, data/gpu_cache and data/taco_cache (default: "
                         "$TUNERLIB_SHARED_DIR)")
    ap.add_argument("--examples", metavar="DIR",
                    help="examples folder for the problems the examples measure (default: examples/ beside "
                         "this tool in a checkout)")
    ap.add_argument("--json", help="also write all raw value sequences to this JSON file")
    ap.add_argument("--from-json", nargs="+", metavar="FILE",
                    help="do not run: report the runs saved by --json (several files are merged; "
                         "without --budgets, up to the saved runs' length)")
    return ap

def main(argv: Optional[Sequence[str]] = None) -> int:
    ns = _parser().parse_args(argv)
    _STORE.update(store=ns.store, leave_one_out=ns.leave_one_out, metric=ns.affinity_metric,
                  no_starter=ns.no_starter_history)
    _PROBLEMS.clear()  # main() may run more than once in a process (tests)
    try:
        _PROBLEMS.update(default_problems(ns.problems, ns.shared, ns.examples))
    except (FileNotFoundError, ValueError) as exc:     # a table file that is missing or not a recording
        print(f"compare: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        raise SystemExit(2) from None
    budgets = {p: sorted(ns.budgets or prob.budgets) for p, prob in _PROBLEMS.items()}
    if ns.from_json:
        results, costs = load_saved(ns.from_json, ns.techniques, _PROBLEMS)
        if not ns.budgets:
            budgets = {p: saved_budgets({k: v for k, v in results.items() if k[0] == p}, own)
                       for p, own in budgets.items()}
        report(results, _PROBLEMS, budgets, score=ns.score, costs=costs, shared=ns.shared)
        return 0
    results, costs = run_all(ns, {p: max(own) for p, own in budgets.items()})
    if ns.json:
        save_runs(ns.json, results, costs, _PROBLEMS)
    report(results, _PROBLEMS, budgets, score=ns.score, costs=costs, shared=ns.shared)
    if ns.store:
        print(f"store used: {ns.store}" + (" (leave-one-out: each problem's own runs ignored)"
                                            if ns.leave_one_out else ""))
    return 0


if __name__ == "__main__":
    exit_from(main)
