"""tools/bench_windows.py counts the calls of two windows of a bench_overhead run."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import bench_windows  # noqa: E402

from tunerlib.techniques import Technique  # noqa: E402


def test_one_proposal_per_evaluation_and_the_arms_share_it():
    counts, (early, late) = bench_windows.count_windows(3000, "auto")
    assert (early, late) == (1000, 2000)
    for window in (early, late):
        assert counts[(window, "TOTAL")][0] == 1000 and counts[(window, "TOTAL")][1] > 100000
        assert counts[(window, "auto.propose")][0] == 1000       # no proposal asked for again
        arms = [v[0] for (w, what), v in counts.items() if w == window and what.count("/") == 2]
        assert sum(arms) == 1000 and len(arms) == 4
    # the counting wrappers are gone once the run ends: the rest of the process proposes uncounted
    wrapped = [cls for cls in [Technique] + bench_windows._subclasses(Technique)
               if "_method" in (getattr(cls.__dict__.get("propose"), "__kwdefaults__", None) or {})]
    assert wrapped == []
