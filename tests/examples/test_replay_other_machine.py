"""The TACO and RISE tuners and the replay CLI, end to end, on tables from another machine (shipped
tables perturbed: rows dropped, times scaled and noised, columns reordered, files renamed).
Skipped when ../shared is absent."""
import json
import sys
from pathlib import Path

import pytest
from other_machine import (KT_HUB, RISE_BACO, TACO_CACHE, needs_kt, needs_rise, needs_taco, perturb_csv,
                           perturb_kt_cache)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "taco"))
sys.path.insert(0, str(REPO / "examples" / "rise"))

import rise_tuner  # noqa: E402
import taco_tuner  # noqa: E402
from tunerlib.replay.recorded import RecordedInterface  # noqa: E402



def _summary(tmp_path, main, args, name):
    out = tmp_path / f"{name}.json"
    code = main(args + ["--database", str(tmp_path / f"{name}.db"), "--summary-json", str(out), "--quiet"])
    return code, json.loads(out.read_text())


@needs_taco
@pytest.mark.parametrize("kernel, threads", [("spmm", None), ("spmv", lambda t: t // 2 + 1)])
def test_taco_tuner_replays_a_table_from_another_cpu(tmp_path, capsys, kernel, threads):
    path = perturb_csv(TACO_CACHE / f"{kernel}_7742.csv.gz", tmp_path / f"{kernel}_other.csv.gz", threads=threads)
    args = ["--kernel", kernel, "--backend", "replay", "--data", str(path), "--table-space",
            "--test-limit", "30", "--seed", "1"]
    code, summary = _summary(tmp_path, taco_tuner.TacoTuner.main, args, "a")
    out = capsys.readouterr().out
    assert code == 0 and summary["tests"] == 30
    assert "replay: 30 evaluations (30 ok, 0 failed, 0 not measured)" in out and "tunerlib best" in out
    assert _summary(tmp_path, taco_tuner.TacoTuner.main, args, "b")[1]["best_value"] == summary["best_value"]


@needs_rise
def test_rise_tuner_keeps_the_kernels_space_for_another_gpus_table(tmp_path, capsys):
    path = perturb_csv(RISE_BACO / "kmeans_rtxtitan.csv.gz", tmp_path / "gpu2.csv.gz", seed=3, scale=0.6, drop=0.0)
    args = ["--kernel", "kmeans", "--backend", "replay", "--data", str(path), "--technique",
            "BayesianOptimization", "--test-limit", "20", "--seed", "1"]
    code, summary = _summary(tmp_path, rise_tuner.RiseTuner.main, args, "k")
    out = capsys.readouterr().out
    assert code == 0 and summary["tests"] == 20
    optimum = float(out.split("table optimum in the space: ")[1].split()[0])
    assert summary["best_value"] <= 1.2 * optimum                       # ~1x, not 8x
    not_measured = int(out.split(" not measured)")[0].rsplit("(", 1)[1].split(", ")[-1])
    assert not_measured <= 3                                            # only what the table lacks (8%)
    assert "expert " in out and "not documented" not in out             # the kernel's expert and default
    assert "rise_kmeans:gpu2" in out


@needs_rise
def test_rise_tuner_says_when_the_table_is_not_the_kernels(tmp_path, capsys):
    path = perturb_csv(RISE_BACO / "kmeans_rtxtitan.csv.gz", tmp_path / "gpu2.csv.gz")
    assert rise_tuner.RiseTuner.main(["--kernel", "mm", "--backend", "replay", "--data", str(path),
                                      "--database", str(tmp_path / "m.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a rise_mm table: missing column(s) ['tuned_v3'" in err and "\n" not in err


@needs_kt
def test_replay_cli_keeps_a_kernel_tuner_caches_restrictions(tmp_path, capsys):
    path = perturb_kt_cache(KT_HUB / "convolution_milo" / "A4000.trimmed.json.gz", tmp_path / "newgpu.json.gz",
                            drop=0.0)
    assert RecordedInterface.main(["--data", str(path), "--technique", "PureRandom", "--test-limit", "30",
                                 "--seed", "1", "--database", str(tmp_path / "c.db")]) == 0
    out = capsys.readouterr().out
    assert "replay: 30 evaluations" in out and "0 not measured" in out  # the constraints exclude the absent
