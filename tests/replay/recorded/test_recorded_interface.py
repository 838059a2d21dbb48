"""RecordedInterface (ReplayInterface over the recorded benchmarks), replay_result on a Kernel Tuner
cache and tools/replay_problems: synthetic tables, then rise_kmeans end to end."""
import os
import gzip
import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from replaycheck import assert_replay_outcomes, run_through_ask_tell
from tunerlib import TuningRunManager, tune_function
from tunerlib.replay import replay_result
from tunerlib.replay.recorded import (RecordedInterface, RecordedOptions, benchmark_from_file, load_benchmark,
                                     shared_folder)
from tools.replay_problems import main as replay_stats_main
from tools.replay_problems import main_effects, neighbourhood_best, problem_stats, replay_problems

SHARED = Path(os.environ["TUNERLIB_SHARED_DIR"])   # tests/conftest.py: ../shared unless set
needs_shared = pytest.mark.skipif(not (SHARED / "data" / "gpu_cache").is_dir(),
                                  reason=f"shared replay data not found under {SHARED}")


def _cache(tmp_path: Path) -> Path:
    """A tiny Kernel Tuner cache: x in 1..8, y in {0, 1}; x=8 absent, (4, 1) failed."""
    cache = {}
    for x in (1, 2, 4):
        for y in (0, 1):
            t = "RuntimeFailedConfig" if (x, y) == (4, 1) else float(10 - x - y)
            cache[f"{x},{y}"] = {"x": x, "y": y, "time": t, "compile_time": 500.0, "benchmark_time": 500.0}
    data = {"tune_params_keys": ["x", "y"], "tune_params": {"x": [1, 2, 4, 8], "y": [0, 1]}, "cache": cache}
    path = tmp_path / "tiny.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


def test_replay_result_outcomes(tmp_path):
    assert_replay_outcomes(benchmark_from_file(_cache(tmp_path)), "RuntimeFailedConfig", seconds=7.0 / 1000)


def test_interface_counts_outcomes_through_ask_tell(tmp_path):
    options = RecordedOptions(data=str(_cache(tmp_path)), database=str(tmp_path / "r.db"), seed=4,
                            test_limit=8, quiet=True)
    interface = RecordedInterface(options)
    assert interface.program_name() == "replay-tiny"
    summary = run_through_ask_tell(interface, options)
    stats = interface.stats
    assert stats.evaluations == summary.tests == 8      # the space has 8 configurations
    assert (stats.ok, stats.failed, stats.not_measured) == (5, 1, 2)
    assert stats.simulated_s == pytest.approx(6.0)
    assert summary.best_value == 6.0 / 1000 and summary.best_configuration == {"x": 4, "y": 0}   # 6 ms
    assert "2 not measured" in stats.render()


def test_main_runs_and_reports_bad_arguments(tmp_path, capsys):
    db = str(tmp_path / "m.db")
    assert RecordedInterface.main(["--data", str(_cache(tmp_path)), "--test-limit", "5", "--database", db,
                                 "--display-frequency", "0", "--seed", "1"]) == 0
    assert "replay: 5 evaluations" in capsys.readouterr().out
    assert RecordedInterface.main(["--database", db]) == 2
    assert "--benchmark NAME" in capsys.readouterr().err
    assert RecordedInterface.main(["--benchmark", "nope", "--database", db]) == 2
    assert "unknown replay benchmark 'nope'" in capsys.readouterr().err
    assert RecordedInterface.main(["--data", str(tmp_path / "missing.json"), "--database", db]) == 2


def test_table_space_proposes_only_recorded_configurations(tmp_path):
    bench = benchmark_from_file(_cache(tmp_path))
    assert bench.manipulator().search_space_size() == 8
    space = bench.manipulator(table_space=True)
    rng = random.Random(0)
    assert {(c["x"], c["y"]) for c in (space.random(rng) for _ in range(200))} == \
        {(x, y) for x in (1, 2, 4) for y in (0, 1)}
    options = RecordedOptions(data=str(_cache(tmp_path)), database=str(tmp_path / "t.db"), seed=4,
                            test_limit=8, quiet=True, table_space=True)
    interface = RecordedInterface(options)
    manager = TuningRunManager(interface, options)
    while (desired := manager.get_next_desired_result()) is not None:
        manager.report_result(desired, interface.run(desired, None, None))
    manager.finish()
    stats = interface.stats
    assert stats.not_measured == 0 and (stats.ok, stats.failed) == (5, 1)   # the 6 recorded, once each


def test_replay_problems_without_shared_data(tmp_path):
    assert replay_problems(tmp_path) == {}
    with pytest.raises(FileNotFoundError, match="not found"):
        replay_problems(tmp_path, names=["rise_kmeans"])
    with pytest.raises(KeyError, match="unknown replay benchmark"):
        replay_problems(tmp_path, names=["nope"])


# ------------------------------------------------------------------------------- shared data
@needs_shared
def test_tune_function_pure_random_on_rise_kmeans():
    p = replay_problems(SHARED, names=["rise_kmeans"])["rise_kmeans"]
    assert p.budgets == [20, 50, 60, 100] and not p.sparse and p.optimum == pytest.approx(2.885664e-3)
    run = tune_function(p.manipulator(), p.evaluate, test_limit=30, technique=["PureRandom"], seed=1)
    assert len(run.values) == 30 and run.summary.tests == 30
    assert p.optimum <= run.best_at(30) < 10 * p.optimum
    assert all(math.isinf(v) or v >= p.optimum for v in run.values)
    again = tune_function(p.manipulator(), p.evaluate, test_limit=30, technique=["PureRandom"], seed=1)
    assert again.values == run.values                   # deterministic replay


@needs_shared
def test_table_space_problem_on_a_sparse_table():
    problems = replay_problems(SHARED, names=["taco_spmm", "taco_spmm@table"])
    full, table = problems["taco_spmm"], problems["taco_spmm@table"]
    assert full.sparse and not table.sparse and table.optimum == full.optimum
    space, rng = table.manipulator(), random.Random(1)
    assert all(table.status(space.random(rng)) != "not_measured" for _ in range(50))
    run = tune_function(table.manipulator(), table.evaluate, test_limit=30, technique=["PureRandom"], seed=1)
    assert table.optimum <= run.best_at(30) < math.inf
    stats = problem_stats(table)
    assert stats["table"] and stats["feasible_space"] == stats["feasible_rows"] <= stats["configs"]
    # near-optimal rows, counted by brute force over the records (every spmm row lies in the space)
    values = [r.value for _, r in table.benchmark.table.items() if r.ok]
    for factor, key in ((1.05, "within_5pc"), (1.10, "within_10pc")):
        assert stats[key] == sum(v <= factor * table.optimum for v in values) >= 1
    assert stats["random_draws_10pc"] == (stats["feasible_space"] + 1) / (stats["within_10pc"] + 1)
    assert problem_stats(full)["within_10pc"] == stats["within_10pc"]     # same rows, the whole space


@needs_shared
def test_interface_main_on_rise_kmeans(tmp_path, capsys):
    assert RecordedInterface.main(["--benchmark", "rise_kmeans", "--shared-dir", str(SHARED), "--test-limit", "30",
                                 "--technique", "PureRandom", "--seed", "2", "--database", str(tmp_path / "k.db"),
                                 "--display-frequency", "0", "--summary-json", str(tmp_path / "s.json")]) == 0
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["tests"] == 30 and 2.885664e-3 <= summary["best_value"] < 0.1     # seconds, not ms
    assert sum(summary["states"].values()) == 30
    out = capsys.readouterr().out
    assert "replay: 30 evaluations" in out and "table optimum 0.00288566 s" in out


@needs_shared
@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_replay_result_agrees_with_status_on_random_configs(seed):
    b = load_benchmark("rise_stencil", SHARED)
    cfg = b.manipulator().random(random.Random(seed))
    result, status = replay_result(b, cfg), b.status(cfg)
    assert (result.state == "OK") == (status == "ok")
    assert bool(result.extra.get("not_measured")) == (status == "not_measured")
    if status == "ok":
        assert result.time == b.evaluate(cfg) >= b.optimum


@needs_shared
def test_problem_set_names_and_flags():
    problems = replay_problems(SHARED)
    exhaustive = {"gemm_rtxtitan", "gemm_rtx3090", "conv_a100", "conv_a4000", "conv_mi250x", "dedisp_a100",
                  "dedisp_a4000", "dedisp_mi250x", "pnpoly_rtxtitan", "rise_kmeans", "rise_stencil"}
    sparse = {"rise_asum", "rise_mm", "rise_scal", "rise_harris", "taco_spmm", "taco_spmv", "taco_sddmm",
              "taco_ttv", "taco_mttkrp"}
    assert set(problems) == exhaustive | sparse
    assert {n for n, p in problems.items() if p.sparse} == sparse
    assert set(replay_problems(SHARED, include_sparse=False)) == exhaustive
    gemm = problems["gemm_rtxtitan"]
    assert gemm.optimum == pytest.approx(11.466165e-3) and gemm.budgets == [20, 50, 100]
    assert gemm.evaluate(gemm.benchmark.best_config) == gemm.optimum
    assert problems["rise_stencil"].expert_value == pytest.approx(1.452512e-3)
    stats = problem_stats(problems["pnpoly_rtxtitan"])
    assert (stats["configs"], stats["failed"], stats["feasible_space"]) == (4092, 342, 4092)


def test_without_a_shared_folder_the_catalogue_says_what_to_pass(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("TUNERLIB_SHARED_DIR")
    with pytest.raises(FileNotFoundError,
                       match=r"holding data/gpu_cache .*: pass --shared-dir DIR or set \$TUNERLIB_SHARED_DIR"):
        shared_folder()
    with pytest.raises(FileNotFoundError, match=r"pass --shared DIR or set \$TUNERLIB_SHARED_DIR"):
        shared_folder(None, "--shared DIR")
    assert shared_folder(tmp_path) == tmp_path
    with pytest.raises(FileNotFoundError, match="TUNERLIB_SHARED_DIR"):
        load_benchmark("rise_kmeans")
    assert RecordedInterface.main(["--benchmark", "rise_kmeans", "--database", str(tmp_path / "x.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert "pass --shared-dir DIR" in err and "TUNERLIB_SHARED_DIR" in err and "\n" not in err


@needs_shared
def test_neighbourhood_best_counts_only_rows_in_the_space():
    problems = replay_problems(SHARED, names=["rise_scal@table", "rise_stencil"])
    # rise_scal records rows that break its known constraints, some far faster than the optimum
    scal = problems["rise_scal@table"]
    outside = [r.value for k, r in scal.benchmark.table.items() if r.ok and r.value < scal.optimum]
    assert outside and neighbourhood_best(scal.benchmark) >= 1.0
    assert neighbourhood_best(problems["rise_stencil"].benchmark) == pytest.approx(1.0, abs=0.01)
    assert neighbourhood_best(scal.benchmark, max_changed=1) >= neighbourhood_best(scal.benchmark)   # fewer rows


def test_main_effects_are_per_value_medians_over_ok_rows(tmp_path, capsys):
    # x=1: 9, 8; x=2: 8, 7; x=4: 6 (its y=1 failed); y=0: 9, 8, 6; y=1: 8, 7 -- optimum 6
    effects = {e[0]: e[1:] for e in main_effects(benchmark_from_file(_cache(tmp_path)))}
    assert effects["x"] == (3, pytest.approx(1.0), pytest.approx(8.5 / 6), 4)
    assert effects["y"] == (2, pytest.approx(7.5 / 6), pytest.approx(8.0 / 6), 1)
    assert replay_stats_main([str(_cache(tmp_path)), "--effects"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("  x ") or line.startswith("  y ")]
    assert lines[0].split()[0] == "x" and "1.000x" in lines[0] and "1.417x" in lines[0]   # widest spread first
