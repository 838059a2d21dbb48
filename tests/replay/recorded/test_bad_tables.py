"""Recorded tables that cannot be replayed as they are: every entry point answers one line naming the
file, the line and the fix, and exits 2; merged duplicate rows are announced; whether a table file
is exhaustive is read from its data.  The tables are small ones the tests write."""
import csv
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from other_machine import KT_HUB, needs_kt, perturb_kt_cache
from tunerlib.replay import read_csv_table
from tools import compare
from tunerlib.replay.recorded import RecordedInterface, benchmark_from_file

ROOT = Path(__file__).resolve().parents[3]
PNPOLY = {"between_method": [0, 1], "block_size_x": [32, 64], "tile_size": [1], "use_method": [0]}
GRID = ("tuned_gs0", "tuned_gs1", "tuned_ls0", "tuned_ls1")


def _pnpoly_cache(path: Path, drop=(), times=None) -> Path:
    """A Kernel Tuner cache of the pnpoly kernel (4 configurations, no constraints), one entry per
    line as Kernel Tuner writes them; ``times`` replaces the time of entries by key."""
    lines = []
    for b in PNPOLY["between_method"]:
        for x in PNPOLY["block_size_x"]:
            key = f"{b},{x},1,0"
            if key in drop:
                continue
            time = (times or {}).get(key, 1.0 + b + x / 100)
            entry = {"between_method": b, "block_size_x": x, "tile_size": 1, "use_method": 0, "time": time,
                     "compile_time": 100.0, "benchmark_time": 50.0}
            lines.append(f"{json.dumps(key)}: {json.dumps(entry)}")
    head = {"device_name": "another GPU", "kernel_name": "cn_pnpoly",
            "tune_params_keys": list(PNPOLY), "tune_params": PNPOLY, "objective": "time"}
    text = json.dumps(head)[:-1] + ', "cache": {\n' + ",\n".join(lines) + "\n}}\n"
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    return path


def _grid_csv(path: Path, rows, extra=None) -> Path:
    """A RISE kmeans/stencil-style CSV: ``rows`` of (gs0, gs1, ls0, ls1, compute_time)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(GRID) + list(extra or {}) + ["compute_time"])
    for *key, time in rows:
        writer.writerow(list(key) + list((extra or {}).values()) + [time])
    path.write_bytes(gzip.compress(out.getvalue().encode()) if path.suffix == ".gz" else out.getvalue().encode())
    return path


def _grid_rows(n: int = 40):
    return [(gs0, gs1, ls0, 1, 1.0 + gs0 / ls0 + gs1) for gs0 in (256, 512, 1024) for gs1 in (1, 2, 4)
            for ls0 in (1, 2, 4, 8, 16)][:n]


def _truncated(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    return path


def _recorded_cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "tunerlib.replay.recorded", *map(str, args), "--test-limit", "3",
                           "--database", str(tmp_path / "r.db")], capture_output=True, text=True, timeout=300)


def _one_line_exit_2(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    err = proc.stderr.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


# ------------------------------------------------------------------ truncated files
def test_a_truncated_gz_table_is_one_line_naming_the_file_and_the_fix(tmp_path):
    big = [(gs0, gs1, ls0, ls1, 1.5) for gs0 in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
           for gs1 in (1, 2, 4, 8, 16, 32) for ls0 in (1, 2, 4, 8) for ls1 in (1, 2, 4, 8)]
    csv_path = _truncated(_grid_csv(tmp_path / "kmeans_other.csv.gz", big))
    with pytest.raises(ValueError, match=r"kmeans_other\.csv\.gz: cannot be read after line \d+ .*truncated"):
        read_csv_table(csv_path)
    json_path = _truncated(_pnpoly_cache(tmp_path / "other.json.gz"))
    with pytest.raises(ValueError, match=r"other\.json\.gz: cannot be read .*truncated or corrupt"):
        benchmark_from_file(json_path)


@pytest.mark.parametrize("suffix", [".csv.gz", ".json.gz"])
def test_every_entry_point_answers_a_truncated_table_with_exit_2(tmp_path, capsys, suffix):
    if suffix == ".csv.gz":
        path = _truncated(_grid_csv(tmp_path / f"kmeans_x{suffix}", _grid_rows() * 30))
    else:
        path = _truncated(_pnpoly_cache(tmp_path / f"other{suffix}"))
    _one_line_exit_2(_recorded_cli(tmp_path, "--data", path), str(path), "truncated")
    assert RecordedInterface.main(["--data", str(path), "--database", str(tmp_path / "m.db")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        compare.main(["--problems", str(path), "--seeds", "1"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("compare: error: ") and err.count("\n") == 1 and "truncated" in err


# ------------------------------------------------------------------ times that are not times
@pytest.mark.parametrize("time, kind", [(-0.001, "negative"), (float("nan"), "not a finite number"),
                                        (float("inf"), "not a finite number"), (True, "not a finite number")])
def test_a_kernel_tuner_time_that_is_not_a_time_names_the_entry_and_its_line(tmp_path, time, kind):
    path = _pnpoly_cache(tmp_path / "other.json", times={"1,32,1,0": time})
    with pytest.raises(ValueError) as info:
        benchmark_from_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4: cache entry '1,32,1,0': time ") and kind in message
    assert "correct the row or delete it" in message and "\n" not in message


def test_a_zero_kernel_tuner_time_is_refused(tmp_path):
    path = _pnpoly_cache(tmp_path / "other.json", times={"0,64,1,0": 0})
    with pytest.raises(ValueError, match=r"other\.json:3: cache entry '0,64,1,0': time 0 is not a measured time"):
        benchmark_from_file(path)


def test_a_negative_kernel_tuner_time_exits_2_through_the_cli(tmp_path):
    path = _pnpoly_cache(tmp_path / "other.json", times={"1,64,1,0": -0.001})
    _one_line_exit_2(_recorded_cli(tmp_path, "--data", path), f"{path}:5: cache entry '1,64,1,0': time -0.001 is negative")
    assert not (tmp_path / "r.db").exists()


def test_a_nan_compute_time_in_a_csv_names_its_line(tmp_path):
    rows = _grid_rows(5)
    rows[3] = rows[3][:4] + ("nan",)
    with pytest.raises(ValueError, match=r"kmeans_x\.csv:5: compute_time nan is not a finite number"):
        read_csv_table(_grid_csv(tmp_path / "kmeans_x.csv", rows))


# ------------------------------------------------------------------ columns
def test_a_kernel_table_with_an_extra_column_is_refused_naming_the_column(tmp_path):
    path = _grid_csv(tmp_path / "kmeans_other.csv", _grid_rows(), extra={"tuned_extra": 3})
    with pytest.raises(ValueError) as info:
        benchmark_from_file(path)
    message = str(info.value)
    assert "kernel kmeans" in message and "unexpected column(s) ['tuned_extra']" in message
    assert "--benchmark rise_kmeans" in message and "\n" not in message
    named = benchmark_from_file(path, "rise_kmeans")      # named: the kernel's space, the column is metadata
    assert named.spec.constraints and "tuned_extra" in named.table.metadata["columns"]
    assert named.feasible_count() == 3641


def test_a_kernel_tuner_cache_with_an_extra_parameter_is_refused(tmp_path):
    data = json.loads(_pnpoly_cache(tmp_path / "a.json").read_text())
    data["tune_params_keys"].append("extra")
    data["tune_params"]["extra"] = [7]
    data["cache"] = {k + ",7": dict(v, extra=7) for k, v in data["cache"].items()}
    path = tmp_path / "other.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"kernel pnpoly .*unexpected column\(s\) \['extra'\]"):
        benchmark_from_file(path)


# ------------------------------------------------------------------ duplicates
def test_duplicate_rows_with_different_times_are_announced_once(tmp_path, capsys):
    rows = _grid_rows(6)
    rows += [rows[0][:4] + (9.0,), rows[0][:4] + (7.0,), rows[2][:4] + (rows[2][4] + 1,), rows[4]]
    table = read_csv_table(_grid_csv(tmp_path / "dups.csv", rows))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "notice" in err and "dups.csv" in err
    assert "2 configuration(s) recorded more than once with different results (5 rows)" in err
    assert table.metadata["duplicate_keys"] == 3 and table.metadata["conflicting_keys"] == 2
    read_csv_table(_grid_csv(tmp_path / "same.csv", rows[:6] + [rows[4]]))   # identical repeats: silent
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------------ exhaustiveness from the data
def test_an_exhaustive_cache_from_another_gpu_is_exhaustive_whatever_its_name(tmp_path):
    for name in ("RTX_4090.json.gz", "sample.trimmed.json", "x.json"):
        bench = benchmark_from_file(_pnpoly_cache(tmp_path / name))
        assert not bench.spec.sparse and bench.covers_space(), name
        assert bench.name == f"pnpoly_rtxtitan:{name.split('.')[0]}"
    partial = benchmark_from_file(_pnpoly_cache(tmp_path / "A100.json.gz", drop=("1,64,1,0",)))
    assert partial.spec.sparse and not partial.covers_space()


def test_a_failed_entry_counts_as_a_row_of_the_space(tmp_path):
    path = _pnpoly_cache(tmp_path / "other.json", times={"1,64,1,0": "RuntimeFailedConfig"})
    bench = benchmark_from_file(path)
    assert bench.table.failed_count == 1 and not bench.spec.sparse


@needs_kt
def test_a_shipped_cache_recorded_on_another_gpu_keeps_its_score(tmp_path):
    src = KT_HUB / "convolution_milo" / "A4000.trimmed.json.gz"
    whole = benchmark_from_file(perturb_kt_cache(src, tmp_path / "RTX_4090.json.gz", drop=0.0), "conv_a4000")
    assert whole.name == "conv_a4000:RTX_4090" and not whole.spec.sparse
    sample = benchmark_from_file(perturb_kt_cache(src, tmp_path / "H100.json.gz", drop=0.1))
    assert sample.spec.sparse
