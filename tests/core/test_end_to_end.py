"""End-to-end runs of a real tuner script through the real CLI (subprocesses)."""
import json
import sqlite3


def _summary(path):
    with open(path) as fh:
        return json.load(fh)


def test_cli_run_writes_summary_and_database(tmp_path, run_script):
    db, summ, log = tmp_path / "sub" / "r.db", tmp_path / "s.json", tmp_path / "log.csv"
    proc = run_script("--test-limit", 60, "--seed", 3, "--database", db, "--summary-json", summ,
                      "--results-log", log, "--quiet")
    assert proc.returncode == 0, proc.stderr
    s = _summary(summ)
    assert s["tests"] == 60
    assert s["best_value"] is not None and s["best_value"] < 30
    assert set(s["best_configuration"]) == {"x", "y", "mode", "order"}
    assert s["best_configuration"]["x"] + s["best_configuration"]["y"] < 18
    assert "best minimize cost" in proc.stdout
    lines = log.read_text().strip().splitlines()
    assert lines[0] == "elapsed_s,test,value,best" and len(lines) == 61
    con = sqlite3.connect(db)
    assert con.execute("select count(*) from result").fetchone()[0] == 60
    assert con.execute("select count(*) from result where was_new_best").fetchone()[0] >= 1
    assert con.execute("select state from tuning_run").fetchone()[0] == "COMPLETE"


def test_known_constraints_are_never_measured(tmp_path, run_script):
    db = tmp_path / "c.db"
    proc = run_script("--test-limit", 120, "--seed", 5, "--database", db, "--quiet",
                      "--technique", "PureRandom")
    assert proc.returncode == 0, proc.stderr
    con = sqlite3.connect(db)
    rows = con.execute("select c.data from result r join configuration c on c.id = r.configuration_id")
    for (data,) in rows:
        cfg = json.loads(data)
        assert cfg["x"] + cfg["y"] < 18


def test_run_that_raises_records_error_and_continues(tmp_path, run_script):
    db, summ = tmp_path / "e.db", tmp_path / "s.json"
    proc = run_script("--test-limit", 40, "--seed", 1, "--database", db, "--mode", "raise",
                      "--summary-json", summ, "--quiet", "--technique", "PureRandom")
    assert proc.returncode == 0, proc.stderr
    s = _summary(summ)
    assert s["tests"] == 40 and s["states"].get("ERROR", 0) > 0 and s["states"].get("OK", 0) > 0
    con = sqlite3.connect(db)
    extra = con.execute("select extra from result where state='ERROR'").fetchone()[0]
    assert "simulated crash in run()" in json.loads(extra)["traceback"]


def test_parallel_run_uses_several_processes(tmp_path, run_script):
    marker, summ = tmp_path / "pids.txt", tmp_path / "s.json"
    proc = run_script("--test-limit", 24, "--seed", 2, "--database", tmp_path / "p.db",
                      "--parallelism", 3, "--rendezvous", 3, "--marker", marker,
                      "--summary-json", summ, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert _summary(summ)["tests"] == 24
    pids = set(marker.read_text().split())
    assert len(pids) == 3


def test_info_flags(tmp_path, run_script):
    proc = run_script("--print-params")
    assert proc.returncode == 0 and "order" in proc.stdout and "mode" in proc.stdout
    proc = run_script("--print-search-space-size")
    assert proc.returncode == 0 and "log10" in proc.stdout
    proc = run_script("--list-techniques")
    assert proc.returncode == 0 and "PureRandom" in proc.stdout
