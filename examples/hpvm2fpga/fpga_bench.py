"""The HPVM2FPGA model problem for benchmark tools (tools/compare.py): :func:`make_problem`.

    problem = make_problem()                     # the shipped edge-detection space
    run = tune_function(problem["manipulator"](), problem["evaluate"],
                        test_limit=problem["budget"], technique=["BayesianOptimization"], seed=1)

``evaluate`` uses the analytical model of ``fpga_model.py`` — a model, not FPGA measurements.

Budget: 400 evaluations.  The BaCO paper gave HPVM2FPGA 401 initial + 820 iterations; 400 is
about its "tiny" budget (a third of the full one), the regime the paper's headline results are
about.  The model costs microseconds per design, but one BayesianOptimization run of 400
evaluations already takes about 10 minutes on a 2-core machine, and the full 1221 much longer.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fpga_design  # noqa: E402
import fpga_model  # noqa: E402

#: evaluations per run (see the module docstring)
BUDGET = 400


def make_problem(space_path: Optional[str] = None) -> Dict[str, Any]:
    """The problem as a dict.

    Keys: ``manipulator`` (callable → a fresh ConfigurationManipulator), ``evaluate`` (config →
    modelled ExecTime in seconds, or None when the design does not fit or its fusion is illegal),
    ``default`` (the unoptimised design), ``expert`` (the space's expert design or None),
    ``budget`` (:data:`BUDGET`), ``name`` (``hpvm2fpga-<space>``), ``design`` (the parsed
    description).
    """
    design = fpga_design.load_design(space_path or fpga_design.EDGE_DETECTION)

    def evaluate(cfg: Dict[str, Any]) -> Optional[float]:
        report = fpga_model.evaluate(design, cfg)
        return report.seconds if report.fits else None

    manipulator: Callable = design.manipulator
    return {"name": f"hpvm2fpga-{design.name}", "manipulator": manipulator, "evaluate": evaluate,
            "default": dict(design.default),
            "expert": dict(design.expert) if design.expert else None,
            "budget": BUDGET, "design": design}
