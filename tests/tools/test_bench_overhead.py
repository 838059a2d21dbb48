"""tools/bench_overhead.py: one row of overhead figures per technique named (the default without one)."""
import json

from tunerlib.tools import bench_overhead


def test_one_row_per_named_technique_and_the_default_without(capsys):
    assert bench_overhead.main(["--evals", "30", "--technique", "PureRandom", "AUCBanditMetaTechniqueA",
                                "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert list(rows) == ["tunerlib PureRandom", "tunerlib AUCBanditMetaTechniqueA"]
    assert all(row["evals"] == 30 and row["mean_ms"] > 0 for row in rows.values())
    assert bench_overhead.main(["--evals", "20"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("framework") and table[1].split()[:2] == ["tunerlib", "20.000"]
