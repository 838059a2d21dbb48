"""Tests of the HPVM2FPGA example (examples/hpvm2fpga): space description, model, command backend,
tuner.  The model is analytical, so everything here runs in well under a minute."""
import copy
import dataclasses
import importlib.util
import json
import math
import random
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
HPVM_DIR = REPO / "examples" / "hpvm2fpga"
sys.path.insert(0, str(HPVM_DIR))    # the tuner imports its sibling modules by name

import flow_command  # noqa: E402
import fpga_design  # noqa: E402
import fpga_model  # noqa: E402
import hpvm2fpga_tuner  # noqa: E402

_spec = importlib.util.spec_from_file_location("hpvm2fpga_bench", HPVM_DIR / "fpga_bench.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

DESIGN = fpga_design.load_design(fpga_design.EDGE_DETECTION)
RAW = json.loads(Path(fpga_design.EDGE_DETECTION).read_text())
NODES = ["GS", "LE", "CZC", "CG", "CMG", "RZC"]
UNROLL_PARAMS = [n for n, v in DESIGN.parameters() if len(v) > 2 or v != (0, 1)]
seeds = st.integers(0, 2**32 - 1)


def _random_cfg(seed: int) -> dict:
    return DESIGN.manipulator().random(random.Random(seed))


# ------------------------------------------------------------------------------ shipped space
def test_shipped_space_has_the_40_documented_parameters():
    params = dict(DESIGN.parameters())
    assert len(params) == 40 and len(DESIGN.manipulator()) == 40
    flags = {n for n, v in params.items() if v == (0, 1)}
    assert flags == ({f"{n}_LF" for n in NODES} | {f"{n}_BuffIn" for n in NODES} | {"TLP"}
                     | {"GS_Nd_F_LE", "LE_Nd_F_CZC", "CG_Nd_F_CMG", "CZC_Nd_F_RZC"})
    assert len(flags) == 17
    six = {n for n, v in params.items() if v == (1, 2, 4, 5, 8, 10)}
    assert len(six) == 11 and all(n.split("_")[1] in ("UnrollL0", "UnrollL1") for n in six)
    assert {n for n, v in params.items() if v == (1, 3)} == (
        {"CG_c_c_UnrollL2", "CG_c_c_UnrollL3"} | {f"CZC_c_c_UnrollL{i}" for i in range(2, 6)}
        | {f"LE_c_c_UnrollL{i}" for i in range(2, 6)})
    assert {n for n, v in params.items() if v == (1, 7)} == {"GS_c_c_UnrollL2", "GS_c_c_UnrollL3"}
    assert DESIGN.default == {n: v[0] for n, v in params.items()}        # the unoptimised design
    assert not DESIGN.manipulator().constraints                           # hidden constraints only


def test_shipped_default_and_expert_fit_and_expert_is_much_faster():
    default, expert = fpga_model.evaluate(DESIGN, DESIGN.default), fpga_model.evaluate(DESIGN, DESIGN.expert)
    assert default.fits and expert.fits
    assert expert.seconds < default.seconds / 100


def test_node_cycles_follow_the_documented_equations():
    # CMG, default: O = 512 rows; row_max I = 512, 512*512 loads at 2/cycle, D = 3 + 80;
    # merge I = 1, no loads, D = 3; nested (LF off): sum of max(O*I, mem) + O*D, + O*2 overhead
    cmg = DESIGN.node("CMG")
    expected = (max(512 * 512, 512 * 512 // 2) + 512 * 83) + (512 + 512 * 3) + 512 * 2
    assert fpga_model.node_cycles(DESIGN, cmg, DESIGN.default) == expected
    # LF on flattens: max(O * max I, mem) + sum D
    lf = fpga_design.config_from(DESIGN, {"CMG_LF": 1})
    assert fpga_model.node_cycles(DESIGN, cmg, lf) == 512 * 512 + 83 + 3
    # buffered + unrolled 8x8: compute 64*64 + 6 cycles, but streaming 1 MiB at 128 B/cycle takes longer
    fast = fpga_design.config_from(DESIGN, {"CMG_LF": 1, "CMG_BuffIn": 1, "CMG_UnrollL0": 8,
                                            "CMG_UnrollL1": 8})
    assert fpga_model.node_cycles(DESIGN, cmg, fast) == 1048576 // 128 + 80


def test_partial_unroll_costs_a_remainder_copy():
    gs = DESIGN.node("GS")
    by4 = fpga_model.node_resources(DESIGN, gs, fpga_design.config_from(DESIGN, {"GS_UnrollL0": 4}))
    by5 = fpga_model.node_resources(DESIGN, gs, fpga_design.config_from(DESIGN, {"GS_UnrollL0": 5}))
    conv, norm = gs.stages
    # 512 = 4 * 128 but not a multiple of 5: 5 lanes need 6 copies (one guarded remainder copy),
    # 4 lanes 4 copies; one more parallel load needs one more load unit (600 LUT)
    assert by5.lut - by4.lut == pytest.approx(2 * (conv.lut + norm.lut) + 600)
    assert by5.dsp - by4.dsp == conv.dsp + norm.dsp


# ------------------------------------------------------------------------------ model properties
@settings(max_examples=60, deadline=None)
@given(seed=seeds, pick=st.integers(0, 10**6))
def test_more_unrolling_never_slower_and_never_cheaper(seed, pick):
    cfg = _random_cfg(seed)
    name = UNROLL_PARAMS[pick % len(UNROLL_PARAMS)]
    values = dict(DESIGN.parameters())[name]
    higher = [v for v in values if v > cfg[name]]
    if not higher:
        cfg[name] = values[0]
        higher = list(values[1:])
    more = dict(cfg, **{name: higher[pick % len(higher)]})
    a, b = fpga_model.evaluate(DESIGN, cfg), fpga_model.evaluate(DESIGN, more)
    for node in DESIGN.nodes:
        assert fpga_model.node_cycles(DESIGN, node, more) <= fpga_model.node_cycles(DESIGN, node, cfg)
    if a.cycles is not None:
        assert b.cycles <= a.cycles
    for k in fpga_model.RESOURCES:
        assert b.used[k] >= a.used[k]
    assert b.used["dsp"] > a.used["dsp"] or b.used["lut"] > a.used["lut"]


@settings(max_examples=60, deadline=None)
@given(seed=seeds, which=st.sampled_from(NODES))
def test_loop_fusion_never_slower_nor_more_buffer(seed, which):
    cfg = _random_cfg(seed)
    off, on = dict(cfg, **{f"{which}_LF": 0}), dict(cfg, **{f"{which}_LF": 1})
    node = DESIGN.node(which)
    assert fpga_model.node_cycles(DESIGN, node, on) <= fpga_model.node_cycles(DESIGN, node, off)
    assert fpga_model.node_resources(DESIGN, node, on).bram <= fpga_model.node_resources(DESIGN, node, off).bram


@settings(max_examples=60, deadline=None)
@given(seed=seeds, which=st.sampled_from([f.param for f in DESIGN.fusions]))
def test_node_fusion_never_slower_sequentially_and_frees_buffers(seed, which):
    cfg = dict(_random_cfg(seed), TLP=0)
    off, on = dict(cfg, **{which: 0}), dict(cfg, **{which: 1})
    a, b = fpga_model.evaluate(DESIGN, off), fpga_model.evaluate(DESIGN, on)
    assert b.used["bram"] <= a.used["bram"]
    if a.cycles is not None and b.cycles is not None:
        assert b.cycles <= a.cycles
        assert len(b.kernels) <= len(a.kernels)


@settings(max_examples=60, deadline=None)
@given(seed=seeds)
def test_task_parallelism_never_slower_than_sequential(seed):
    cfg = _random_cfg(seed)
    seq, par = fpga_model.evaluate(DESIGN, dict(cfg, TLP=0)), fpga_model.evaluate(DESIGN, dict(cfg, TLP=1))
    if seq.cycles is not None:
        assert par.cycles <= seq.cycles
    assert par.used["bram"] >= seq.used["bram"]            # ping-pong FIFOs


def test_task_parallelism_overlaps_the_two_branches():
    cfg = dict(DESIGN.expert)
    seq, par = fpga_model.evaluate(DESIGN, dict(cfg, TLP=0)), fpga_model.evaluate(DESIGN, dict(cfg, TLP=1))
    assert par.cycles < 0.8 * seq.cycles


def test_illegal_node_fusion_cycle_is_infeasible():
    cfg = fpga_design.config_from(DESIGN, {"GS_Nd_F_LE": 1, "LE_Nd_F_CZC": 1, "CZC_Nd_F_RZC": 1})
    report = fpga_model.evaluate(DESIGN, cfg)
    assert not report.fits and "cycle" in report.reason and report.cycles is None
    result = hpvm2fpga_tuner.model_result(DESIGN, cfg)
    assert result.state == "INFEASIBLE" and "cycle" in result.extra["reason"]


def test_tiny_device_makes_big_unrolls_infeasible():
    tiny = dataclasses.replace(DESIGN, device=dataclasses.replace(DESIGN.device, lut=60000, ff=120000,
                                                                   dsp=60, bram=300))
    assert fpga_model.evaluate(tiny, tiny.default).fits
    big = {n: v[-1] for n, v in DESIGN.parameters()}
    big.update(GS_Nd_F_LE=0)                                # keep the fusion legal
    report = fpga_model.evaluate(tiny, big)
    assert not report.fits and "dsp" in report.overflow and "lut" in report.overflow
    result = hpvm2fpga_tuner.model_result(tiny, big)
    assert result.state == "INFEASIBLE" and "dsp" in result.extra["overflow"]
    assert result.extra["util_dsp"] > 1 and "does not fit" in result.extra["reason"]
    gs_big = fpga_design.config_from(DESIGN, {"GS_c_c_UnrollL2": 7, "GS_c_c_UnrollL3": 7,
                                              "GS_UnrollL0": 10, "GS_UnrollL1": 10})
    assert fpga_model.evaluate(DESIGN, gs_big).overflow            # too big even for the real device


# ------------------------------------------------------------------------------ JSON validation
def _mutated(path, value):
    data = copy.deepcopy(RAW)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


_DELETE = object()
BAD = [
    (("device",), _DELETE, "device: missing"),
    (("device", "dsp"), -3, "device.dsp: must be a number > 0"),
    (("nodes", 0, "outer_loops", 0, "trip"), 0, "nodes[0].outer_loops[0].trip: must be an integer >= 1"),
    (("nodes", 1, "stages", 0, "trips"), 3, "nodes[1].stages[0].trips: unknown field"),
    (("nodes", 0, "outer_loops", 1, "unroll", "values"), [4, 2], "distinct and increasing"),
    (("nodes", 0, "stages", 0, "loops", 0, "unroll", "values"), [1, 8], "exceeds the trip count 7"),
    (("nodes", 2, "name"), "LE", "nodes: 'LE' appears twice"),
    (("nodes", 2, "name"), "2x", "nodes[2].name: must be an identifier"),
    (("edges", 0, "to"), "XX", "edges[0].to: unknown node"),
    (("edges", 0, "from"), "RZC", "cycle"),
    (("node_fusion", 0, "to"), "RZC", "node_fusion[0]: no edge GS -> RZC"),
    (("node_fusion", 1, "param"), "GS_LF", "'GS_LF' appears twice"),
    (("expert", "GS_LF"), 2, "expert.GS_LF: 2 is not one of [0, 1]"),
    (("expert", "XYZ"), 1, "expert.XYZ: not a parameter of this space"),
    (("format",), "v9", "unsupported format"),
    (("constraints",), ["GS_UnrollL0 *"], "constraints[0]"),
    (("nodes", 0, "input_buffering"), {"param": "B"}, "input_buffering.bytes: missing"),
]


@pytest.mark.parametrize("path,value,expected", BAD, ids=[e for _, _, e in BAD])
def test_bad_descriptions_give_one_line_errors(path, value, expected):
    with pytest.raises(fpga_design.SpaceError) as info:
        fpga_design.parse_design(_mutated(path, value), "my.json")
    message = str(info.value)
    assert expected in message and message.startswith("my.json: ") and "\n" not in message
    assert "; " in message                                       # problem; fix


def test_unreadable_and_invalid_files(tmp_path):
    with pytest.raises(fpga_design.SpaceError, match="cannot read space description"):
        fpga_design.load_design(str(tmp_path / "absent.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",\n "nodes": [}')
    with pytest.raises(fpga_design.SpaceError, match="invalid JSON at line 2"):
        fpga_design.load_design(str(bad))


def test_declared_known_constraints_are_used():
    design = fpga_design.parse_design(dict(RAW, constraints=["GS_UnrollL0 * GS_UnrollL1 <= 16"]))
    m = design.manipulator()
    assert len(m.constraints) == 1
    assert not m.is_feasible(fpga_design.config_from(design, {"GS_UnrollL0": 8, "GS_UnrollL1": 4}))
    assert m.is_feasible(design.expert)


@st.composite
def descriptions(draw):
    """Small valid descriptions: a chain of 1-3 nodes with random loops and flags."""
    n = draw(st.integers(1, 3))
    nodes = []
    for i in range(n):
        trip = draw(st.integers(1, 64))
        values = sorted(draw(st.sets(st.integers(1, trip), min_size=1, max_size=4)))
        loop = {"name": "L0", "trip": trip, "unroll": {"param": f"N{i}_U0", "values": values}}
        inner = {"name": "L1", "trip": draw(st.integers(1, 9))}
        node = {"name": f"N{i}", "outer_loops": [loop], "input_bytes": draw(st.integers(0, 10**6)),
                "stages": [{"name": "s", "loops": [inner], "lut": draw(st.integers(0, 500)),
                            "dsp": draw(st.integers(0, 4)), "loads": draw(st.integers(0, 3)), "depth": 4}]}
        if draw(st.booleans()):
            node["input_buffering"] = {"param": f"N{i}_B", "bytes": draw(st.integers(1, 10**5))}
        if draw(st.booleans()):
            node["loop_fusion"] = {"param": f"N{i}_LF"}
        nodes.append(node)
    edges = [{"from": f"N{i}", "to": f"N{i + 1}", "bytes": 1024, "fifo_bytes": 4096} for i in range(n - 1)]
    fusion = [{"param": f"F{i}", "from": e["from"], "to": e["to"]} for i, e in enumerate(edges)
              if draw(st.booleans())]
    data = {"name": "gen", "device": RAW["device"], "nodes": nodes, "edges": edges, "node_fusion": fusion}
    if draw(st.booleans()):
        data["task_parallelism"] = {"param": "TLP"}
    return data


@settings(max_examples=60, deadline=None)
@given(data=descriptions(), seed=seeds)
def test_valid_descriptions_round_trip(data, seed):
    design = fpga_design.parse_design(json.loads(json.dumps(data)))
    expected = sum(1 + ("input_buffering" in nd) + ("loop_fusion" in nd) for nd in data["nodes"])
    expected += len(data["node_fusion"]) + ("task_parallelism" in data)
    assert len(design.parameters()) == expected
    assert fpga_design.parse_design(copy.deepcopy(data)).parameters() == design.parameters()
    cfg = design.manipulator().random(random.Random(seed))
    report = fpga_model.evaluate(design, cfg)
    assert report.cycles > 0 and all(v >= 0 for v in report.used.values())
    assert fpga_model.evaluate(design, design.default).fits


# ------------------------------------------------------------------------------ command backend
FLOW = textwrap.dedent("""
    import json, os, sys, time
    mode, path = sys.argv[1], sys.argv[-1]
    cfg = json.load(open(path))
    assert json.loads(sys.stdin.read()) == cfg, "stdin and {config} differ"
    print("synthesising ...")
    if mode == "fits":
        print(json.dumps({"exec_time": 1.0 / (1 + cfg["GS_UnrollL0"]), "fits": True, "lut_util": 0.5,
                          "args": sys.argv[2:-1], "nested": {"dropped": 1}}))
    elif mode == "nofit":
        print(json.dumps({"fits": False, "overflow": "dsp"}))
    elif mode == "exit":
        print("Error: place and route failed", file=sys.stderr); sys.exit(3)
    elif mode == "garbage":
        print("exec time: fast")
    elif mode == "workdir":
        wd = sys.argv[2]
        open(os.path.join(wd, "out.txt"), "w").write("x")
        print(json.dumps({"exec_time": 2.0, "fits": True, "wd": wd, "listed": ",".join(sorted(os.listdir(wd)))}))
    elif mode == "sleep":
        time.sleep(30)
""")


@pytest.fixture
def flow(tmp_path):
    script = tmp_path / "flow.py"
    script.write_text(FLOW)
    return lambda mode, *mid: flow_command.parse_template(
        f"{sys.executable} {script} {mode} {' '.join(mid)} {{config}}")


def test_flow_that_fits(flow):
    cfg = dict(DESIGN.default, GS_UnrollL0=4)
    r = flow_command.run_flow(flow("fits", "'a b'", "x={config}", "';rm -rf /'"), cfg, 30)
    assert r.state == "OK" and r.time == pytest.approx(0.2)
    assert r.extra["lut_util"] == 0.5 and r.extra["flow_seconds"] >= 0
    assert "nested" not in r.extra and "args" not in r.extra      # only JSON scalars are kept


def test_flow_arguments_are_substituted_per_argument_without_a_shell(flow):
    template = flow("fits", "'a b'", "x={config}", "';rm -rf /'")
    assert template[3:6] == ["a b", "x={config}", ";rm -rf /"]
    argv = flow_command.build_argv(template, "/tmp/c.json", "/tmp/w")
    assert argv[3:] == ["a b", "x=/tmp/c.json", ";rm -rf /", "/tmp/c.json"]


@pytest.mark.parametrize("mode,state,reason", [
    ("nofit", "INFEASIBLE", "does not fit"),
    ("exit", "INFEASIBLE", "exited with code 3"),
    ("garbage", "INFEASIBLE", "unparsable flow output: last line is not JSON"),
])
def test_failing_flows_are_infeasible(flow, mode, state, reason):
    r = flow_command.run_flow(flow(mode), DESIGN.default, 30)
    assert r.state == state and reason in r.extra["reason"]
    if mode == "exit":
        assert "place and route failed" in r.extra["stderr_tail"]
    if mode == "nofit":
        assert r.extra["overflow"] == "dsp"


def test_flow_timeout(flow):
    r = flow_command.run_flow(flow("sleep"), DESIGN.default, 0.5)
    assert r.state == "TIMEOUT" and "timeout" in r.extra["reason"] and r.extra["flow_seconds"] < 10


def test_workdir_is_fresh_and_removed_unless_kept(flow, tmp_path):
    r = flow_command.run_flow(flow("workdir", "{workdir}"), DESIGN.default, 30)
    assert r.state == "OK" and r.extra["listed"] == "config.json,out.txt"
    assert not Path(r.extra["wd"]).exists()
    kept = flow_command.run_flow(flow("workdir", "{workdir}"), DESIGN.default, 30, str(tmp_path), True)
    assert Path(kept.extra["workdir"]).is_dir() and Path(kept.extra["wd"], "out.txt").exists()
    assert Path(kept.extra["wd"], "config.json").exists()


@pytest.mark.parametrize("template,message", [
    (None, "needs --cmd"), ("   ", "needs --cmd"), ("python 'unclosed", "fix the quoting"),
    ("{config} run", "cannot be a placeholder"), ("no-such-flow-xyz {config}", "not found"),
])
def test_bad_templates(template, message):
    with pytest.raises(flow_command.FlowError, match=message):
        flow_command.parse_template(template)


@pytest.mark.parametrize("stdout,message", [
    ("", "no output"), ("[1, 2]", "boolean \"fits\""), ('{"fits": "yes"}', "boolean \"fits\""),
    ('{"fits": true}', "exec_time"), ('{"fits": true, "exec_time": -1}', "exec_time"),
    ('{"fits": true, "exec_time": NaN}', "exec_time"),
])
def test_protocol_violations(stdout, message):
    with pytest.raises(ValueError, match=message):
        flow_command.parse_output(stdout)


def test_protocol_reads_the_last_line_only():
    t, fits, extra = flow_command.parse_output('{"fits": false}\nlog\n{"exec_time": 3, "fits": true, "x": "y"}\n\n')
    assert (t, fits, extra) == (3.0, True, {"x": "y"})


# ------------------------------------------------------------------------------ tuner end to end
def test_tuner_end_to_end_beats_the_default(tmp_path, capsys):
    summary = tmp_path / "s.json"
    assert hpvm2fpga_tuner.Hpvm2FpgaTuner.main([
        "--test-limit", "30", "--seed", "3", "--database", str(tmp_path / "t.db"), "--quiet",
        "--summary-json", str(summary)]) == 0
    out = capsys.readouterr().out
    assert "analytical model estimates, not measurements" in out and "tunerlib best" in out
    best = json.loads(summary.read_text())["best_value"]
    default = fpga_model.evaluate(DESIGN, DESIGN.default).seconds
    assert best < default / 10
    assert "expert" in out and "changes from the default design" in out


def test_tuner_is_deterministic_given_the_seed(tmp_path):
    def best(i):
        path = tmp_path / f"s{i}.json"
        assert hpvm2fpga_tuner.Hpvm2FpgaTuner.main([
            "--test-limit", "25", "--seed", "7", "--database", str(tmp_path / f"t{i}.db"), "--quiet",
            "--technique", "UniformGreedyMutation", "--summary-json", str(path)]) == 0
        return json.loads(path.read_text())["best_configuration"]
    assert best(1) == best(2)


def test_tuner_command_backend_end_to_end(tmp_path, capsys):
    cmd = f"{sys.executable} {HPVM_DIR / 'model_flow.py'} {{config}}"
    assert hpvm2fpga_tuner.Hpvm2FpgaTuner.main([
        "--backend", "command", "--cmd", cmd, "--test-limit", "6", "--seed", "1",
        "--database", str(tmp_path / "t.db"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "measured by --cmd" in out and "default" in out


@pytest.mark.parametrize("args,message", [
    (["--cmd", "python x.py"], "--cmd is only used with --backend command"),
    (["--backend", "command"], "needs --cmd"),
    (["--space", "/nonexistent/space.json"], "cannot read space description"),
    (["--backend", "command", "--cmd", "python {config}", "--cmd-timeout", "0"], "must be > 0"),
])
def test_tuner_option_errors_are_one_line(tmp_path, capsys, args, message):
    code = hpvm2fpga_tuner.Hpvm2FpgaTuner.main(args + ["--test-limit", "1", "--database",
                                                       str(tmp_path / "t.db")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------ benchmark problem
def test_make_problem():
    p = bench.make_problem()
    assert {"manipulator", "evaluate", "expert", "default", "budget"} <= set(p)
    m1, m2 = p["manipulator"](), p["manipulator"]()
    assert m1 is not m2 and len(m1) == 40
    assert p["evaluate"](p["default"]) == pytest.approx(fpga_model.evaluate(DESIGN, DESIGN.default).seconds)
    assert p["evaluate"](p["expert"]) < p["evaluate"](p["default"])
    big = {n: v[-1] for n, v in DESIGN.parameters()}
    assert p["evaluate"](big) is None
    assert p["budget"] == 400
    assert math.isfinite(p["evaluate"](m1.random(random.Random(0))) or 0.0)
