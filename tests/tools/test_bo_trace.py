"""tools/bo_trace.py: the traced run is compare.py's run of BayesianOptimization, one line per evaluation."""
import math
import re

import pytest

from tools import compare_runs
from tools.bo_trace import trace
from tools.problems import SHARED, default_problems

TABLE = SHARED / "data" / "gpu_cache" / "rise_baco"


@pytest.mark.skipif(not TABLE.exists(), reason=f"RISE tables not found: {TABLE}")
def test_trace_follows_the_compare_run_and_names_each_path():
    problem = default_problems(["rise_kmeans"], str(SHARED), None)["rise_kmeans"]
    compare_runs._PROBLEMS["rise_kmeans"] = problem
    try:
        _, _, _, values, _ = compare_runs._run_one(("rise_kmeans", "BayesianOptimization", 4, 12))
    finally:
        del compare_runs._PROBLEMS["rise_kmeans"]
    lines = trace("rise_kmeans", 4, 12, ranked=["1024,1,32,1"], shared=str(SHARED))
    rows = [line for line in lines[1:] if re.match(r"\s*\d+ ", line)]
    assert len(rows) == 12
    shown = [row.split()[3] for row in rows]
    expected = [f"{v / problem.optimum:.3f}" if math.isfinite(v) else "x" for v in values[:-1]]
    assert shown == expected
    paths = [row.split()[1] for row in rows]
    assert paths[0] == "design" and set(paths) <= {"design", "guided", "random", "global", "trust", "fallback"}
    assert any(p in ("global", "trust") for p in paths)
    assert all(" ls " in row for row, p in zip(rows, paths) if p in ("global", "trust"))
