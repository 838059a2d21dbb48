"""Tests of the RISE/ELEVATE example (examples/rise): spaces, kernels on OpenCL, replay, tuner.

OpenCL tests are skipped when pyopencl or an OpenCL device is missing (``pip install -e
'.[opencl]'`` gives PoCL's CPU device); replay tests are skipped when the recorded tables under
``../shared/data/gpu_cache`` are absent.  Sizes are tiny: program builds dominate.
"""
import importlib
import json
import os
import random
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
RISE_DIR = REPO / "examples" / "rise"
sys.path.insert(0, str(RISE_DIR))   # the tuner imports its sibling modules by name

import rise_bench  # noqa: E402
import rise_opencl  # noqa: E402
import rise_problems  # noqa: E402
import rise_spaces  # noqa: E402
import rise_tuner  # noqa: E402
import rise_worker  # noqa: E402
from tunerlib.parameters import ConfigurationManipulator  # noqa: E402
from tunerlib.replay.recorded import BENCHMARKS, shared_folder  # noqa: E402

KERNELS = rise_spaces.kernel_names()
#: tiny sizes: builds dominate, launches take microseconds
SMALL = {"mm": 64, "asum": 2 ** 12, "scal": 2 ** 12, "kmeans": 2 ** 10, "harris": 32, "stencil": 32}
QUICK = rise_opencl.repeat_policy(repeats=1, budget_s=0.01)


class Recorded:
    """RiseTuner, keeping the instances its main() made (for looking inside after a run)."""

    made = []

    @classmethod
    def main(cls, args):
        class Tuner(rise_tuner.RiseTuner):
            def __init__(self, options):
                super().__init__(options)
                cls.made.append(self)
        return Tuner.main(args)


def _opencl_device():
    try:
        cl = importlib.import_module("pyopencl")
    except ImportError:
        return None
    devices = rise_opencl.all_devices(cl)
    return devices[0][2] if devices else None


DEVICE = _opencl_device()
needs_opencl = pytest.mark.skipif(DEVICE is None, reason="pyopencl or an OpenCL device is missing "
                                                         "(pip install -e '.[opencl]'); OpenCL tests skipped")
RISE_DATA = shared_folder() / "data" / "gpu_cache" / "rise_baco"
needs_data = pytest.mark.skipif(not (RISE_DATA / "kmeans_rtxtitan.csv.gz").is_file(),
                                reason=f"recorded GPU tables not found under {RISE_DATA}; replay tests skipped")


@pytest.fixture(scope="module")
def runner():
    return rise_opencl.OpenCLRunner("auto")


# ------------------------------------------------------------------------------ spaces
@pytest.mark.parametrize("units, mapped", [(2, {"expert, 2 work-groups": dict(ls0=32, ls1=32, gs0=64, gs1=32)}),
                                           (1024, {})])
def test_gpu_baselines_are_mapped_to_the_devices_compute_units(units, mapped):
    """The paper's GPU expert launches 1024 work-groups of 32x32 on stencil (1024);
    mapped to a device of 2 compute units it keeps its work-group shape and launches 2."""
    rows = rise_spaces.baselines("stencil", 1024, units)
    expert = rise_spaces.paper_config("stencil", "expert", 1024)
    assert rows["expert"] == expert and rise_spaces.work_groups(expert) == 1024
    assert {n: c for n, c in rows.items() if n.startswith("expert, ")} == mapped
    assert list(rows)[0] == "default" and ("default, 2 work-groups" in rows) == (units == 2)
    assert rise_spaces.machine_config("kmeans", rise_spaces.paper_config("kmeans", "expert", 2 ** 16), 2 ** 16, 4) is None
    scal = rise_spaces.baselines("scal", 2 ** 22, 2)
    assert scal["default"] is None and scal["expert, 2 work-groups"]["gs0"] == 512



@pytest.mark.parametrize("kernel", KERNELS)
def test_expert_satisfies_every_known_constraint(kernel):
    n = rise_spaces.KERNELS[kernel].default_size
    space = rise_spaces.build_space(kernel, n)
    expert = rise_spaces.paper_config(kernel, "expert", n)
    assert expert is not None
    space.validate(expert)
    assert all(c.is_satisfied(expert) for c in space.constraints)
    default = rise_spaces.paper_config(kernel, "default", n)
    assert (default is None) == (kernel in rise_spaces.NO_DEFAULT)
    # the recorded benchmark's own space accepts the paper's expert too
    spec = BENCHMARKS[f"rise_{kernel}"]
    replay_space = ConfigurationManipulator([p.build() for p in spec.params], spec.constraints)
    assert replay_space.is_feasible(spec.expert)


@pytest.mark.parametrize("kernel", KERNELS)
def test_paper_size_gives_the_papers_configurations(kernel):
    spec = rise_spaces.KERNELS[kernel]
    n = min(spec.paper_size, spec.max_size)
    assert rise_spaces.paper_config(kernel, "expert", n) == dict(spec.expert)
    if spec.default is not None:
        assert rise_spaces.paper_config(kernel, "default", n) == dict(spec.default)


def test_ranges_scale_with_the_problem_size():
    small, paper = rise_spaces.build_space("mm", 64), rise_spaces.build_space("mm", 1024)
    assert small.parameter("v5").values[-1] == 64 and paper.parameter("v5").values[-1] == 1024
    assert small.parameter("gs0").values[-1] == 64 and small.parameter("ls0").values[-1] == 64
    assert rise_spaces.build_space("asum", 2 ** 12).parameter("sp0").values[-1] == 2 ** 12
    assert rise_spaces.build_space("kmeans", 2 ** 10).parameter("gs0").values[-1] == 1024
    assert rise_spaces.paper_config("mm", "expert", 256)["gs0"] == 64          # 256 * 256 / 1024
    assert rise_spaces.paper_config("mm", "expert", 64) is None                 # v7 128 > 64
    assert "v7=128" in rise_spaces.why_no_config("mm", "expert", 64)
    assert rise_spaces.paper_config("mm", "expert", 128)["gs1"] == 16           # 128 * 128 / 1024
    assert rise_spaces.paper_config("asum", "default", 2 ** 20)["stride"] == 256


def test_known_constraints_reject_violations():
    space = rise_spaces.build_space("mm", 256)
    bad = dict(rise_spaces.paper_config("mm", "expert", 256), v5=256, v7=256, v8=64)
    assert "49152 - 4 * v5 * v7 - 4 * v5 * v8 - 4 * v7 * v8 >= 0" in space.violated_constraints(bad)
    harris = rise_spaces.build_space("harris", 512)
    assert not harris.is_feasible(dict(rise_spaces.paper_config("harris", "expert", 512), tileX=62))
    with pytest.raises(ValueError, match="power of two"):
        rise_spaces.resolve_size("mm", 100)


@settings(max_examples=60, deadline=None)
@given(log_sp0=st.integers(0, 12), data=st.data())
def test_asum_reorder_is_a_permutation(log_sp0, data):
    stride = 2 ** data.draw(st.integers(0, log_sp0))
    perm = rise_problems.asum_permutation(2 ** log_sp0, stride)
    assert sorted(perm.tolist()) == list(range(2 ** log_sp0))


@pytest.mark.parametrize("kernel", KERNELS)
def test_checks_accept_the_reference_and_reject_perturbations(kernel):
    p = rise_problems.make_problem(kernel, SMALL[kernel])
    cfg = rise_spaces.build_space(kernel, p.size).random(random.Random(3))
    if kernel == "kmeans":
        good = rise_problems.kmeans_distances(p).argmin(axis=1).astype(np.int32)
        bad = (good + 1) % rise_problems.K_CLUSTERS
    else:
        good = p.reference(cfg).astype(np.float32)
        bad = good + 0.01 * np.abs(good).max()
    assert p.check(good, cfg) is None
    assert "wrong output" in p.check(bad, cfg)
    if kernel != "kmeans":
        unwritten = good.copy()
        unwritten.reshape(-1)[0] = np.nan
        assert "non-finite" in p.check(unwritten, cfg)


# ------------------------------------------------------------------------------ OpenCL kernels
@needs_opencl
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernels_match_numpy_for_random_feasible_configs(runner, kernel):
    n = SMALL[kernel]
    problem = rise_problems.make_problem(kernel, n)
    space = rise_spaces.build_space(kernel, n)
    rng = random.Random(11)
    configs = [space.random(rng) for _ in range(4)]
    configs += [c for c in (rise_spaces.paper_config(kernel, w, n) for w in ("expert", "default")) if c]
    for cfg in configs:
        result = runner.evaluate(problem, cfg, QUICK)
        assert result.state == "OK", (cfg, result.extra)
        assert result.time > 0 and result.extra["compile_s"] >= 0 and result.extra["runs"] >= 1


@needs_opencl
def test_illegal_local_size_is_infeasible_with_the_opencl_message(runner):
    problem = rise_problems.make_problem("stencil", 32)
    too_big = 2 * DEVICE.max_work_group_size
    result = runner.evaluate(problem, dict(ls0=too_big, ls1=1, gs0=too_big, gs1=1), QUICK)
    assert result.state == "INFEASIBLE" and result.extra["phase"] == "launch"
    assert "INVALID_WORK_GROUP_SIZE" in result.extra["error"]
    assert "\n" not in result.extra["error"]


@needs_opencl
def test_build_failure_is_infeasible_phase_build(runner):
    problem = rise_problems.make_problem("scal", 2 ** 12)
    cfg = dict(rise_spaces.paper_config("scal", "expert", 2 ** 12), vec=5)      # no float5 in OpenCL
    result = runner.evaluate(problem, cfg, QUICK)
    assert result.state == "INFEASIBLE" and result.extra["phase"] == "build"
    assert "BUILD_PROGRAM_FAILURE" in result.extra["error"] or "build" in result.extra["error"].lower()


@needs_opencl
def test_wrong_output_is_an_error(runner):
    problem = rise_problems.make_problem("stencil", 32)
    cfg = rise_spaces.paper_config("stencil", "expert", 32)
    assert runner.evaluate(problem, cfg, QUICK).state == "OK"         # uploads the inputs
    problem.inputs[0] = problem.inputs[0] * 2                          # the host reference changes
    problem._reference = None
    result = runner.evaluate(problem, cfg, QUICK)
    assert result.state == "ERROR" and "wrong output" in result.extra["error"]


@needs_opencl
def test_programs_are_cached_by_source_and_options(runner):
    problem = rise_problems.make_problem("kmeans", 2 ** 10)
    cfg = rise_spaces.paper_config("kmeans", "expert", 2 ** 10)
    runner.evaluate(problem, cfg, QUICK)
    assert runner.evaluate(problem, cfg, QUICK).extra["build_s"] == 0.0


@needs_opencl
def test_isolated_runner_survives_timeouts_and_dead_children():
    runner = rise_worker.IsolatedRunner("auto", "stencil", 32, timeout_s=0.001)
    cfg = rise_spaces.paper_config("stencil", "expert", 32)
    try:
        timed_out = runner.evaluate(cfg, QUICK)                     # no answer within 1 ms
        assert timed_out.state == "TIMEOUT" and "killed" in timed_out.extra["error"]
        runner.timeout_s = 60.0
        assert runner.evaluate(cfg, QUICK).state == "OK" and runner.restarts == 1
        pid = runner.worker.pid
        os.kill(pid, signal.SIGKILL)                                 # a worker that died while idle
        runner.worker._proc.join(5)
        assert runner.evaluate(cfg, QUICK).state == "OK" and runner.restarts == 2
    finally:
        runner.close()


@needs_opencl
@pytest.mark.skipif(DEVICE is None or "Portable Computing Language" not in DEVICE.platform.name,
                    reason="the crash is specific to PoCL's CPU device (8 MiB thread stacks)")
def test_a_kernel_that_crashes_pocl_is_an_error_not_fatal():
    runner = rise_worker.IsolatedRunner("auto", "mm", 128, timeout_s=120)
    # 1024 work-items x 8 KiB private accumulators: PoCL overflows an 8 MiB thread stack (SIGSEGV)
    crash = dict(ls0=8, ls1=128, gs0=8, gs1=128, v3=64, v4=32, v5=128, v6=16, v7=64, v8=1)
    try:
        result = runner.evaluate(crash, QUICK)
        assert result.state == "ERROR" and result.extra["crashed"], result.extra   # the kit's state rule
        assert result.extra["error"] == "OpenCL process crashed (SIGSEGV)" and result.extra["phase"] == "launch"
        assert runner.evaluate(dict(crash, ls1=1, gs1=16), QUICK).state == "OK"
    finally:
        runner.close()


@needs_opencl
def test_tuner_end_to_end_opencl(tmp_path, capsys):
    args = ["--kernel", "stencil", "--size", "32", "--test-limit", "6", "--seed", "1", "--compare-rounds", "2",
            "--database", str(tmp_path / "t.db"), "--quiet"]
    assert Recorded.main(args) == 0
    out = capsys.readouterr().out
    assert "tunerlib best" in out and "expert" in out and "speed-up" in out and "time (s)" in out
    # fair baselines: the GPU expert as given and mapped to this device's compute units, the
    # speed-up stated over the stronger form
    units = Recorded.made[-1].runner.compute_units
    for name in rise_spaces.baselines("stencil", 32, units):
        assert any(line.lstrip().startswith(name + " ") for line in out.splitlines()), name
    assert f"vs the stronger form of each baseline ({units} compute units on this device): default " in out


@needs_opencl
def test_confirm_retimes_the_fastest_recorded_configurations(tmp_path, capsys, monkeypatch):
    """--confirm K: the K-1 fastest other OK configurations are re-timed with the best; when one of
    them is faster in the re-timing it is reported and written to --final-config."""
    from onebest import assert_one_best
    final, summary = tmp_path / "final.json", tmp_path / "summary.json"
    args = ["--kernel", "stencil", "--size", "32", "--test-limit", "8", "--seed", "3", "--compare-rounds", "2",
            "--confirm", "3", "--database", str(tmp_path / "t.db"), "--quiet", "--final-config", str(final),
            "--summary-json", str(summary),
            "--limit-multiplier", "1000"]   # microsecond kernels: a 2x limit makes most of them TIMEOUT
    real_compare = rise_worker.IsolatedRunner.compare
    seen = {}

    def compare(self, configs, rounds):
        seen.update(configs)
        timed = real_compare(self, configs, rounds)
        if "candidate 2" in timed:      # make the slower of the two candidates the fastest re-timed
            timed["candidate 2"] = (1e-9, "")
        return timed
    monkeypatch.setattr(rise_worker.IsolatedRunner, "compare", compare)
    assert Recorded.main(args) == 0
    tuner = Recorded.made[-1]
    recorded = sorted(tuner._ok.values(), key=lambda tc: tc[0])
    assert len(recorded) >= 3 and {"candidate 1", "candidate 2", rise_tuner.BEST} <= set(seen)
    assert seen["candidate 1"] == recorded[1][1] and seen["candidate 2"] == recorded[2][1]
    assert json.loads(final.read_text()) == recorded[2][1] == tuner.confirmed
    out = capsys.readouterr().out
    assert "another one is faster" in out
    # one best: the table's row, the summary, --summary-json, --final-config and the database agree
    (row,) = [line for line in out.splitlines()
              if line.lstrip().startswith(rise_tuner.BEST) and "vs the stronger" not in line]
    assert row.rstrip().endswith(rise_spaces.describe(tuner.confirmed)) and float(row.split()[2]) == 1e-9
    data = assert_one_best(summary, final, tmp_path / "t.db", tuner.confirmed, 1e-9)
    assert data["recorded_value"] == recorded[2][0] and data["retimed"]["search_best_was_another_configuration"]
    assert f"best configuration: {json.dumps(tuner.confirmed, sort_keys=True)}" in out


@needs_opencl
def test_bench_problem_for_compare(tmp_path):
    p = rise_bench.make_problem("stencil", 32)
    assert set(p) >= {"manipulator", "evaluate", "expert", "default", "budget"}
    assert p["budget"] == 60
    m = p["manipulator"]()
    assert m is not p["manipulator"]() and m.is_feasible(p["expert"])
    assert p["evaluate"](p["expert"]) > 0
    assert p["evaluate"](dict(p["expert"], ls0=3)) is None            # 32 % 3 != 0: launch fails
    assert rise_bench.make_problem("mm", 64)["expert"] is None


# ------------------------------------------------------------------------------ command line
def test_help_works_without_pyopencl(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyopencl", None)            # import pyopencl -> ImportError
    with pytest.raises(SystemExit) as exc:
        rise_tuner.RiseTuner.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for option in ("--kernel", "--backend", "--size", "--device", "--data", "--benchmark", "--repeats"):
        assert option in out
    with pytest.raises(rise_opencl.OpenCLUnavailable, match=r"pip install -e '\.\[opencl\]'"):
        rise_opencl.import_pyopencl()


def test_missing_pyopencl_is_a_one_line_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "pyopencl", None)
    assert rise_tuner.RiseTuner.main(["--kernel", "mm", "--database", str(tmp_path / "t.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pip install -e '.[opencl]'" in err


def test_bad_options_are_one_line_errors(tmp_path, capsys):
    db = str(tmp_path / "t.db")
    assert rise_tuner.RiseTuner.main(["--backend", "replay", "--data", str(tmp_path / "nope.csv"),
                                      "--database", db]) == 2
    assert "not found" in capsys.readouterr().err
    assert rise_tuner.RiseTuner.main(["--backend", "replay", "--benchmark", "nope", "--database", db]) == 2
    assert "unknown" in capsys.readouterr().err
    assert rise_tuner.RiseTuner.main(["--kernel", "mm", "--size", "100", "--database", db]) == 2
    assert "power of two" in capsys.readouterr().err


# ------------------------------------------------------------------------------ replay
@needs_data
def test_tuner_end_to_end_replay(tmp_path, capsys):
    args = ["--kernel", "kmeans", "--backend", "replay", "--test-limit", "6", "--seed", "2",
            "--database", str(tmp_path / "t.db"), "--quiet"]
    assert Recorded.main(args) == 0
    out = capsys.readouterr().out
    assert "replay: " in out and "evaluations (" in out and "simulated tuning time" in out
    assert "expert" in out and "default" in out and "tunerlib best" in out
    tuner = Recorded.made[-1]
    stats = tuner.replay.stats
    assert stats.evaluations == stats.ok + stats.failed + stats.not_measured == tuner.measured
    assert 1 <= stats.evaluations <= 6 and stats.simulated_s > 0      # duplicates are not looked up
    # deterministic given --seed
    assert rise_tuner.RiseTuner.main(args[:-3] + ["--database", str(tmp_path / "u.db"), "--quiet"]) == 0
    assert capsys.readouterr().out.split("tunerlib:")[0] == out.split("tunerlib:")[0]


@needs_data
def test_print_params_prints_no_comparison(tmp_path, capsys):
    args = ["--kernel", "stencil", "--backend", "replay", "--print-params", "--database", str(tmp_path / "t.db")]
    assert rise_tuner.RiseTuner.main(args) == 0
    out = capsys.readouterr().out
    assert "tuned_gs0" in out and "tunerlib best" not in out


@needs_data
def test_replay_counts_not_measured_apart(tmp_path):
    tuner = rise_tuner.RiseTuner(rise_tuner.RiseOptions(kernel="mm", backend="replay", whole_space=True))
    space = tuner.manipulator()
    rng = random.Random(5)
    results = [tuner.evaluate(space.random(rng)) for _ in range(30)]
    assert any(r.extra.get("not_measured") for r in results)
    assert all(r.state == "INFEASIBLE" for r in results if r.extra.get("not_measured"))
    assert tuner.replay.stats.not_measured == sum(1 for r in results if r.extra.get("not_measured"))
    expert = tuner.paper_configs()["expert"]
    rows = {name: (ms, why) for name, ms, why, _ in tuner.replay.comparison(expert)}
    assert set(rows) == {"default", "expert", "tunerlib best"}


@needs_data
def test_table_space_replays_only_recorded_configurations(tmp_path, capsys):
    args = ["--kernel", "mm", "--backend", "replay", "--table-space", "--test-limit", "15", "--seed", "1",
            "--database", str(tmp_path / "t.db"), "--quiet"]
    assert Recorded.main(args) == 0
    stats = Recorded.made[-1].replay.stats
    assert stats.evaluations == 15 and stats.not_measured == 0
    assert rise_tuner.RiseTuner.main(["--kernel", "mm", "--table-space", "--database", str(tmp_path / "u.db")]) == 2
    assert "add --backend replay" in capsys.readouterr().err
    # a sparse table is searched in its recorded configurations by default, and says so
    assert Recorded.main(args[:4] + args[5:]) == 0
    assert Recorded.made[-1].replay.stats.not_measured == 0
    assert "searched space: the table's" in capsys.readouterr().out
    assert Recorded.main(args[:4] + ["--whole-space"] + args[5:]) in (0, 1)   # 1: nothing measured
    assert Recorded.made[-1].replay.stats.not_measured > 0
    assert "the kernel's whole space" in capsys.readouterr().out
    assert rise_tuner.RiseTuner.main(args + ["--whole-space"]) == 2
    assert "exclude each other" in capsys.readouterr().err


@needs_data
def test_replay_kernel_tuner_cache(tmp_path, capsys):
    path = shared_folder() / BENCHMARKS["pnpoly_rtxtitan"].path
    if not path.is_file():
        pytest.skip(f"{path} not found")
    args = ["--backend", "replay", "--data", str(path), "--test-limit", "6", "--seed", "1",
            "--database", str(tmp_path / "t.db"), "--quiet"]
    assert rise_tuner.RiseTuner.main(args) == 0
    out = capsys.readouterr().out
    assert "pnpoly_rtxtitan" in out and "not documented" in out
