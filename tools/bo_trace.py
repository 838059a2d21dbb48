"""Trace one BayesianOptimization run proposal by proposal, as tools/compare.py runs it.

    python tools/bo_trace.py conv_a4000 3 60
    python tools/bo_trace.py conv_a4000 3 60 --rank 256,2,1,4,0,0,0 128,2,1,4,0,0,0
    python tools/bo_trace.py rise_asum 1 60 --technique 'BayesianOptimization;stall_after,3'

The run is compare.py's (``tools.compare_runs._run_one``'s ``tune_function`` call with the same seed,
so the values are those of ``compare.py --techniques BayesianOptimization``).  One line per evaluation:
its number, the code path that proposed it (``design``: the initial design; ``guided``: fewer than two
OK results, no GP yet; ``random``: a restart draw or a random configuration with nothing to model;
``global``: expected improvement over the whole space; ``trust``: a trust-region step of a stalled
search, only configurations within ``local_radius`` changed parameters of the best; ``fallback``: a
random configuration after a model failure), the configuration, its value divided by the table's
optimum (``x``: failed, or a configuration the table has no row for), the best so far, and for a BO
proposal: the surrogate (``pow0``/``pow1``: the log or identity transform, ``copula``), the number of
hyperparameter settings averaged and the largest weight, the OK results since the last gain
(``stalled``), the GP's prediction at the proposal and the incumbent's target (standardised units),
outputscale, noise variance and lengthscales (the distance channels in the encoder's order: one per
parameter, then the Hamming channels).  With ``--rank``, on spaces whose acquisition is scored whole,
each BO proposal also prints where each listed configuration (values in parameter order) ranks among
that step's candidates by the acquisition, with the GP's prediction there (``-``: evaluated already, or
outside the trust region).

The tool wraps methods of the technique for the run (read-only: every proposal is the one the run would
make), so it depends on BayesianOptimization's internals and is a diagnostic, not an interface.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

if __package__ in (None, ""):  # run as ``python tools/NAME.py``: make the checkout holding tools/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from tunerlib import tune_function
from tunerlib.techniques.bo import BayesianOptimization
from tools.compare_runs import _costed
from tools.problems import default_problems

Config = Dict[str, Any]
Key = Tuple[str, ...]


def _key(config: Config, names: Sequence[str]) -> Key:
    """A configuration as the strings of its values in parameter order (how ``--rank`` names them)."""
    return tuple(str(config[n]) for n in names)


class Tracer:
    """Wraps BayesianOptimization's proposal methods for one run and notes, per proposal, its path and
    model; :meth:`install` patches the class, :meth:`remove` restores it."""

    def __init__(self, names: Sequence[str], ranked: Sequence[Key]) -> None:
        self.names, self.ranked = list(names), list(ranked)
        self.notes: List[Tuple[Key, Dict[str, str]]] = []
        self._current: Dict[str, str] = {}
        self._saved: Dict[str, Any] = {}

    def install(self) -> None:
        """Patch the methods (called before the run)."""
        cls: Any = BayesianOptimization
        for name in ("desired_configuration", "_bo_proposal", "_guided_new"):
            self._saved[name] = getattr(cls, name)
        cls.desired_configuration = self._wrap_desired(self._saved["desired_configuration"])
        cls._bo_proposal = self._wrap_bo(self._saved["_bo_proposal"])
        cls._guided_new = self._wrap_guided(self._saved["_guided_new"])

    def remove(self) -> None:
        """Restore the methods (called after the run)."""
        for name, method in self._saved.items():
            setattr(BayesianOptimization, name, method)

    def _wrap_desired(self, method: Callable[[Any], Optional[Config]]) -> Callable[[Any], Optional[Config]]:
        def desired(bo: Any) -> Optional[Config]:
            self._current = {}
            made, fallbacks = bo._initial_made, bo.fallbacks
            cfg = method(bo)
            if cfg is None:
                return None
            path = self._current.get("path", "random")
            if bo._initial_made > made:
                path = "design"
            elif bo.fallbacks > fallbacks:
                path = "fallback"
            self._current["path"] = path
            self.notes.append((_key(cfg, self.names), dict(self._current)))
            return cfg
        return desired

    def _wrap_guided(self, method: Callable[[Any], Optional[Config]]) -> Callable[[Any], Optional[Config]]:
        def guided(bo: Any) -> Optional[Config]:
            self._current["path"] = "guided"
            return method(bo)
        return guided

    def _wrap_bo(self, method: Callable[[Any], Optional[Config]]) -> Callable[[Any], Optional[Config]]:
        def bo_proposal(bo: Any) -> Optional[Config]:
            o = bo.options
            stalled = bo._stalled()
            search = bo.search
            run = search._run_exhaustive
            steps: List[str] = []
            search._run_exhaustive = self._wrap_exhaustive(run, search, steps)
            try:
                cfg = method(bo)
            finally:
                search._run_exhaustive = run
            trust = o.stall_after > 0 and stalled >= o.stall_after and bo._local_turn != 0
            self._current.update(path="trust" if trust else "global", stalled=str(stalled),
                                 model=self._describe(bo, cfg), ranks=" ".join(steps))
            return cfg
        return bo_proposal

    def _wrap_exhaustive(self, run: Callable[..., Optional[Config]], search: Any,
                         steps: List[str]) -> Callable[..., Optional[Config]]:
        def exhaustive(acq: Any, space: tuple, excluded: Any, centres: Sequence[Config] = (),
                       radius: int = 0) -> Optional[Config]:
            cfg = run(acq, space, excluded, centres, radius)
            if self.ranked:
                steps.append(self._ranks(acq, space, excluded, search, list(centres), radius))
            return cfg
        return exhaustive

    def _ranks(self, acq: Any, space: tuple, excluded: Any, search: Any, centres: List[Config], radius: int) -> str:
        """Acquisition rank (1: the proposal's score) and GP prediction of each ``--rank`` configuration
        among the candidates of one exhaustive step."""
        configs, keys, enc, feats, codes = space
        rows = [i for i, k in enumerate(keys) if k not in excluded]
        if radius and centres:
            centre = np.array([codes[1][j].get(v, -1) for j, v in enumerate(search.key(centres[0]))])
            rows = [i for i in rows if np.count_nonzero(codes[0][i] != centre) <= radius]
        index = {_key(configs[i], self.names): n for n, i in enumerate(rows)}
        wanted = [(k, index[k]) for k in self.ranked if k in index]
        if not wanted:
            return "-"
        chosen = np.array(rows, dtype=np.intp)
        sub = [a[chosen] for a in enc]
        scores = acq.score_encoded(sub, [configs[i] for i in rows],
                                   features=None if feats is None else feats[chosen])
        rank = np.empty(len(rows), dtype=int)
        rank[np.argsort(-scores, kind="stable")] = np.arange(1, len(rows) + 1)
        mean, sd = acq.gp.predict(acq.encoder.sqdists([a[[n for _, n in wanted]] for a in sub], acq.train))
        parts = [f"{','.join(k)}:{rank[n]}/{len(rows)}({m:+.2f}±{s:.2f})" for (k, n), m, s in zip(wanted, mean, sd)]
        return " ".join(parts)

    @staticmethod
    def _describe(bo: Any, cfg: Optional[Config]) -> str:
        """The surrogate, hyperparameters and prediction behind a BO proposal."""
        fs = bo._fs
        if fs.model is None:
            return ""
        gp, train, y_best, _, _, models = fs.model
        h = gp.hyper
        surrogate = "copula" if fs.copula else f"pow{float(fs.transform):g}"
        weight = max(math.exp(w) for _, w in models)
        pred = ""
        if cfg is not None:
            mean, sd = gp.predict(bo.encoder.sqdists(bo.encoder.encode([cfg]), train))
            pred = f" pred {float(mean[0]):+.2f}±{float(sd[0]):.2f} best {y_best:+.2f}"
        scales = " ".join(f"{x:.2g}" for x in h.lengthscales)
        return (f"{surrogate} settings {len(models)}/{weight:.2f}{pred} "
                f"out {h.outputscale:.2g} noise {h.noise:.1g} ls {scales}")


def trace(problem_name: str, seed: int, budget: int, ranked: Sequence[str] = (),
          technique: str = "BayesianOptimization", shared: Optional[str] = None) -> List[str]:
    """One run of ``technique`` (BayesianOptimization, options allowed as in compare.py's
    ``--techniques``: ``'BayesianOptimization;stall_after,3'``) on a replay problem; returns the lines
    described in the module docstring."""
    problem = default_problems([problem_name], shared, None)[problem_name]
    names = list(problem.make_space().names)
    tracer = Tracer(names, [tuple(r.split(",")) for r in ranked])
    evaluate = _costed(problem, [])
    seen: List[Tuple[Key, Any]] = []

    def measured(config: Config) -> Any:
        value = evaluate(config)
        seen.append((_key(config, names), value))
        return value
    tracer.install()
    try:
        tune_function(problem.make_space(), measured, test_limit=budget, technique=[technique], seed=seed,
                      program_name=problem_name)
    finally:
        tracer.remove()
    notes = dict(tracer.notes)
    lines, best = [" ".join(names)], math.inf
    for i, (key, value) in enumerate(seen, 1):
        ok = isinstance(value, (int, float)) and math.isfinite(value)
        best = min(best, value / problem.optimum) if ok else best
        note = notes.get(key, {})
        shown = f"{value / problem.optimum:.3f}" if ok else "x"
        extra = f" stalled {note['stalled']} {note['model']}" if "model" in note else ""
        lines.append(f"{i:3d} {note.get('path', '?'):8s} {','.join(key):32s} {shown:>9s} best {best:.3f}{extra}")
        if note.get("ranks"):
            lines.append(f"      ranks {note['ranks']}")
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problem", help="a replay problem of tools/compare.py (e.g. conv_a4000, rise_asum)")
    parser.add_argument("seed", type=int)
    parser.add_argument("budget", type=int)
    parser.add_argument("--rank", nargs="*", default=[], metavar="CONFIG",
                        help="configurations (values in parameter order, comma-separated) whose acquisition "
                             "rank each BO proposal prints (spaces scored whole)")
    parser.add_argument("--technique", default="BayesianOptimization",
                        help="BayesianOptimization with options, as compare.py's --techniques takes them")
    parser.add_argument("--shared", default=None, help="the shared data folder (else $TUNERLIB_SHARED_DIR)")
    args = parser.parse_args(argv)
    for line in trace(args.problem, args.seed, args.budget, args.rank, args.technique, args.shared):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
