"""The example benchmarks over seeds (taco_bench.py, rise_bench.py): every seed's best re-timed with the
baselines in interleaved rounds, the re-timing done in passes whose disagreement is the stated noise,
speed-ups over the stronger form of each baseline as median and range over the seeds."""
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "rise"))
sys.path.insert(0, str(REPO / "examples" / "taco"))

import rise_bench  # noqa: E402
import rise_spaces  # noqa: E402
import taco_bench  # noqa: E402
import taco_spaces  # noqa: E402


class FakeRunner:
    """Stands in for rise_worker.IsolatedRunner: each pass times every configuration from a table."""

    compute_units, device_name = 2, "fake device"

    def __init__(self, passes):
        self.passes, self.closed = iter(passes), False

    def compare(self, configs, rounds):
        times = next(self.passes)
        return {name: (times.get(name), None if name in times else "INFEASIBLE: no") for name in configs}

    def close(self):
        self.closed = True


def test_rise_bench_re_times_every_seeds_best_with_the_baselines_in_passes(monkeypatch):
    bests = {1: {"ls0": 8}, 2: {"ls0": 16}, 3: None}             # seed 3 found nothing
    monkeypatch.setattr(rise_bench, "tune_once", lambda kernel, size, seed, *a, **k: bests[seed])
    base = rise_spaces.baselines("stencil", 1024, 2)
    assert list(base) == ["default", "default, 2 work-groups", "expert", "expert, 2 work-groups"]
    fake = FakeRunner([{"default": 0.020, "default, 2 work-groups": 0.0015, "expert": 0.003,
                        "expert, 2 work-groups": 0.004, "seed 1": 0.0020, "seed 2": 0.0030},
                       {"default": 0.022, "default, 2 work-groups": 0.0012, "expert": 0.0032,
                        "expert, 2 work-groups": 0.004, "seed 1": 0.0025, "seed 2": 0.0030}])
    monkeypatch.setattr(rise_bench, "runner", lambda kernel, size, device: fake)
    logged = []
    row = rise_bench.bench_kernel("stencil", [1, 2, 3], 60, [], 5, 2, logged.append)
    assert fake.closed and row["best_s"] == [0.0020, 0.0030] and row["untimed"] == {}
    assert row["default_stronger"] == ["default, 2 work-groups", 0.0012]     # min over both passes
    assert row["expert_stronger"] == ["expert", 0.003]
    assert row["vs_expert"] == pytest.approx([1.5, 1.0]) and row["reached_expert"] == 2
    assert row["noise"]["seed 1"] == pytest.approx(0.25) and row["noise"]["expert, 2 work-groups"] == 0
    table = rise_bench.format_rows([row])
    assert "| stencil (1024, 60) | 0.001200 (2 work-groups) | 0.003000 (as given) |" in table
    assert "| 0.002500 (0.002000, 0.003000) | 0.50x (0.40-0.60x) | 1.25x (1.00-1.50x) | 2/2 |" in table
    assert table.endswith(" % / 25.0 % |")


def test_rise_bench_says_which_configurations_it_could_not_time(monkeypatch):
    monkeypatch.setattr(rise_bench, "tune_once", lambda kernel, size, seed, *a, **k: {"ls0": seed})
    fake = FakeRunner([{"expert": 0.003, "seed 1": 0.002}] * 2)
    monkeypatch.setattr(rise_bench, "runner", lambda kernel, size, device: fake)
    logged = []
    row = rise_bench.bench_kernel("stencil", [1], 60, [], 5, 2, logged.append)
    assert row["untimed"] == {"default": "INFEASIBLE: no", "default, 2 work-groups": "INFEASIBLE: no",
                              "expert, 2 work-groups": "INFEASIBLE: no"}
    assert "stencil default: not timed (INFEASIBLE: no)" in logged
    assert row["default_stronger"] is None and row["expert_stronger"] == ["expert", 0.003]


def test_rise_bench_command_line_rejects_bad_numbers(capsys):
    with pytest.raises(SystemExit):
        rise_bench.main(["--kernels", "stencil", "--passes", "0"])
    assert "--passes, --rounds and --budget must be >= 1" in capsys.readouterr().err


def test_taco_bench_re_times_in_passes_and_leaves_out_what_fails():
    try:
        evaluator = taco_bench.make_evaluator("ttv", dims=[20, 20, 20], density=0.05)
    except Exception as exc:                                        # no C compiler with OpenMP
        pytest.skip(f"no usable C compiler with OpenMP ({exc})")
    expert = taco_spaces.expert_config("ttv")
    configs = {"expert": expert, "illegal": dict(expert, permutation=[4, 3, 2, 1, 0])}
    untimed = {}
    per_pass = taco_bench.retime(evaluator, configs, rounds=2, passes=3, untimed=untimed)
    assert list(per_pass) == ["expert"] and len(per_pass["expert"]) == 3 and min(per_pass["expert"]) > 0
    assert list(untimed) == ["illegal"] and untimed["illegal"].startswith("INFEASIBLE: ")


def test_taco_bench_table_gives_ranges_and_noise():
    row = {"kernel": "spmv", "problem": "p", "threads": 2, "best_s": [0.6e-3, 0.8e-3],
           "default_s": {"default": 2e-3, "default, 2 threads": 1.2e-3},
           "expert_s": {"expert": 1.42e-3, "expert, 2 threads": 0.56e-3},
           "vs_default": [2.0, 1.5], "vs_expert": [0.56 / 0.6, 0.7], "reached_expert": 0,
           "noise": {"expert": 0.02, "seed 1": 0.10, "seed 2": 0.04}}
    table = taco_bench.format_rows([row])
    assert "| 1.75x (1.50-2.00x) | 0.82x (0.70-0.93x) | 0/2 | 4.0 % / 10.0 % |" in table
    assert "re-timing noise (median / max)" in table
    assert taco_bench.format_rows([dict(row, noise={})]).endswith("| 0/2 | - |")
    lost = dict(row, default_s={"default": 0.0866}, vs_default=[300.0, 400.0],       # mapped default failed
                untimed={"default, 2 threads": "TIMEOUT: run stopped"})
    table = taco_bench.format_rows([lost])
    assert "| 0.086600 / - |" in table
    assert "| 350.00x (300.00-400.00x) (over the form as given: the mapped one was not timed) |" in table
    assert "| 0.086600 / 0.086600 |" in taco_bench.format_rows([dict(lost, untimed={})])   # nothing mapped


def test_rise_bench_tunes_with_the_real_tuner(tmp_path):
    try:
        rise_bench.runner("stencil", 32).close()
    except Exception as exc:                                        # no pyopencl or OpenCL device
        pytest.skip(f"OpenCL unavailable ({exc})")
    best = rise_bench.tune_once("stencil", 32, 1, 4, [], str(tmp_path))
    assert rise_spaces.build_space("stencil", 32).is_valid(best)
    assert (tmp_path / "stencil-1.db").is_file()
