"""--objectives through the real command line of the RISE replay and HPVM2FPGA tuners: the Pareto front in
the summary and --summary-json, one-line errors (exit 2), and --resume keeping the front and refusing
other objectives.  The RISE tests skip when ../shared is absent."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from other_machine import SHARED, needs_rise

from tunerlib.techniques.pareto import non_dominated

REPO = Path(__file__).resolve().parents[2]
RISE = [sys.executable, str(REPO / "examples" / "rise" / "rise_tuner.py"), "--kernel", "kmeans",
        "--backend", "replay", "--shared-dir", str(SHARED)]
HPVM = [sys.executable, str(REPO / "examples" / "hpvm2fpga" / "hpvm2fpga_tuner.py")]


def _cli(args, tmp_path):
    return subprocess.run(args + ["--database", str(tmp_path / "t.db"), "--summary-json", str(tmp_path / "s.json")],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONHASHSEED": "0"})


def _vectors(tmp_path, names):
    import sqlite3
    con = sqlite3.connect(tmp_path / "t.db")
    cols = ", ".join(names)
    rows = con.execute(f"select {cols} from result where state = 'OK'").fetchall()
    con.close()
    return rows


@needs_rise
def test_rise_replay_front_and_resume(tmp_path):
    first = _cli(RISE + ["--objectives", "time,energy", "--test-limit", "30", "--seed", "4", "--technique", "NSGA2"],
                 tmp_path)
    assert first.returncode == 0, first.stderr
    assert "Pareto front:" in first.stdout and " J  {" in first.stdout
    summary = json.loads((tmp_path / "s.json").read_text())
    front = {(p["objectives"]["time"], p["objectives"]["energy"]) for p in summary["pareto_front"]}
    rows = _vectors(tmp_path, ["time", "energy"])
    assert len(rows) > 20 and front == {rows[i] for i in non_dominated(rows)}
    assert summary["objective_units"] == {"time": "s", "energy": "J"}

    wrong = _cli(RISE + ["--objectives", "energy,time", "--test-limit", "40", "--resume"], tmp_path)
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1
    assert "optimised minimize time, minimize energy, not minimize energy, minimize time" in wrong.stderr
    single = _cli(RISE + ["--test-limit", "40", "--resume"], tmp_path)
    assert single.returncode == 2 and "not minimize time" in single.stderr

    resumed = _cli(RISE + ["--objectives", "time,energy", "--test-limit", "50", "--resume"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    rows = _vectors(tmp_path, ["time", "energy"])
    assert summary["tests"] == 50 and len(rows) > 30
    assert {(p["objectives"]["time"], p["objectives"]["energy"]) for p in summary["pareto_front"]} == \
        {rows[i] for i in non_dominated(rows)}


@needs_rise
@pytest.mark.parametrize("args, message", [
    (["--objectives", "time,energy", "--technique", "UniformGreedyMutation"], "optimises one objective"),
    (["--objectives", "time,,max:"], "is not a metric"),
    (["--objectives", "time,time"], "names time twice")])
def test_cli_errors_are_one_line_exit_2(tmp_path, args, message):
    out = _cli(RISE + args + ["--test-limit", "5"], tmp_path)
    assert out.returncode == 2 and message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_hpvm2fpga_latency_and_resources(tmp_path):
    out = _cli(HPVM + ["--objectives", "time,util_lut,util_dsp", "--test-limit", "30", "--seed", "2"], tmp_path)
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["objective_units"] == {"time": "s", "util_lut": "of device", "util_dsp": "of device"}
    points = [tuple(p["objectives"].values()) for p in summary["pareto_front"]]
    assert points and sorted(non_dominated(points)) == list(range(len(points)))
    assert "util_lut" in out.stdout and "of device" in out.stdout
