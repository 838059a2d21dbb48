"""Tables from another machine (shipped tables perturbed: rows dropped, times scaled and noised,
columns reordered, files renamed, thread counts remapped) get the same space and constraints as
the shipped ones.  Skipped when ../shared is absent."""
import pytest
from other_machine import (KT_HUB, RISE_BACO, TACO_CACHE, needs_kt, needs_rise, needs_taco, perturb_csv,
                           perturb_kt_cache)

from tunerlib.replay.recorded import benchmark_from_file, load_benchmark
from tools.replay_problems import main as stats_main



def _space(bench):
    m = bench.manipulator()
    return [(n, repr(m.parameter(n))) for n in m.names], bench.constraints


@needs_taco
@pytest.mark.parametrize("kernel", ["spmm", "sddmm", "ttv"])
def test_taco_table_from_another_machine_has_the_same_space(tmp_path, kernel):
    shipped = load_benchmark(f"taco_{kernel}")
    path = perturb_csv(TACO_CACHE / f"{kernel}_7742.csv.gz", tmp_path / "other.csv.gz", seed=3)
    other = benchmark_from_file(path, f"taco_{kernel}")     # what taco_tuner.py --kernel K --data does
    assert other.name == f"taco_{kernel}:other" and _space(other) == _space(shipped)
    assert other.rows_in_space() == (len(other.table), len(other.table)) and 0 < len(other.table) < len(shipped.table)
    if kernel == "ttv":                                     # found from its columns alone
        assert _space(benchmark_from_file(path)) == _space(shipped)
    else:                                                   # spmm, sddmm and mttkrp share theirs ...
        with pytest.raises(ValueError, match="fit several kernels"):
            benchmark_from_file(path)
        named = path.rename(tmp_path / f"{kernel}_epyc.csv.gz")   # ... the file name tells them apart
        assert _space(benchmark_from_file(named)) == _space(shipped)


@needs_taco
def test_odd_thread_counts_lie_in_the_space(tmp_path):
    path = perturb_csv(TACO_CACHE / "spmv_7742.csv.gz", tmp_path / "spmv_96threads.csv.gz", seed=1,
                       threads=lambda t: t // 2 + 1)         # 2..65, odd counts included
    other = benchmark_from_file(path)
    threads = other.manipulator().parameter("omp_num_threads").values
    assert list(threads) == list(range(2, 66))
    assert other.rows_in_space() == (len(other.table),) * 2
    assert other.constraints == load_benchmark("taco_spmv").constraints


@needs_rise
def test_rise_table_from_another_gpu_keeps_constraints_expert_and_default(tmp_path):
    shipped = load_benchmark("rise_kmeans")
    path = perturb_csv(RISE_BACO / "kmeans_rtxtitan.csv.gz", tmp_path / "kmeans_a100.csv.gz", seed=2, scale=0.6)
    other = benchmark_from_file(path)
    assert _space(other) == _space(shipped) and other.spec.budgets == shipped.spec.budgets
    assert (other.expert, other.default) == (shipped.expert, shipped.default)
    assert other.feasible_count() == 3641 and other.rows_in_space() == (len(other.table),) * 2
    assert other.optimum == pytest.approx(0.6 * shipped.optimum, rel=0.06)


@needs_kt
def test_kernel_tuner_cache_from_another_gpu_keeps_its_restrictions(tmp_path):
    shipped = load_benchmark("conv_a4000")
    path = perturb_kt_cache(KT_HUB / "convolution_milo" / "A4000.trimmed.json.gz", tmp_path / "newgpu.json.gz")
    other = benchmark_from_file(path)
    assert other.name == "conv_a100:newgpu" and _space(other) == _space(shipped)
    assert other.feasible_count() == 4362 and other.rows_in_space() == (len(other.table),) * 2
    assert _space(benchmark_from_file(path, "conv_mi250x")) == _space(shipped)
    with pytest.raises(ValueError, match=r"not a gemm table: parameters missing \['MWG'"):
        benchmark_from_file(path, "gemm_rtxtitan")


@needs_rise
@needs_taco
def test_statistics_tool_on_tables_from_other_machines(tmp_path, capsys):
    spmm = perturb_csv(TACO_CACHE / "spmm_7742.csv.gz", tmp_path / "spmm_other.csv.gz")
    kmeans = perturb_csv(RISE_BACO / "kmeans_rtxtitan.csv.gz", tmp_path / "gpu2.csv.gz")
    assert stats_main([str(spmm), f"rise_kmeans={kmeans}"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["taco_spmm:spmm_other"][1] == rows["taco_spmm:spmm_other"][4]        # every row in the space
    assert rows["rise_kmeans:gpu2"][1] == rows["rise_kmeans:gpu2"][4] and rows["rise_kmeans:gpu2"][5] == "3641"
    assert stats_main([str(kmeans)]) == 2                    # kmeans or stencil? one line asks which
    err = capsys.readouterr().err.strip()
    assert "fit several kernels" in err and "\n" not in err
