"""Published and peer figures printed next to tools/compare.py's results.

Each entry: (who, budget, figure, convention) where convention is ``"opt/best"`` (Kernel Tuner's
convention, <= 1, higher is better) or ``"best/opt"`` (tunerlib's table convention, >= 1, lower is
better).  The figures are published or were measured with other tuners: Kernel Tuner 1.5.0
strategies and BaCO / Optuna / OpenTuner runs measured on the same recorded tables, not by this
script; compare.py only prints them beside its own medians, converted to both conventions.

The pnpoly figures were measured on the same cache file (median of 20 seeds, 100
evaluations, failed configurations counted): Kernel Tuner 1.5.0 ``tune_kernel(...,
simulation_mode=True, strategy=S, strategy_options={"max_fevals": 100})`` with numpy/random seeded
0-19, and Optuna 5.0.0 ``TPESampler(seed=s)`` over ``suggest_categorical`` of each parameter's
values, failed configurations told as FAIL.  The same Kernel Tuner driver gave 0.953 (bayes_opt) and
0.880 (random) on gemm RTX Titan, next to the published 0.95 and 0.84.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Tuple

from tunerlib.techniques import DEFAULT_TECHNIQUE

Reference = Tuple[str, int, float, str]

REFERENCES: Dict[str, List[Reference]] = {
    "conv_a100": [("Kernel Tuner random", 100, 0.73, "opt/best"),
                  ("Kernel Tuner GA", 100, 0.88, "opt/best"),
                  ("Kernel Tuner bayes_opt", 100, 0.86, "opt/best")],
    "gemm_rtxtitan": [("Kernel Tuner random", 100, 0.84, "opt/best"),
                      ("Kernel Tuner bayes_opt", 100, 0.95, "opt/best")],
    "pnpoly_rtxtitan": [("Kernel Tuner random_sample", 100, 0.912, "opt/best"),
                        ("Kernel Tuner bayes_opt", 100, 0.875, "opt/best"),
                        ("Kernel Tuner genetic_algorithm", 100, 0.923, "opt/best"),
                        ("Kernel Tuner pso", 100, 0.919, "opt/best"),
                        ("Kernel Tuner simulated_annealing", 100, 0.912, "opt/best"),
                        ("Kernel Tuner firefly_algorithm", 100, 0.938, "opt/best"),
                        ("Kernel Tuner basinhopping", 100, 0.918, "opt/best"),
                        ("Kernel Tuner mls", 100, 0.918, "opt/best"),
                        ("Kernel Tuner dual_annealing", 100, 0.916, "opt/best"),
                        ("Kernel Tuner greedy_ils", 100, 0.912, "opt/best"),
                        ("Kernel Tuner diff_evo", 100, 0.905, "opt/best"),
                        ("Optuna 5.0 TPE", 100, 0.917, "opt/best")],
    "rise_kmeans": [("BaCO (median of 10)", 20, 1.007, "best/opt"),
                    ("BaCO (median of 10)", 60, 1.002, "best/opt"),
                    ("Optuna TPE + constraints", 20, 2.6, "best/opt"),
                    ("Optuna TPE + constraints", 60, 1.006, "best/opt"),
                    ("OpenTuner 0.8.8", 60, 1.78, "best/opt"),
                    ("Kernel Tuner bayes_opt", 60, 1.71, "best/opt"),
                    ("random search", 60, 1.38, "best/opt")],
}

#: Targets on the RISE tables, printed under the references (the targets tools/targets.py checks
#: cover the Kernel Tuner caches): Bayesian optimisation's, and those of the default technique ``auto``
TARGETS: Dict[str, str] = {
    "rise_kmeans": "target: median <= 1.01 best/opt at 20, every seed within 1% of the optimum by 60"
                   " (BayesianOptimization); every seed within 1% at 20 (auto)",
    "rise_stencil": "target: median <= 1.01 best/opt at 20, every seed within 1% of the optimum by 60"
                    " (BayesianOptimization)",
    "rise_asum@table": "target: median <= 1.05 best/opt at 100 (auto)",
    "rise_mm@table": "target: median <= 1.02 best/opt at 100 (auto)",
    "rise_harris@table": "target: median <= 1.25 best/opt at 100 (auto)",
}


def best_over_opt(figure: float, convention: str) -> float:
    """A reference figure in the best/optimum convention (>= 1)."""
    return 1.0 / figure if convention == "opt/best" else figure


def reference_lines(problem: str) -> List[str]:
    """Lines to print under a problem's block (empty when nothing is known)."""
    lines = []
    for who, budget, fig, conv in REFERENCES.get(problem, []):
        b = best_over_opt(fig, conv)
        lines.append(f"  reference {who:<32} @{budget:<4} best/opt {b:.3f}x  (opt/best {1 / b:.3f})")
    target = TARGETS.get(problem)
    if target:
        lines.append(f"  {target}")
    return lines


#: autotuning-methodology scores (tools/score.py's scale: 0 random search, 1 the optimum) of Kernel
#: Tuner 1.5 strategies on convolution + dedispersion x {A100, A4000, MI250X}, 5 repeats; measured
#: with Kernel Tuner, not by this repository
KERNEL_TUNER_SCORES: List[Tuple[str, float]] = [("Kernel Tuner 1.5 simulated_annealing", 0.344),
                                                ("Kernel Tuner 1.5 genetic_algorithm", 0.152),
                                                ("Kernel Tuner 1.5 random_sample (~)", 0.03)]
KERNEL_TUNER_SCORE_SPACES = ("conv_a100", "conv_a4000", "conv_mi250x", "dedisp_a100", "dedisp_a4000",
                             "dedisp_mi250x")
#: the targets on the aggregate score (checked by tools/targets.py)
SCORE_TARGETS: Dict[str, float] = {"BayesianOptimization": 0.6, DEFAULT_TECHNIQUE: 0.45}


def published_scores(folder: Path) -> List[Tuple[str, float, str]]:
    """(strategy, best score, its hyperparameters) per ``kt_hyperparamtuning_scores_<strategy>.json``
    in ``folder`` (benchmark_hub's hyperparameter-tuning caches), best first; [] when absent."""
    out = []
    for path in sorted(Path(folder).glob("kt_hyperparamtuning_scores_*.json")):
        with open(path, encoding="utf-8") as fh:
            cache = json.load(fh).get("cache", {})
        scored = [(e["score"], k) for k, e in cache.items() if isinstance(e.get("score"), (int, float))]
        if scored:
            best, key = max(scored)
            out.append((path.stem[len("kt_hyperparamtuning_scores_"):], float(best), key))
    return sorted(out, key=lambda t: -t[1])


def score_reference_lines(folder: Path) -> List[str]:
    """The Kernel Tuner score figures, to print under the aggregate scores."""
    spaces = " + ".join(KERNEL_TUNER_SCORE_SPACES)
    lines = [f"  reference {who:<40} score {fig:.3f}  (Kernel Tuner 1.5: {spaces}, 5 repeats)"
             for who, fig in KERNEL_TUNER_SCORES]
    for strategy, best, key in published_scores(folder):
        lines.append(f"  published Kernel Tuner {strategy:<29} score {best:.3f}  (best of its hyperparameter "
                     f"configurations, {key}; KT's 12-space time-based figure, not directly comparable)")
    return lines
