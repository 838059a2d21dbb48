"""RISE/BaCO CSV reader and RISE spaces: synthetic files in tmp_path, then the shared tables."""
import gzip
import os
from pathlib import Path

import pytest

from tunerlib.replay import rows_in_space
from tunerlib.replay.recorded import load_benchmark
from tunerlib.replay.recorded.rise import FAILED_REASON, read_rise_csv

SHARED = Path(os.environ["TUNERLIB_SHARED_DIR"])   # tests/conftest.py: ../shared unless set
needs_shared = pytest.mark.skipif(not (SHARED / "data" / "gpu_cache" / "rise_baco").is_dir(),
                                  reason=f"shared RISE data not found under {SHARED}")

RISE_CSV = """tuned_gs0,tuned_ls0,compute_time,energy,iterations,wait_after_run
256,16,5.5,48.9,10,0
256,16,6.5,50.0,10,0
256,16,9.5,50.0,10,0
1024,32,0.0,1.0,10,0
64,64,2.25,3.0,10,0
"""


def test_rise_synthetic(tmp_path):
    path = tmp_path / "toy_rtxtitan.csv.gz"
    path.write_bytes(gzip.compress(RISE_CSV.encode()))
    t = read_rise_csv(path)
    assert t.params == ("tuned_gs0", "tuned_ls0") and len(t) == 3 and t.metadata["rows_read"] == 5
    assert t.lookup({"tuned_gs0": 256, "tuned_ls0": 16}).value == 6.5 / 1000   # median of duplicates, in s
    rec = t.lookup({"tuned_gs0": 1024, "tuned_ls0": 32})
    assert not rec.ok and rec.reason == FAILED_REASON                       # compute_time == 0.0
    assert t.lookup({"tuned_gs0": 64, "tuned_ls0": 64}).simulated_s == pytest.approx(0.0225)
    assert t.lookup({"tuned_gs0": 64, "tuned_ls0": 64}).extra == {"energy": 3.0}
    assert t.lookup({"tuned_gs0": 64, "tuned_ls0": 32}) is None
    assert t.optimum == 2.25 / 1000 and t.metadata["gpu"] == "rtxtitan" and t.metadata["recorded_unit"] == "ms"


def test_rise_bad_files(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="no 'compute_time' column"):
        read_rise_csv(bad)
    bad.write_text("a,compute_time\n1,2\n3\n")
    with pytest.raises(ValueError, match="x.csv:3: 1 fields"):
        read_rise_csv(bad)
    bad.write_text("a,compute_time\nfoo,2\n")
    with pytest.raises(ValueError, match="'foo' is not a number"):
        read_rise_csv(bad)


# ------------------------------------------------------------------------------- shared tables
RISE_FACTS = [  # name, rows, unique configs, failed, feasible space (README / CATBench constraints)
    ("rise_kmeans", 3361, 3361, 0, 3641), ("rise_stencil", 3629, 3576, 0, 3641),
    ("rise_asum", 14823, 14432, 0, 63954), ("rise_mm", 9377, 9377, 328, None),
    ("rise_scal", 13436, 13436, 616, None), ("rise_harris", 2723, 2723, 0, None),
]


@needs_shared
@pytest.mark.parametrize("name,rows,unique,failed,feasible", RISE_FACTS)
def test_rise_tables(name, rows, unique, failed, feasible):
    b = load_benchmark(name, SHARED)
    t = b.table
    assert t.metadata["rows_read"] == rows and len(t) == unique and t.failed_count == failed
    m = b.manipulator()
    legal, feasible_rows = b.rows_in_space()
    assert legal == unique                               # every recorded value is in the domain
    if name != "rise_scal":
        assert feasible_rows == unique                   # and satisfies the known constraints
    if feasible is not None:
        assert b.feasible_count() == feasible
    assert b.expert is not None and m.is_valid(b.expert) and m.is_feasible(b.expert)
    if b.default is not None:
        assert m.is_feasible(b.default)


@needs_shared
def test_kmeans_and_stencil_optima_and_experts():
    k, s = load_benchmark("rise_kmeans", SHARED), load_benchmark("rise_stencil", SHARED)
    assert k.optimum == pytest.approx(2.885664e-3) and s.optimum == pytest.approx(1.445888e-3)   # seconds
    assert k.evaluate(k.expert) == pytest.approx(4.637088e-3)
    assert s.status(s.expert) == "ok"
    # feasible but absent configurations are "not measured" (92% / 98% coverage)
    m = k.manipulator()
    missing = [c for c in _all_configs(m) if m.is_feasible(c) and k.status(c) == "not_measured"]
    assert len(missing) == 3641 - 3361


def _all_configs(m):
    import itertools
    names = m.names
    for values in itertools.product(*(m.parameter(n).values for n in names)):
        yield dict(zip(names, values))


@needs_shared
def test_scal_constraint_excludes_bogus_rows():
    b = load_benchmark("rise_scal", SHARED)
    legal, feasible = b.rows_in_space()
    assert legal == 13436 and feasible == 4582
    # rows outside the known constraint hold bogus near-zero times; the in-space optimum ignores them
    assert b.table_optimum < 1e-5 and b.optimum == pytest.approx(1.06096e-3)
    assert b.manipulator().is_feasible(b.best_config)


@needs_shared
def test_rows_in_space_equals_per_row_checks():
    b = load_benchmark("rise_scal", SHARED)
    m = b.manipulator()
    configs = list(b.recorded_configs())[:3000]
    configs.append({**configs[0], "tuned_vec": 3})                 # illegal value
    expected = (sum(m.is_valid(c) for c in configs),
                sum(m.is_valid(c) and m.is_feasible(c) for c in configs))
    assert rows_in_space(m, configs) == expected and expected[0] > expected[1] > 0


def test_unknown_csv_gets_a_generic_space(tmp_path):
    from tunerlib.replay.recorded import benchmark_from_file
    path = tmp_path / "toy_gpu.csv"
    path.write_text("a,b,fixed,compute_time,energy,iterations,wait_after_run\n"
                    "1,8,3,2.0,1,10,0\n2,8,3,1.0,1,10,0\n4,16,3,0.0,1,10,0\n")
    b = benchmark_from_file(path)
    m = b.manipulator()
    assert m.names == ["a", "b"] and b.table.constants == {"fixed": 3} and b.constraints == []
    assert m.parameter("a").log and b.optimum == 0.001 and b.best_config == {"a": 2, "b": 8}
    assert b.status({"a": 4, "b": 16}) == "failed" and b.status({"a": 4, "b": 8}) == "not_measured"
