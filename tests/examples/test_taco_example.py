"""Tests of the TACO example (examples/taco): spaces, code generator, harness, readers, backends.

Every kernel here is really generated, compiled with the system C compiler (OpenMP) and checked
against scipy/numpy; the whole file is skipped when no C compiler with OpenMP is available.  The
``taco`` backend is exercised with fake ``taco`` executables (the real TACO is not installed).
"""
import gzip
import itertools
import json
import os
import random
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "taco"))

import taco_bench  # noqa: E402
import taco_codegen as codegen  # noqa: E402
import taco_harness as harness  # noqa: E402
import taco_inputs as inputs  # noqa: E402
import taco_loopnest as loopnest  # noqa: E402
import taco_spaces as spaces  # noqa: E402
import taco_tuner  # noqa: E402
from taco_backends import Evaluator  # noqa: E402
from taco_cli import schedule_string, taco_command  # noqa: E402
from taco_kernels import KERNEL_NAMES, KERNELS  # noqa: E402
from taco_fakes import QUICK, compiler, small_problem  # noqa: E402,F401  (compiler: a fixture)
from tunerlib.measure import stronger  # noqa: E402

try:
    harness.Compiler().check()
except harness.HarnessError as _exc:
    pytest.skip(f"no usable C compiler with OpenMP ({_exc}); TACO example tests skipped",
                allow_module_level=True)

SHARED = REPO.parent / "shared"
TACO_CACHE = SHARED / "data" / "taco_cache"
PERMS = [list(p) for p in itertools.permutations(range(5))]
@pytest.fixture(scope="module")
def evaluators(compiler):
    return {k: Evaluator(k, small_problem(k), "builtin", compiler, QUICK, 10.0) for k in KERNEL_NAMES}


# ------------------------------------------------------------------ spaces
def test_spaces_follow_the_baco_table():
    expected = {"spmm": ["chunk_size", "unroll_factor", "omp_chunk_size", "omp_num_threads"],
                "spmv": ["chunk_size", "chunk_size2", "chunk_size3", "omp_chunk_size", "omp_num_threads"],
                "ttv": ["chunk_size_fpos", "chunk_size_i", "chunk_size_k", "omp_chunk_size", "omp_num_threads"]}
    for kernel, names in expected.items():
        m = spaces.build_space(kernel)
        assert m.names == names + ["omp_scheduling_type", "permutation"]
    m = spaces.build_space("spmm")
    assert (m.parameter("chunk_size").min, m.parameter("chunk_size").max) == (2, 512)
    assert (m.parameter("omp_num_threads").min, m.parameter("omp_num_threads").max) == (1, 32)
    assert spaces.build_space("ttv").parameter("chunk_size_k").min == 1
    assert spaces.build_space("mttkrp").parameter("omp_num_threads").max == 64
    assert m.parameter("omp_scheduling_type").options == ["static", "dynamic"]
    assert len(spaces.build_space("ttv").constraints) == 0
    assert spaces.default_config("spmm")["chunk_size"] == 512 and spaces.default_config("ttv")["chunk_size_fpos"] == 2
    for kernel in KERNEL_NAMES:
        m = spaces.build_space(kernel)
        for cfg in (spaces.default_config(kernel), spaces.expert_config(kernel)):
            m.validate(cfg)
            assert m.is_feasible(cfg), (kernel, m.violated_constraints(cfg))
        assert spaces.expert_config(kernel)["omp_num_threads"] == 32


def test_known_constraints_are_the_tables():
    m = spaces.build_space("spmm", )
    base = spaces.expert_config("spmm")
    assert not m.is_feasible(dict(base, unroll_factor=16, chunk_size=16))        # unroll < chunk
    assert not m.is_feasible(dict(base, permutation=[2, 0, 1, 3, 4]))            # p_i0 < p_i2 broken
    assert m.is_feasible(dict(base, permutation=[1, 0, 3, 2, 4]))
    spmv = spaces.build_space("spmv")
    assert not spmv.is_feasible(dict(spaces.expert_config("spmv"), permutation=[0, 1, 2, 4, 3]))
    feasible = sum(spmv.is_feasible(dict(spaces.expert_config("spmv"), permutation=p)) for p in PERMS)
    assert feasible == 24
    sddmm = spaces.build_space("sddmm")
    ok = [p for p in PERMS if sddmm.is_feasible(dict(spaces.expert_config("sddmm"), permutation=p))]
    assert [0, 1, 4, 3, 2] in ok and [2, 0, 1, 3, 4] not in ok


@pytest.mark.parametrize("kernel", ["spmv", "spmm", "sddmm"])
def test_table_constraints_exclude_every_illegal_order(kernel):
    m = spaces.build_space(kernel)
    cfg = spaces.expert_config(kernel)
    for perm in PERMS:
        c = dict(cfg, permutation=perm)
        if m.is_feasible(c):
            codegen.generate(kernel, c)        # raises IllegalOrder if the generator cannot lower it


@pytest.mark.parametrize("kernel", KERNEL_NAMES)
def test_strict_orders_are_exactly_the_generable_orders(kernel):
    strict = spaces.build_space(kernel, strict_orders=True)
    plain = spaces.build_space(kernel)
    cfg = spaces.expert_config(kernel)
    legal = 0
    for perm in PERMS:
        c = dict(cfg, permutation=perm)
        try:
            codegen.generate(kernel, c)
            generable = True
        except loopnest.IllegalOrder as exc:
            generable = False
            assert "\n" not in str(exc) and "must lie inside" in str(exc)
        assert strict.is_feasible(c) == (generable and plain.is_feasible(c)), perm
        legal += generable
    assert legal == {"spmv": 30, "spmm": 40, "sddmm": 40, "ttv": 15, "mttkrp": 10}[kernel]


@settings(max_examples=60, deadline=None)
@given(st.permutations(list(range(5))))
def test_check_order_agrees_with_precedence_pairs(perm):
    nest = codegen.nest_for("ttv", spaces.expert_config("ttv"))
    order = [nest.loop_names[k] for k in perm]
    pairs = loopnest.precedence_pairs(nest)
    respects = all(order.index(a) < order.index(b) for a, b in pairs)
    try:
        loopnest.check_order(nest, order)
        ok = True
    except loopnest.IllegalOrder:
        ok = False
    assert ok == respects


def test_generated_source_shape():
    cfg = dict(spaces.expert_config("spmm"), omp_scheduling_type="dynamic", omp_chunk_size=4,
               omp_num_threads=2, permutation=[1, 0, 3, 2, 4])
    src = codegen.generate("spmm", cfg)
    assert "#pragma omp parallel for schedule(dynamic, 4) num_threads(2)" in src
    assert "int compute(taco_tensor_t *A, taco_tensor_t *B, taco_tensor_t *C)" in src
    loops = [ln.split("for (int32_t ")[1].split(" ")[0] for ln in src.splitlines() if "for (int32_t" in ln]
    assert loops == ["i1", "i0", "k", "jpos0", "jpos1"]
    assert src.count(loopnest.DEADLINE_CHECK) == 1                  # i1 encloses the parallel i0
    assert codegen.generate("spmm", cfg) == src                     # deterministic
    mtt = codegen.generate("mttkrp", dict(spaces.expert_config("mttkrp"), unroll_factor=4))
    assert "#pragma GCC unroll 4" in mtt


# ------------------------------------------------------------------ generated code vs scipy
def _configs(kernel, n, seed):
    m = spaces.build_space(kernel, strict_orders=True)
    rng = random.Random(seed)
    out = [spaces.default_config(kernel), spaces.expert_config(kernel)]
    out += [m.random(rng) for _ in range(n)]
    dyn = dict(m.random(rng), omp_scheduling_type="dynamic")       # dynamic + a permuted order
    while dyn["permutation"] == spaces.IDENTITY or not m.is_feasible(dyn):
        dyn = dict(m.random(rng), omp_scheduling_type="dynamic")
    # Orders that put the parallel loop inside others open a parallel region per outer iteration
    # (thousands here); on a loaded 2-core machine each barrier waits for a descheduled thread and
    # such a run takes seconds (TIMEOUT, not wrong).  Keep those serial, the others at <= 4 threads.
    return [dict(c, omp_num_threads=min(c["omp_num_threads"], 4) if _parallel_outermost(kernel, c) else 1)
            for c in out + [dyn]]


def _parallel_outermost(kernel, cfg):
    """The parallel loop is outermost (TTV: just inside i0, which must enclose it)."""
    order = codegen.loop_order(kernel, cfg["permutation"])
    return order.index(KERNELS[kernel].parallel) == (1 if kernel == "ttv" and order[0] == "i0" else 0)


@pytest.mark.parametrize("kernel", KERNEL_NAMES)
def test_generated_kernels_match_scipy(evaluators, kernel):
    ev = evaluators[kernel]
    configs = _configs(kernel, 3, seed=len(kernel))
    assert any(c["permutation"] != spaces.IDENTITY for c in configs)
    assert any(c["omp_num_threads"] > 1 for c in configs)
    assert any(c["omp_scheduling_type"] == "dynamic" for c in configs)
    for cfg in configs:
        res = ev.evaluate(cfg)
        assert res.state == "OK", (cfg, res.extra)
        assert res.time > 0 and res.extra["runs"] >= 1 and res.extra["compile_s"] >= 0
        json.dumps(res.extra)


def test_illegal_order_is_infeasible_without_compiling(evaluators):
    ev = evaluators["mttkrp"]
    before = ev.compiler.compiles
    res = ev.evaluate(dict(spaces.expert_config("mttkrp"), permutation=[2, 0, 1, 3, 4]))
    assert res.state == "INFEASIBLE" and res.extra["phase"] == "generate"
    assert "k must lie inside i0, i1" in res.extra["error"] and ev.compiler.compiles == before


def test_compile_failure_is_infeasible_with_the_first_error_line():
    bad = harness.Compiler(extra_flags=["-fno-such-option-for-tunerlib"])
    ev = Evaluator("spmv", small_problem("spmv"), "builtin", bad, QUICK, 5.0)
    res = ev.evaluate(spaces.expert_config("spmv"))
    assert res.state == "INFEASIBLE" and res.extra["phase"] == "compile"
    assert "error" in res.extra["error"] and "\n" not in res.extra["error"]
    with pytest.raises(harness.CompileError) as info:
        harness.Compiler().build("int compute(void) { return undeclared_name; }\n")
    assert "undeclared_name" in info.value.first_line and "/tunerlib_taco_" not in info.value.first_line
    bad.close()


def test_wrong_result_is_an_error(evaluators):
    ev = evaluators["spmm"]
    saved = ev.problem.reference
    try:
        ev.problem.reference = saved * 1.001
        res = ev.evaluate(spaces.expert_config("spmm"))
    finally:
        ev.problem.reference = saved
    assert res.state == "ERROR" and res.extra["error"].startswith("wrong output")
    assert ev.evaluate(spaces.expert_config("spmm")).state == "OK"


def test_a_run_past_the_deadline_is_a_timeout(compiler):
    ev = Evaluator("ttv", small_problem("ttv"), "builtin", compiler, QUICK, run_timeout_s=1e-7)
    res = ev.evaluate(dict(spaces.expert_config("ttv"), permutation=[4, 0, 1, 2, 3]))
    assert res.state == "TIMEOUT" and ev.counts.timeouts == 1


def test_compiled_kernels_are_cached_by_source(compiler):
    ev = Evaluator("spmv", small_problem("spmv"), "builtin", compiler, QUICK, 5.0)
    cfg = dict(spaces.expert_config("spmv"), chunk_size=64)
    ev.evaluate(cfg)
    before = compiler.compiles
    ev.evaluate(cfg)
    assert compiler.compiles == before


# ------------------------------------------------------------------ readers
def test_matrix_market_reader(tmp_path):
    m = sp.random(20, 15, density=0.2, format="coo", random_state=np.random.default_rng(3))
    plain, gz = tmp_path / "m.mtx", tmp_path / "m.mtx.gz"
    scipy.io.mmwrite(str(plain), m)
    with open(plain, "rb") as src, gzip.open(gz, "wb") as dst:
        dst.write(src.read())
    for path in (plain, gz):
        got = inputs.read_matrix(str(path))
        assert got.shape == (20, 15) and got.indptr.dtype == np.int32 and got.has_sorted_indices
        assert np.allclose(got.toarray(), m.toarray())


@pytest.mark.parametrize("text, fragment", [
    ("this is not a matrix\n", "not a readable Matrix Market file"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n", "not a readable Matrix Market file"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 x 1.0\n", "not a readable Matrix Market file"),
])
def test_malformed_matrix_market_is_a_one_line_error(tmp_path, text, fragment):
    path = tmp_path / "bad.mtx"
    path.write_text(text)
    with pytest.raises(inputs.InputError) as info:
        inputs.read_matrix(str(path))
    assert fragment in str(info.value) and "\n" not in str(info.value) and "bad.mtx" in str(info.value)
    with pytest.raises(inputs.InputError, match="no such file"):
        inputs.read_matrix(str(tmp_path / "missing.mtx"))


def test_frostt_reader(tmp_path):
    path = tmp_path / "t.tns"
    path.write_text("# a comment\n1 1 1 2.0\n3 2 4 1.5  # trailing\n\n1 1 1 0.5\n2 5 1 -1e-3\n")
    t = inputs.read_tns(str(path))
    assert t.dims == (3, 5, 4) and t.nnz == 3
    assert t.coords.tolist() == [[0, 0, 0], [1, 4, 0], [2, 1, 3]]
    assert t.vals.tolist() == [2.5, -1e-3, 1.5]


@pytest.mark.parametrize("text, fragment", [
    ("1 2 3\n", "expected 3 coordinates and a value, got 3 fields"),
    ("1 2 3 4 5\n", "got 5 fields"),
    ("1 b 3 1.0\n", "coordinates must be integers"),
    ("0 1 1 1.0\n", "1-based"),
    ("1 1 1 abc\n", "is not a number"),
    ("1 1 1 nan\n", "not finite"),
    ("# only a comment\n", "no nonzeros found"),
])
def test_malformed_tns_is_a_one_line_error(tmp_path, text, fragment):
    path = tmp_path / "bad.tns"
    path.write_text(text)
    with pytest.raises(inputs.InputError) as info:
        inputs.read_tns(str(path))
    assert fragment in str(info.value) and "\n" not in str(info.value) and "bad.tns" in str(info.value)
    path.write_text("1 1 1 1.0\n" + text)                     # the message names the line
    if "no nonzeros" not in fragment:
        with pytest.raises(inputs.InputError, match="bad.tns:2:"):
            inputs.read_tns(str(path))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(1, 4), st.integers(-9, 9)),
                min_size=1, max_size=30))
def test_tns_round_trip_and_csf(entries):
    with tempfile.NamedTemporaryFile("w", suffix=".tns", delete=False) as fh:
        fh.write("".join(f"{i} {j} {k} {v}\n" for i, j, k, v in entries))
    try:
        t = inputs.read_tns(fh.name)
    finally:
        os.unlink(fh.name)
    dense = np.zeros(t.dims)
    for i, j, k, v in entries:
        dense[i - 1, j - 1, k - 1] += v
    rebuilt = np.zeros(t.dims)
    rebuilt[tuple(t.coords.T)] = t.vals
    assert np.allclose(dense, rebuilt)
    c = inputs.csf(t)
    assert c.pos2[-1] == c.crd2.size and c.pos3[-1] == t.nnz and np.all(np.diff(c.pos3) > 0)


def test_random_inputs_are_deterministic():
    a, b = inputs.random_matrix(50, 40, 0.1, 5), inputs.random_matrix(50, 40, 0.1, 5)
    assert (a != b).nnz == 0 and abs(a.nnz - 200) <= 1
    assert (a != inputs.random_matrix(50, 40, 0.1, 6)).nnz > 0
    t = inputs.random_tensor((10, 10, 10), 0.05, 1)
    assert t.nnz == 50 and np.array_equal(t.coords, inputs.random_tensor((10, 10, 10), 0.05, 1).coords)
    with pytest.raises(inputs.InputError, match="density"):
        inputs.random_matrix(5, 5, 0.0, 1)


# ------------------------------------------------------------------ the tuner
def test_end_to_end_builtin(tmp_path, capsys, monkeypatch):
    from onebest import assert_one_best
    real_retime, seen = taco_tuner.retime_kernels, {}

    def retime(runs, rounds, timeout):
        seen.update(real_retime(runs, rounds, timeout))
        return dict(seen)
    monkeypatch.setattr(taco_tuner, "retime_kernels", retime)
    args = ["--kernel", "spmm", "--rows", "200", "--density", "0.03", "--dense", "8", "--test-limit", "8",
            "--database", str(tmp_path / "t.db"), "--quiet", "--seed", "3", "--compare-rounds", "3",
            "--run-timeout", "0.5", "--final-config", str(tmp_path / "f.json"),
            "--summary-json", str(tmp_path / "s.json")]
    assert taco_tuner.TacoTuner.main(args) == 0
    out = capsys.readouterr().out
    assert "tunerlib best" in out and "expert" in out and "default" in out and "speed-up" in out
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["tests"] == 8 and summary["best_configuration"]["permutation"]
    # one best: the table's row is the configuration and re-timed value every other output names
    (row,) = [line for line in out.splitlines()
              if line.lstrip().startswith(taco_tuner.BEST) and "vs the stronger" not in line]
    assert row.rstrip().endswith(spaces.describe("spmm", summary["best_configuration"]))
    assert float(row.split()[2]) == pytest.approx(seen[taco_tuner.BEST], rel=1e-3)   # seconds, as re-timed
    assert_one_best(tmp_path / "s.json", tmp_path / "f.json", tmp_path / "t.db", summary["best_configuration"],
                    seen[taco_tuner.BEST])
    # fair baselines: default and expert as given (32 threads) and mapped to this machine's threads
    threads = spaces.machine_threads()
    if threads != 32:
        mapped = f"expert, {threads} thread{'s' if threads > 1 else ''}"
        (row,) = [line for line in out.splitlines() if line.lstrip().startswith(mapped)]
        assert f"x {threads} threads;" in row
        name, seconds = stronger(seen, "expert")
        assert seconds == min(seen["expert"], seen[mapped])
        form = "as given" if name == "expert" else name.split(", ")[1]
        assert f"expert {seconds / seen[taco_tuner.BEST]:.2f}x ({form})" in out


def test_end_to_end_tensor_kernel_strict_orders(tmp_path, capsys):
    args = ["--kernel", "mttkrp", "--dims", "30", "20", "20", "--density", "0.02", "--dense", "4",
            "--strict-orders", "--test-limit", "8", "--database", str(tmp_path / "t.db"), "--quiet",
            "--run-timeout", "0.5",
            "--seed", "1", "--compare-rounds", "2"]
    assert taco_tuner.TacoTuner.main(args) == 0
    assert "0 illegal loop orders" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--kernel", "ttv", "--matrix", "x.mtx"], "--matrix is for spmv/spmm/sddmm"),
    (["--kernel", "spmv", "--tensor", "x.tns"], "--tensor is for ttv/mttkrp"),
    (["--backend", "taco"], "--backend taco needs --taco PATH"),
    (["--backend", "taco", "--taco", "/nonexistent/taco"], "not found or not executable"),
    (["--matrix", "/nonexistent.mtx"], "no such file"),
    (["--cc", "no-such-compiler-xyz"], "no C compiler"),
    (["--run-timeout", "0"], "--run-timeout must be positive"),
])
def test_bad_options_are_one_line_errors(tmp_path, capsys, args, message):
    assert taco_tuner.TacoTuner.main(["--database", str(tmp_path / "t.db"), "--rows", "50"] + args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_make_problem_for_compare(tmp_path):
    prob = taco_bench.make_problem("sddmm", rows=120, density=0.05, dense=4)
    assert prob["budget"] == 60 and prob["expert"] == spaces.expert_config("sddmm")
    m = prob["manipulator"]()
    assert m.is_feasible(prob["default"]) and m is not prob["manipulator"]()
    seconds = prob["evaluate"](prob["expert"])
    assert seconds is not None and seconds > 0
    assert prob["evaluate"](dict(prob["expert"], permutation=[2, 0, 1, 3, 4])) is None   # illegal order


# ------------------------------------------------------------------ replay
@pytest.mark.skipif(not (TACO_CACHE / "spmm_7742.csv.gz").is_file(),
                    reason="../shared/data/taco_cache is absent; replay tests need the CATBench TACO tables")
def test_replay_table_space_has_no_unmeasured_proposals(tmp_path, capsys):
    args = ["--kernel", "spmm", "--backend", "replay", "--table-space", "--data", str(TACO_CACHE),
            "--test-limit", "12", "--database", str(tmp_path / "t.db"), "--seed", "2"]
    assert taco_tuner.TacoTuner.main(args) == 0
    out = capsys.readouterr().out
    assert "replay: 12 evaluations" in out and "0 not measured" in out and "tunerlib best" in out


def test_table_space_needs_the_replay_backend(tmp_path, capsys):
    assert taco_tuner.TacoTuner.main(["--kernel", "spmv", "--table-space", "--database",
                                      str(tmp_path / "t.db")]) == 2
    assert "add --backend replay" in capsys.readouterr().err


@pytest.mark.skipif(not (TACO_CACHE / "spmm_7742.csv.gz").is_file(),
                    reason="../shared/data/taco_cache is absent; replay tests need the CATBench TACO tables")
def test_replay_end_to_end_and_not_measured_counts(tmp_path, capsys):
    args = ["--kernel", "spmm", "--backend", "replay", "--data", str(TACO_CACHE), "--test-limit", "8",
            "--database", str(tmp_path / "t.db"), "--quiet", "--seed", "2"]
    assert taco_tuner.TacoTuner.main(args) == 0     # a sparse table: its recorded configurations by default
    out = capsys.readouterr().out
    assert "(8 ok, 0 failed, 0 not measured)" in out and "searched space: the table's" in out
    assert taco_tuner.TacoTuner.main(args + ["--whole-space"]) == 1     # nothing succeeded: exit 1
    out = capsys.readouterr().out
    assert "not measured" in out and "replay: 8 evaluations" in out     # reported even without a best
    assert "searched space: the kernel's whole space" in out
    assert taco_tuner.TacoTuner.main(args + ["--whole-space", "--table-space"]) == 2
    assert "exclude each other" in capsys.readouterr().err
    opts = taco_tuner.TacoOptions.parse(["--kernel", "spmm", "--backend", "replay", "--data", str(SHARED),
                                         "--whole-space"])
    tuner = taco_tuner.TacoTuner(opts)
    bench = tuner.replay.benchmark
    recorded = next(iter(bench.recorded_configs(ok_only=True)))
    assert tuner.replay.run(recorded).state == "OK"
    missing = dict(recorded, omp_chunk_size=64 if recorded["omp_chunk_size"] != 64 else 32)
    if bench.lookup(missing) is None:
        res = tuner.replay.run(missing)
        assert res.state == "INFEASIBLE" and res.extra["not_measured"]
        assert tuner.replay.interface.stats.not_measured == 1
    report = tuner.replay.report(recorded)
    assert "not measured" in report and "tunerlib best" in report and "table optimum" in report


def test_taco_commands_for_every_kernel():
    for kernel in KERNEL_NAMES:
        cfg = dict(spaces.expert_config(kernel), omp_scheduling_type="dynamic", omp_chunk_size=4,
                   permutation=[1, 0, 2, 3, 4] if kernel != "spmv" else [0, 2, 1, 3, 4])
        argv = taco_command("taco", kernel, cfg, "k.c")
        assert argv[1] == KERNELS[kernel].expression and argv[-1] == "-write-source=k.c"
        assert "-schedule=dynamic,4" in argv
        s = schedule_string(kernel, cfg)
        assert f"parallelize({KERNELS[kernel].parallel},CPUThread,NoRaces)" in s
        order = codegen.loop_order(kernel, cfg["permutation"])
        assert f"reorder({','.join(order)})" in s
    assert "unroll(j,8)" in schedule_string("mttkrp", spaces.expert_config("mttkrp"))
    assert "fuse(i1,j,f),pos(f,fpos,B)" in schedule_string("ttv", spaces.expert_config("ttv"))


@pytest.mark.parametrize("kernel", KERNEL_NAMES)
def test_print_params_shows_the_default_schedule(kernel, capsys):
    """--print-params' value column is the tuner's default schedule (its first seed), which satisfies
    the space's constraints -- not each parameter's own seed value (unroll 32 with chunk 32 broke one)."""
    assert taco_tuner.TacoTuner.main(["--kernel", kernel, "--print-params"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-1] == "default" and "violates" not in "\n".join(lines)
    default = spaces.default_config(kernel)
    shown = {line.split()[0]: line.split("  ")[-1].strip() for line in lines[2:2 + len(default)]}
    assert shown == {name: repr(value) for name, value in default.items()}


def test_baselines_are_shown_as_given_and_mapped_to_this_machine(monkeypatch):
    """The default and expert ask for 32 threads; on a smaller machine they are also
    shown with its thread count, and speed-ups are stated over the stronger form."""
    rows = dict(spaces.baselines("spmm", 2))
    assert list(rows) == ["default", "default, 2 threads", "expert", "expert, 2 threads"]
    assert rows["expert"]["omp_num_threads"] == 32 and rows["expert, 2 threads"]["omp_num_threads"] == 2
    assert dict(rows["expert, 2 threads"], omp_num_threads=32) == rows["expert"]
    assert [n for n, _ in spaces.baselines("spmm", 32)] == ["default", "expert"]     # nothing to map
    assert stronger({"expert": 1.42e-3, "expert, 2 threads": 0.56e-3, "default": 1.0}, "expert") == \
        ("expert, 2 threads", 0.56e-3)
    assert stronger({"expert": None, "default": 1.0}, "expert") is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 5}, raising=False)
    assert spaces.machine_threads() == 3
    line = taco_tuner.format_stronger({"expert": 1.42e-3, "expert, 2 threads": 0.56e-3, "default": 2e-3,
                                       "default, 2 threads": 3e-3, taco_tuner.BEST: 0.67e-3}, 2)
    assert "default 2.99x (as given)" in line and "expert 0.84x (2 threads)" in line   # not 2.12x over 32 threads
    table = taco_bench.format_rows([{"kernel": "spmv", "problem": "p", "threads": 2, "best_s": [0.67e-3],
                                     "default_s": {"default": 2e-3, "default, 2 threads": 3e-3},
                                     "expert_s": {"expert": 1.42e-3, "expert, 2 threads": 0.56e-3},
                                     "vs_default": [2.0 / 0.67], "vs_expert": [0.56 / 0.67], "reached_expert": 0}])
    assert "| 0.001420 / 0.000560 |" in table and "| 0.84x | 0/1 |" in table and "(s; as given / 2 threads)" in table


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz"])
def test_a_matrix_value_that_is_not_finite_is_a_one_line_error_naming_its_line(tmp_path, value, suffix):
    text = f"%%MatrixMarket matrix coordinate real general\n% a comment\n3 3 3\n1 1 1.0\n2 2 {value}\n3 3 2.0\n"
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    with pytest.raises(inputs.InputError) as info:
        inputs.read_matrix(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}:5: value is not finite") and "\n" not in message
