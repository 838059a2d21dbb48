"""Tests of the Halide schedule moves (examples/halide/moves.py) and of the benchmark's side-by-side
seed modes (tools/bench_halide.py).  The moves work on the schedule space alone; the test that runs
the tuner's default technique needs the ``halide`` package and is skipped without it."""
import importlib.util
import random
import sys
from pathlib import Path

import pytest

from tunerlib.techniques import Feedback

REPO = Path(__file__).resolve().parents[2]
HALIDE_DIR = REPO / "examples" / "halide"
sys.path.insert(0, str(HALIDE_DIR))


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


pipelines = _load("pipelines", HALIDE_DIR / "pipelines.py")
schedule = _load("schedule", HALIDE_DIR / "schedule.py")
moves = _load("moves", HALIDE_DIR / "moves.py")


def _bound(name: str, size: int = 256, seed: int = 0):
    spec = pipelines.PIPELINES[name]
    m = schedule.build_space(spec, size, size)
    tech = moves.ScheduleMoves()
    tech.bind(m, random.Random(seed))
    default = schedule.default_config(spec)
    tech.observe(Feedback(default, m.hash_config(default), 1.0, "ok", "seed", True))
    return spec, m, tech, default


def test_legal_orders_keep_inner_loops_inside_outer_ones():
    m = schedule.build_space(pipelines.PIPELINES["matmul"], 64, 64)
    assert len(moves.legal_orders(m.parameter("matmul_order"))) == 6
    orders = moves.legal_orders(m.parameter("prod_order"))
    assert len(orders) == 30
    assert all(o.index("xi") < o.index("xo") and o.index("yi") < o.index("yo") for o in orders)


def test_nothing_proposed_before_a_result():
    m = schedule.build_space(pipelines.PIPELINES["blur"], 64, 64)
    tech = moves.ScheduleMoves()
    tech.bind(m, random.Random(1))
    assert tech.desired_configuration() is None


@pytest.mark.parametrize("name", ["blur", "harris", "matmul"])
def test_proposals_are_feasible_and_new(name):
    _, m, tech, default = _bound(name)
    keys = {tech.schedule_key(default)}
    for _ in range(150):
        cfg = tech.desired_configuration()
        assert cfg is not None and m.is_feasible(cfg)
        key = tech.schedule_key(cfg)
        assert key not in keys
        keys.add(key)


@pytest.mark.parametrize("name", ["blur", "harris", "matmul"])
def test_one_move_makes_the_output_vectorised_tiled_and_parallel(name):
    """From the scalar default, one proposal changes vector width, tile width and parallel
    together, which one- or two-parameter mutation does not reach in one step."""
    spec, _, tech, _ = _bound(name, seed=3)
    out = spec.output_name
    hits = 0
    for _ in range(100):
        cfg = tech.desired_configuration()
        hits += (cfg[f"{out}_vectorize"] >= 4 and cfg[f"{out}_tile_x"] >= cfg[f"{out}_vectorize"]
                 and cfg[f"{out}_parallel"])
    assert hits >= 5


def test_moves_start_from_the_fastest_schedules():
    spec, m, tech, default = _bound("blur", seed=5)
    good = dict(default, blur_y_vectorize=8, blur_y_tile_x=8, blur_y_tile_y=8, blur_y_parallel=True)
    tech.observe(Feedback(good, m.hash_config(good), 0.1, "ok", "x", True))
    tech.p_best = 1.0
    for _ in range(30):
        cfg = tech.desired_configuration()
        changed = [k for k in good if cfg[k] != good[k]]
        assert 0 < len(changed) <= 12


def test_schedule_key_ignores_knobs_of_inlined_stages():
    _, _, tech, default = _bound("blur")
    assert default["blur_x_compute"] == "inline"
    other = dict(default, blur_x_tile_x=16, blur_x_vectorize=8)
    assert tech.schedule_key(other) == tech.schedule_key(default)
    assert tech.schedule_key(dict(default, blur_y_tile_x=16)) != tech.schedule_key(default)


def test_the_halide_tuner_runs_the_moves_in_its_default_bandit():
    pytest.importorskip("halide")
    halide_tuner = _load("halide_tuner", HALIDE_DIR / "halide_tuner.py")
    assert halide_tuner.MOVES_TECHNIQUE in halide_tuner.DEFAULT_TECHNIQUES
    opts = halide_tuner.HalideOptions.parse(["--pipeline", "blur", "--size", "32", "--baselines", "none",
                                             "--compile-timeout", "0"])
    tuner = halide_tuner.HalideTuner(opts)
    try:
        assert opts.technique == halide_tuner.DEFAULT_TECHNIQUES
    finally:
        tuner.close()
    opts = halide_tuner.HalideOptions.parse(["--pipeline", "blur", "--size", "32", "--baselines", "none",
                                             "--compile-timeout", "0", "--technique", "PureRandom"])
    tuner = halide_tuner.HalideTuner(opts)
    try:
        assert opts.technique == ["PureRandom"]
    finally:
        tuner.close()


def _fake_run(seed, mode, best, autos):
    return {"seed": seed, "seed_mode": mode, "tests": 200, "states": {}, "wall_s": 1.0, "recorded_best": best,
            "best": best, "baselines": {"default": 1.0, **autos}}


def test_bench_summarises_and_prints_both_seed_modes_side_by_side():
    from tools import bench_halide as bench
    names = ["default", "Adams2019", "Mullapudi2016"]
    rows = []
    for mode, bests in (("default", (0.3, 0.5)), ("templates", (0.2, 0.25))):
        runs = [_fake_run(i + 1, mode, b, {"Adams2019": 0.4, "Mullapudi2016": 0.25 if i else 0.5})
                for i, b in enumerate(bests)]
        rows.append(bench.summarise("blur", 1024, runs, names))
    assert rows[0]["seed_mode"] == "default"
    assert rows[0]["per_seed_vs_best_auto"] == pytest.approx([0.75, 2.0])
    assert rows[0]["best_auto_name"] in ("Adams2019", "Mullapudi2016")
    text = bench.render_side_by_side(rows)
    line = text.splitlines()[1]
    assert line.startswith("blur") and "1024" in line
    assert "0.75 2.00" in line and "0.50 1.00" in line        # per-seed ratios, both modes
    assert "search only (s)" in text and "with templates (s)" in text


def test_bench_runs_each_seed_mode_through_the_tuners_seeds_option(tmp_path, monkeypatch, capsys):
    from tools import bench_halide as bench
    seen = []

    class FakeBench:
        def __init__(self, halide_tuner, name, size, baseline_names, common):
            self.name, self.size = name, size or 64

        def run_seed(self, seed, test_limit, minutes, technique, workdir, seed_mode="templates"):
            seen.append((self.name, seed_mode, seed))
            return _fake_run(seed, seed_mode, 0.5 if seed_mode == "default" else 0.3, {"Adams2019": 0.4})

    monkeypatch.setattr(bench, "_import_example", lambda examples: None)
    monkeypatch.setattr(bench, "PipelineBench", FakeBench)
    assert bench.main(["--pipelines", "blur", "--seeds", "2", "--baselines", "none",
                       "--workdir", str(tmp_path)]) == 0
    assert seen == [("blur", "default", 1), ("blur", "default", 2), ("blur", "templates", 1),
                    ("blur", "templates", 2)]
    out = capsys.readouterr().out
    assert "--seeds default:" in out and "--seeds templates:" in out and "with templates (s)" in out


class _SleepyCompiled:
    """A compiled pipeline whose runs take the given seconds on a simulated clock (:meth:`clock`), so
    that the outcome does not depend on how busy the machine is (the first run, the check, is not here)."""

    def __init__(self, *seconds):
        self.seconds, self.calls, self.now = list(seconds), 0, 0.0

    def clock(self):
        return self.now

    def run(self):
        self.calls += 1
        self.now += self.seconds[min(self.calls, len(self.seconds)) - 1]


@pytest.mark.parametrize("first, warm, state, runs", [
    (0.05, (0.002,), "OK", None),           # cold check run over the limit, warm run under it: timed
    (0.05, (0.03, 0.02, 0.003), "OK", None),  # a noisy warm run, the third one under the limit
    (0.05, (0.03,), "TIMEOUT", 3),           # every warm run (the kit's WARM_TRIES) over the limit too
    (0.5, (0.002,), "TIMEOUT", 1),           # check run past 10x the limit (check_run_limit): no warm run
])
def test_a_cold_check_run_gets_warm_runs_before_timeout(first, warm, state, runs, monkeypatch):
    """The kit's rule (tunerlib.measure.time_after_check with the run's limit) as Halide applies it.
    Runs without the halide package too: ``finish`` needs only its exception class."""
    import sys
    import types
    if "halide" not in sys.modules:
        monkeypatch.setitem(sys.modules, "halide", types.SimpleNamespace(HalideError=RuntimeError))
    halide_measure = _load("halide_measure", HALIDE_DIR / "halide_measure.py")
    from tunerlib import measure as measure_kit
    from tunerlib.measure import TimingPolicy
    measurer = halide_measure.Measurer(None, None, None, TimingPolicy(warmup=0, min_runs=2, max_runs=3))
    compiled = _SleepyCompiled(*warm)
    monkeypatch.setattr(halide_measure, "clocked", lambda fn: measure_kit.clocked(fn, compiled.clock))
    res = measurer.finish(compiled, {"first_run_s": first}, limit=0.01)
    assert res.state == state
    if state == "OK":
        assert res.time < 0.01
    else:
        assert res.extra["runs"] == runs and compiled.calls == (runs if first < 0.1 else 0)


def test_bench_merges_json_files_of_several_commands(tmp_path, capsys):
    import json
    from tools import bench_halide as bench
    paths = []
    for i, seeds in enumerate(((1, 2), (3,))):
        runs = {"blur/default": [_fake_run(s, "default", 0.3, {"Adams2019": 0.4}) for s in seeds],
                "blur/templates": [_fake_run(s, "templates", 0.2, {"Adams2019": 0.4}) for s in seeds]}
        path = tmp_path / f"{i}.json"
        path.write_text(json.dumps({"summary": [{"pipeline": "blur", "size": 1024}], "runs": runs}))
        paths.append(str(path))
    rows, names = bench.merge_runs(paths)
    assert [(r["seed_mode"], r["seeds"]) for r in rows] == [("default", 3), ("templates", 3)]
    assert names == ["default", "Adams2019"]
    assert bench.main(["--merge", *paths]) == 0
    out = capsys.readouterr().out
    assert "0.75 0.75 0.75" in out and "0.50 0.50 0.50" in out


def test_moves_fall_back_to_greedy_mutation_on_other_spaces():
    from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
    m = ConfigurationManipulator()
    m.add_parameter(IntegerParameter("x", 0, 10))
    tech = moves.ScheduleMoves()
    tech.bind(m, random.Random(0))
    assert tech.stages == [] and 0 <= tech.desired_configuration()["x"] <= 10


def test_moves_pass_the_technique_conformance_kit():
    """On the kit's generic spaces the moves act as greedy mutation (registered with halide_tuner, they
    run in tests/techniques/test_conformance.py too)."""
    from tunerlib.techniques import register, registry
    from tunerlib.testing import check_technique
    if "HalideScheduleMoves" not in registry():     # as halide_tuner registers it
        register("HalideScheduleMoves", moves.ScheduleMoves, moves.ScheduleMoves.description)
    check_technique("HalideScheduleMoves", scale=0.3)
