"""Columns are read by name: permuted and extra columns, missing ones, thread counts of another
machine, and which kernel a file belongs to (synthetic tables in tmp_path; no shared data)."""
import gzip

import pytest

from tunerlib.replay.recorded import BENCHMARKS, benchmark_from_file, read_rise_csv, read_taco_csv

TACO_PERMUTED = """permutation,repeats,omp_scheduling_type,wait_after_run,chunk_size,iterations,compute_time
"(4, 3, 2, 0, 1)",5,0,10,16,10,100.0
"(0, 1, 2, 3, 4)",5,1,10,16,10,50.0
"""
KMEANS_ROWS = [(1024, 1, 256, 1, 4.6), (1024, 4, 16, 4, 2.9), (256, 64, 16, 64, 52.0), (64, 64, 64, 64, 0.0)]


def _kmeans_csv(path, order=("tuned_gs0", "tuned_gs1", "tuned_ls0", "tuned_ls1", "compute_time", "energy",
                             "iterations", "wait_after_run"), extra=None):
    cols = list(order) + list(extra or {})
    lines = [",".join(cols)]
    for gs0, gs1, ls0, ls1, t in KMEANS_ROWS:
        row = dict(tuned_gs0=gs0, tuned_gs1=gs1, tuned_ls0=ls0, tuned_ls1=ls1, compute_time=t, energy=1.5,
                   iterations=10, wait_after_run=0, **(extra or {}))
        lines.append(",".join(str(row[c]) for c in cols))
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return path


def test_taco_columns_in_any_order(tmp_path):
    path = tmp_path / "toy_other.csv"
    path.write_text(TACO_PERMUTED)
    t = read_taco_csv(path)
    assert t.params == ("permutation", "omp_scheduling_type", "chunk_size")     # metadata by name
    assert t.metadata["columns"] == ["repeats", "wait_after_run", "iterations"]
    rec = t.lookup({"chunk_size": 16, "omp_scheduling_type": 0, "permutation": [4, 3, 2, 0, 1]})
    assert rec.value == 0.1 and rec.simulated_s == pytest.approx(5.0)          # 100 ms
    named = read_taco_csv(path, params=["chunk_size", "omp_scheduling_type", "permutation"])
    assert named.params == ("chunk_size", "omp_scheduling_type", "permutation")   # the kernel's order
    assert named.lookup({"chunk_size": 16, "omp_scheduling_type": 1, "permutation": [0, 1, 2, 3, 4]}).value == 0.05


def test_kernel_columns_are_parameters_and_the_rest_metadata(tmp_path):
    path = _kmeans_csv(tmp_path / "k.csv.gz", order=("compute_time", "tuned_ls1", "energy", "tuned_gs0",
                                                     "wait_after_run", "tuned_ls0", "iterations", "tuned_gs1"),
                       extra={"hostname": "nodeA", "power_w": 250})
    names = [p.name for p in BENCHMARKS["rise_kmeans"].params]
    t = read_rise_csv(path, params=names)
    assert t.params == tuple(names) and len(t) == 4
    assert set(t.metadata["columns"]) == {"energy", "wait_after_run", "iterations", "hostname", "power_w"}
    assert t.lookup({"tuned_gs0": 1024, "tuned_gs1": 4, "tuned_ls0": 16, "tuned_ls1": 4}).value == 2.9 / 1000


@pytest.mark.parametrize("header, message", [
    ("tuned_gs0,tuned_gs1,tuned_ls0,compute_time\n", r"missing column\(s\) \['tuned_ls1'\]; give a table"),
    ("tuned_v3,tuned_gs0,tuned_gs1,tuned_ls0,compute_time\n",
     r"missing column\(s\) \['tuned_ls1'\], unexpected column\(s\) \['tuned_v3'\]"),
    ("tuned_gs0,tuned_gs1,tuned_ls0,tuned_ls1\n", "no 'compute_time' column"),
    ("tuned_gs0,tuned_gs0,tuned_gs1,tuned_ls0,tuned_ls1,compute_time\n", "appear more than once"),
])
def test_missing_or_unexpected_columns_are_one_line_errors(tmp_path, header, message):
    path = tmp_path / "bad.csv"
    path.write_text(header)
    names = [p.name for p in BENCHMARKS["rise_kmeans"].params]
    with pytest.raises(ValueError, match=message) as exc:
        read_rise_csv(path, params=names)
    assert "\n" not in str(exc.value)


def test_a_file_gets_its_kernels_space_whatever_its_name(tmp_path):
    path = _kmeans_csv(tmp_path / "kmeans_on_a_laptop.csv.gz",
                       order=("tuned_ls1", "energy", "tuned_gs0", "iterations", "tuned_ls0", "wait_after_run",
                              "tuned_gs1", "compute_time"))
    b = benchmark_from_file(path)
    assert b.name == "rise_kmeans:kmeans_on_a_laptop" and b.spec.sparse
    assert b.constraints == list(BENCHMARKS["rise_kmeans"].constraints)
    assert b.expert == dict(BENCHMARKS["rise_kmeans"].expert) and b.evaluate(b.expert) == 4.6 / 1000
    assert b.status({"tuned_gs0": 64, "tuned_gs1": 64, "tuned_ls0": 64, "tuned_ls1": 64}) == "failed"
    assert b.optimum == 2.9 / 1000
    # kmeans and stencil have the same parameters: a name that says neither needs the benchmark named
    anonymous = _kmeans_csv(tmp_path / "gpu2.csv.gz")
    with pytest.raises(ValueError, match=r"fit several kernels \(rise_kmeans, rise_stencil\)"):
        benchmark_from_file(anonymous)
    assert benchmark_from_file(anonymous, "rise_stencil").expert == dict(BENCHMARKS["rise_stencil"].expert)
    with pytest.raises(ValueError, match=r"not a rise_mm table: missing column\(s\) \['tuned_v3'"):
        benchmark_from_file(anonymous, "rise_mm")
    with pytest.raises(ValueError, match="Kernel Tuner cache"):
        benchmark_from_file(anonymous, "gemm_rtxtitan")


def _spmv_csv(path, threads):
    lines = ["omp_num_threads,chunk_size3,permutation,chunk_size,omp_dynamic,chunk_size2,omp_monotonic,"
             "omp_scheduling_type,omp_chunk_size,repeats,wait_between_repeats,wait_after_run,iterations,compute_time"]
    for i, n in enumerate(threads):
        lines.append(f'{n},2,"(2, 3, 1, 0, 4)",4,0,1,1,0,2,5,0,10,10,{1.0 + i}')
    path.write_text("\n".join(lines) + "\n")
    return path


def test_thread_counts_are_the_recorded_machines(tmp_path):
    odd = benchmark_from_file(_spmv_csv(tmp_path / "spmv_epyc96.csv", [3, 5, 7, 48, 95]))
    assert odd.name == "taco_spmv:spmv_epyc96"
    threads = odd.manipulator().parameter("omp_num_threads")
    assert list(threads.values) == [3, 5, 7, 48, 95]
    assert odd.rows_in_space() == (5, 5) and odd.constraints == list(BENCHMARKS["taco_spmv"].constraints)
    # SpMM and SDDMM keep CATBench's even-thread rule: odd counts lie outside their space
    spmm_cols = "chunk_size,unroll_factor,omp_chunk_size,omp_num_threads,omp_scheduling_type,omp_monotonic," \
                "omp_dynamic,permutation,compute_time"
    path = tmp_path / "spmm_odd.csv"
    path.write_text(spmm_cols + "\n" + "".join(f'16,1,2,{n},2,0,0,"(0, 1, 2, 3, 4)",{n}.0\n' for n in (3, 4, 6)))
    spmm = benchmark_from_file(path, "taco_spmm")
    assert list(spmm.manipulator().parameter("omp_num_threads").values) == [4, 6]
    assert spmm.rows_in_space() == (2, 2) and spmm.optimum == 0.004
    path.write_text(spmm_cols + "\n" + '16,1,2,1,2,0,0,"(0, 1, 2, 3, 4)",1.0\n')
    with pytest.raises(ValueError, match="no recorded omp_num_threads satisfies"):
        benchmark_from_file(path, "taco_spmm")
