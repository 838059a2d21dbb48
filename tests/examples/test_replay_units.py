"""Issue 18 item 6, one unit: the recorded tables hold milliseconds, yet a replayed run of the RISE and
TACO tuners reports seconds everywhere -- the results database, --summary-json and the final table,
whose header states the unit -- like their measured backends.  Skipped when ../shared is absent."""
import csv
import gzip
import json
import statistics
import sys
from pathlib import Path

import pytest
from other_machine import RISE_BACO, TACO_CACHE, needs_rise, needs_taco

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "taco"))
sys.path.insert(0, str(REPO / "examples" / "rise"))

import rise_tuner  # noqa: E402
import taco_tuner  # noqa: E402
from tunerlib.report.data import load_runs  # noqa: E402


def recorded_ms(path: Path, config: dict, key=lambda name: name) -> float:
    """The file's own compute_time (ms) of ``config``: the median of its rows, as the reader merges them."""
    with gzip.open(path, "rt", newline="") as fh:
        times = [float(row["compute_time"]) for row in csv.DictReader(fh)
                 if all(_same(row[key(name)], value) for name, value in config.items())]
    assert times, f"{config} is not in {path}"
    return statistics.median(times)


def _same(cell: str, value) -> bool:
    if isinstance(value, list):
        return [int(v) for v in cell.strip("()[]").split(",")] == value
    return float(cell) == float(value)


def _run(tmp_path, main, args):
    js, db = tmp_path / "s.json", tmp_path / "t.db"
    assert main(args + ["--database", str(db), "--summary-json", str(js), "--quiet"]) == 0
    return json.loads(js.read_text()), load_runs(str(db))[-1].best_point()


def _table_row(out: str, name: str) -> list:
    header = next(line for line in out.splitlines() if "time (" in line)
    assert "time (s)" in header and "ms" not in header
    return next(line for line in out.splitlines() if line.strip().startswith(name)).split()


@needs_rise
def test_a_rise_replay_reports_the_recorded_ms_in_seconds(tmp_path, capsys):
    args = ["--kernel", "kmeans", "--backend", "replay", "--test-limit", "12", "--seed", "2"]
    summary, best = _run(tmp_path, rise_tuner.RiseTuner.main, args)
    out = capsys.readouterr().out
    config = summary["best_configuration"]
    seconds = recorded_ms(RISE_BACO / "kmeans_rtxtitan.csv.gz", config) / 1000
    assert summary["best_value"] == pytest.approx(seconds, rel=1e-12) and best.value == summary["best_value"]
    assert best.config == config
    assert float(_table_row(out, "tunerlib best")[2]) == pytest.approx(seconds, rel=1e-3)
    assert "table optimum in the space: 0.00288566 s" in out


@needs_taco
def test_a_taco_replay_reports_the_recorded_ms_in_seconds(tmp_path, capsys):
    args = ["--kernel", "spmv", "--backend", "replay", "--data", str(TACO_CACHE), "--test-limit", "20", "--seed", "1"]
    summary, best = _run(tmp_path, taco_tuner.TacoTuner.main, args)
    out = capsys.readouterr().out
    config = summary["best_configuration"]
    seconds = recorded_ms(TACO_CACHE / "spmv_7742.csv.gz", config) / 1000
    assert summary["best_value"] == pytest.approx(seconds, rel=1e-12) and best.value == summary["best_value"]
    assert float(_table_row(out, "tunerlib best")[2]) == pytest.approx(seconds, rel=1e-3)
    assert "table optimum in the space: 0.000302411 s" in out
