"""One unit: the recorded tables hold milliseconds, yet a replayed run of the RISE and
TACO tuners reports seconds everywhere -- the results database, --summary-json and the final table,
whose header states the unit -- like their measured backends.  Skipped when ../shared is absent."""
import csv
import gzip
import json
import sqlite3
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


@needs_taco
def test_resuming_a_replay_run_recorded_in_milliseconds_is_refused(tmp_path, capsys):
    """A run from before the unit change, as that version left it in the database file: the replay's
    result times in ms and no recorded unit. Resumed now, its ms would meet new results in s (the search
    would take every new result for 1000x better); the resume is refused with one line and the file stays
    as it was (every row of every table)."""
    db = tmp_path / "t.db"
    args = ["--kernel", "spmv", "--backend", "replay", "--data", str(TACO_CACHE), "--seed", "1", "--quiet",
            "--database", str(db)]
    assert taco_tuner.TacoTuner.main(args + ["--test-limit", "10"]) == 0
    con = sqlite3.connect(db)
    (run_args,) = con.execute("SELECT args FROM tuning_run").fetchone()
    assert json.loads(run_args).pop("objective_unit") == "s"
    con.execute("UPDATE tuning_run SET args = ?", (json.dumps({k: v for k, v in json.loads(run_args).items()
                                                              if k != "objective_unit"}),))
    con.execute("UPDATE result SET time = time * 1000 WHERE time IS NOT NULL")
    con.commit()
    con.close()
    before = _dump(db)
    capsys.readouterr()
    assert taco_tuner.TacoTuner.main(args + ["--test-limit", "20", "--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "did not record the unit of 'minimize time'" in err and "in s:" in err
    assert "drop --resume to start a new run (the run's 10 results stay in" in err
    assert _dump(db) == before


def _dump(db: Path) -> list:
    """Every row of every table of the database file, as SQL."""
    con = sqlite3.connect(db)
    try:
        return list(con.iterdump())
    finally:
        con.close()
