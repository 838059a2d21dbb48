"""Kernel Tuner cache reader and T1 specs: a synthetic cache in tmp_path, then the shared files."""
import gzip
import json
import os
from pathlib import Path

import pytest

from tunerlib.parameters import ConfigurationManipulator, parse_expression
from tunerlib.replay import substitute_constants
from tunerlib.replay.recorded import load_benchmark
from tunerlib.replay.recorded.kerneltuner import (FAILED_MARKERS, cache_key, read_kerneltuner_cache, read_t1_spec,
                                                 t1_constraints)

SHARED = Path(os.environ["TUNERLIB_SHARED_DIR"])   # tests/conftest.py: ../shared unless set
KT = SHARED / "data" / "gpu_cache" / "kerneltuner_hub"
needs_shared = pytest.mark.skipif(not KT.is_dir(), reason=f"shared Kernel Tuner data not found at {KT}")


def _synthetic_cache(tmp_path: Path, gz: bool) -> Path:
    keys = ["bx", "by", "KW"]
    params = {"bx": [16, 32, 64], "by": [1, 2], "KW": [4]}
    cache = {}
    for bx in params["bx"]:
        for by in params["by"]:
            if bx * by > 64:          # "constraint": absent from the cache
                continue
            entry = {"bx": bx, "by": by, "KW": 4, "time": bx / by, "compile_time": 100.0,
                     "verification_time": 0, "benchmark_time": 50.0, "GFLOP/s": 1.0}
            if (bx, by) == (32, 2):
                entry["time"] = "RuntimeFailedConfig"
            if (bx, by) == (16, 2):
                entry["time"] = "CompilationFailedConfig"
            cache[cache_key([bx, by, 4])] = entry
    data = {"device_name": "Toy GPU", "kernel_name": "toy", "problem_size": [8], "tune_params_keys": keys,
            "tune_params": params, "objective": "time", "cache": cache}
    path = tmp_path / ("toy.json.gz" if gz else "toy.json")
    raw = json.dumps(data).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_synthetic_cache(tmp_path, gz):
    t = read_kerneltuner_cache(_synthetic_cache(tmp_path, gz))
    assert t.name == "toy" and t.params == ("bx", "by", "KW") and t.constants == {"KW": 4}
    assert len(t) == 5 and t.failed_count == 2
    assert t.lookup({"bx": 16, "by": 1}).value == 16.0 / 1000                 # recorded 16 ms -> seconds
    assert t.lookup({"bx": 16, "by": 1}).simulated_s == pytest.approx(0.15)   # (100 + 0 + 50) ms
    assert t.lookup({"bx": 16, "by": 1}).extra == {"GFLOP/s": 1.0, "compile_s": 0.1, "benchmark_s": 0.05}
    assert t.metadata["recorded_unit"] == "ms"
    assert t.lookup({"bx": 32, "by": 2}).reason == "RuntimeFailedConfig"
    assert t.lookup({"bx": 16, "by": 2}).reason == "CompilationFailedConfig"
    assert t.lookup({"bx": 64, "by": 2}) is None                              # absent: not measured
    assert t.optimum == 0.016 and t.best_config == {"bx": 16, "by": 1}
    assert t.metadata["device_name"] == "Toy GPU" and t.metadata["tune_params"]["bx"] == [16, 32, 64]


def test_synthetic_cache_through_generic_benchmark(tmp_path):
    from tunerlib.replay.recorded import benchmark_from_file
    b = benchmark_from_file(_synthetic_cache(tmp_path, True))
    m = b.manipulator()
    assert m.names == ["bx", "by"] and b.constraints == []
    assert b.status({"bx": 64, "by": 1}) == "ok" and b.status({"bx": 64, "by": 2}) == "not_measured"
    assert b.status({"bx": 32, "by": 2}) == "failed" and b.evaluate({"bx": 32, "by": 2}) is None


def test_bad_cache_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_kerneltuner_cache(bad)
    bad.write_text(json.dumps({"cache": {}}))
    with pytest.raises(ValueError, match="missing field"):
        read_kerneltuner_cache(bad)
    bad.write_text(json.dumps({"tune_params_keys": ["x"], "tune_params": {"x": [1]},
                               "cache": {"1": {"x": 1, "time": "Weird"}}}))
    with pytest.raises(ValueError, match="unknown time marker"):
        read_kerneltuner_cache(bad)
    bad.write_text(json.dumps({"tune_params_keys": ["x"], "tune_params": {"x": [1, 2]},
                               "cache": {"1": {"x": 2, "time": 1.0}}}))
    with pytest.raises(ValueError, match="disagrees"):
        read_kerneltuner_cache(bad)


def test_substitute_constants_whole_words_only():
    out = substitute_constants("filter_width-1 + filter_width_x * w", {"filter_width": 15, "w": 2})
    assert out == "15-1 + filter_width_x * 2"
    assert parse_expression(out).names == {"filter_width_x"}


def test_t1_constraints_synthetic(tmp_path):
    spec = {"ConfigurationSpace": {"TuningParameters": [
        {"Name": "a", "Type": "int", "Values": "[1, 2, 4]", "Default": 1},
        {"Name": "k", "Type": "int", "Values": "[3]", "Default": [3]}],
        "Conditions": [{"Expression": "a * k <= 6", "Parameters": ["a", "k"]},
                       {"Expression": "k == 3", "Parameters": ["k"]}]}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(spec))
    t1 = read_t1_spec(path)
    assert t1.constants == {"k": 3} and t1.defaults == {"a": 1, "k": 3}
    assert t1_constraints(t1) == ["a * 3 <= 6"]       # the constant-only condition holds and is dropped
    spec["ConfigurationSpace"]["Conditions"].append({"Expression": "k == 4", "Parameters": ["k"]})
    path.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match="false for the constants"):
        t1_constraints(read_t1_spec(path))


# ------------------------------------------------------------------------------- shared files
README_FACTS = [  # name, entries, failed, optimum in ms (gpu_cache README table; the tables hold seconds)
    ("gemm_rtxtitan", 17956, 0, 11.47), ("gemm_rtx3090", 17956, 0, 5.66),
    ("conv_a100", 4362, 161, 0.554), ("conv_a4000", 4362, 161, None), ("conv_mi250x", 4362, 0, None),
    ("dedisp_a100", 11130, 0, 68.1), ("dedisp_a4000", 11130, 0, None), ("dedisp_mi250x", 11130, 0, None),
    ("pnpoly_rtxtitan", 4092, 342, 0.0135),
]


@needs_shared
@pytest.mark.parametrize("name,entries,failed,optimum", README_FACTS)
def test_shared_caches_match_readme(name, entries, failed, optimum):
    b = load_benchmark(name, SHARED)
    t = b.table
    assert len(t) == entries == t.metadata["rows_read"] and t.failed_count == failed
    assert {r.reason for _, r in t.items() if not r.ok} <= set(FAILED_MARKERS)
    if optimum is not None:
        assert b.optimum == pytest.approx(optimum / 1000, rel=0.005)
    assert all(r.simulated_s > 0 for _, r in t.items())
    if name not in ("gemm_rtxtitan", "conv_a100", "dedisp_a100", "pnpoly_rtxtitan"):
        return  # the other GPUs share these value sets and constraints
    assert b.optimum == t.optimum                      # every recorded entry lies in the space
    # exhaustive: the known constraints admit every recorded configuration (failed ones included) ...
    assert b.rows_in_space() == (entries, entries)
    # ... and the feasible space is exactly the recorded set (absent = excluded by the constraints)
    assert b.feasible_count() == entries


@needs_shared
def test_gemm_space_types_and_constants():
    b = load_benchmark("gemm_rtxtitan", SHARED)
    assert b.table.constants == {"KWG": 32, "KWI": 2, "STRM": 0, "STRN": 0, "PRECISION": 32}
    m = b.manipulator()
    assert m.names == ["MWG", "NWG", "MDIMC", "NDIMC", "MDIMA", "NDIMB", "VWM", "VWN", "SA", "SB"]
    assert m.parameter("MWG").kind == "ordinal" and m.parameter("MWG").log
    assert m.parameter("SA").kind == "enum"
    assert m.search_space_size() == 82944
    assert b.lookup({"MWG": 128, "NWG": 128, "MDIMC": 8, "NDIMC": 8, "MDIMA": 8, "NDIMB": 8,
                     "VWM": 1, "VWN": 1, "SA": 0, "SB": 0}) is not None
    assert b.status({**b.best_config, "MWG": 16, "VWM": 8}) == "not_measured"   # violates MWG % (MDIMC*VWM)
    # the original file keeps the 32 raw timings; the trimmed 3090 file does not
    assert "times" not in b.table.lookup(b.best_config).extra


@needs_shared
@pytest.mark.parametrize("kernel,name", [("convolution_milo", "conv_a100"), ("dedispersion_milo", "dedisp_a100")])
def test_t1_conditions_equal_the_transcribed_constraints(kernel, name):
    b = load_benchmark(name, SHARED)
    spec = read_t1_spec(KT / "t1_specs" / f"{kernel}.json")
    tune = b.table.metadata["tune_params"]
    assert {k: v for k, v in spec.values.items()} == tune      # same value sets as the cache
    parsed = t1_constraints(spec, b.table.constants)
    assert parsed == b.constraints
    m = ConfigurationManipulator([p.build() for p in b.param_defs], parsed)
    assert all(m.is_feasible(c) for c in b.recorded_configs())


@needs_shared
def test_pnpoly_has_no_constraints_and_full_cartesian():
    b = load_benchmark("pnpoly_rtxtitan", SHARED)
    m = b.manipulator()
    assert b.constraints == [] and m.search_space_size() == 4092 == len(b.table)
    assert m.parameter("between_method").kind == "enum" and m.parameter("block_size_x").kind == "ordinal"
