"""TACO CSV reader and TACO spaces: a synthetic file in tmp_path, then the shared tables."""
import os
from pathlib import Path

import pytest

from tunerlib.replay.recorded import load_benchmark
from tunerlib.replay.recorded.taco import parse_permutation, permutation_positions, read_taco_csv

SHARED = Path(os.environ["TUNERLIB_SHARED_DIR"])   # tests/conftest.py: ../shared unless set
needs_shared = pytest.mark.skipif(not (SHARED / "data" / "taco_cache").is_dir(),
                                  reason=f"shared TACO data not found under {SHARED}")

TACO_CSV = """chunk_size,omp_scheduling_type,permutation,compute_time,iterations,repeats,wait_between_repeats,wait_after_run
16,0,"(4, 3, 2, 0, 1)",100.0,10,5,0,10
16,1,"(0, 1, 2, 3, 4)",50.0,10,5,0,10
"""


def test_taco_synthetic(tmp_path):
    path = tmp_path / "toy_7742.csv"
    path.write_text(TACO_CSV)
    t = read_taco_csv(path)
    assert t.params == ("chunk_size", "omp_scheduling_type", "permutation")
    rec = t.lookup({"chunk_size": 16, "omp_scheduling_type": 0, "permutation": [4, 3, 2, 0, 1]})
    assert rec.value == 0.1 and rec.simulated_s == pytest.approx(5.0)       # 100 ms = 0.1 s; x 10 x 5
    assert t.lookup({"chunk_size": 16, "omp_scheduling_type": 0, "permutation": [0, 1, 2, 3, 4]}) is None
    assert t.best_config == {"chunk_size": 16, "omp_scheduling_type": 1, "permutation": [0, 1, 2, 3, 4]}


def test_permutation_parsing():
    assert parse_permutation("(4, 3, 2, 0, 1)") == (4, 3, 2, 0, 1)
    assert permutation_positions((4, 3, 2, 0, 1)) == [3, 4, 2, 1, 0]
    for bad in ("4, 3", "(1, 1, 0)", "(a, b)"):
        with pytest.raises(ValueError):
            parse_permutation(bad)


TACO_FACTS = [  # name, rows, optimum in ms (as recorded; the tables hold seconds)
    ("taco_spmm", 10068, 54.762154), ("taco_spmv", 35042, 0.302411), ("taco_sddmm", 27083, 12.611963),
    ("taco_ttv", 16848, 0.2915), ("taco_mttkrp", 3889, 124.0786205)]


@needs_shared
@pytest.mark.parametrize("name,rows,optimum", TACO_FACTS)
def test_taco_tables_satisfy_catbench_constraints(name, rows, optimum):
    b = load_benchmark(name, SHARED)
    assert len(b.table) == rows == b.table.metadata["rows_read"] and b.table.failed_count == 0
    assert b.optimum == pytest.approx(optimum / 1000)
    m = b.manipulator()
    assert m.parameter("permutation").kind == "permutation"
    # position-of-loop reading of CATBench's permutation[k] is the right one: every row satisfies it
    assert b.rows_in_space() == (rows, rows)


@needs_shared
def test_permutation_constraints_read_positions_not_entries():
    b = load_benchmark("taco_spmm", SHARED)
    perms = {tuple(c["permutation"]) for c in b.recorded_configs()}
    assert len(perms) == 12
    # read literally (entry k of the tuple) CATBench's "permutation[0] < permutation[3]" fails on recorded rows...
    assert any(p[0] > p[3] for p in perms)
    # ...read as positions of loops it holds for every row
    assert all(permutation_positions(p)[0] < permutation_positions(p)[3] for p in perms)
    m = b.manipulator()
    assert not m.is_feasible({**b.best_config, "permutation": [3, 1, 2, 0, 4]})   # loop 3 before loop 0
