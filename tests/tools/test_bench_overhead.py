"""tools/bench_overhead.py: one row of overhead figures per technique named (the default without one)."""
import json

import pytest

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


def test_cpu_per_evaluation_at_2000_and_over_the_last_1000_on_a_tour_in_memory(capsys):
    """With 2,000 evaluations or more the row has the CPU per evaluation over evaluations 1,001-2,000
    and over the last 1,000; ``--space tour`` tunes one permutation, ``--database memory://`` keeps the
    results in memory."""
    assert bench_overhead.main(["--evals", "2000", "--technique", "PureRandom", "--database", "memory://",
                                "--space", "tour", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["tunerlib PureRandom"]
    assert row["evals"] == 2000 and row["cpu2k_ms"] >= 0 and row["cpu_last1000_ms"] >= 0
    assert row["cpu2k_ms"] == row["cpu_last1000_ms"]        # the same 1,000 evaluations
    with pytest.raises(SystemExit) as exc:
        bench_overhead.main(["--evals", "30", "--space", "cube"])
    assert exc.value.code == 2 and "invalid choice: 'cube'" in capsys.readouterr().err
