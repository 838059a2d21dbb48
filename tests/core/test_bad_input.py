"""Bad input gets one-line errors naming the problem; nothing recorded is lost."""
import json
import sqlite3


def _one_line_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    # a run that measured something first says which technique the default chose (a notice, not the error)
    err = "\n".join(line for line in proc.stderr.strip().splitlines() if not line.startswith("tunerlib: auto: "))
    assert err.count("\n") == 0, err
    for needle in needles:
        assert needle in err, err


def test_unknown_technique_suggests_names(tmp_path, run_script):
    proc = run_script("--technique", "PureRandm", "--database", tmp_path / "t.db")
    _one_line_error(proc, "unknown technique 'PureRandm'", "PureRandom")


def test_malformed_seed_json(tmp_path, run_script):
    bad = tmp_path / "seed.json"
    bad.write_text('{"x": 1, ')
    proc = run_script("--seed-configuration", bad, "--database", tmp_path / "t.db")
    _one_line_error(proc, "malformed JSON", str(bad))


def test_seed_violating_space(tmp_path, run_script):
    bad = tmp_path / "seed.json"
    bad.write_text(json.dumps({"x": 99, "y": 0.0, "mode": "a", "order": ["i", "j", "k", "l"]}))
    proc = run_script("--seed-configuration", bad, "--database", tmp_path / "t.db")
    _one_line_error(proc, "seed configuration #1", "'x'")
    bad.write_text(json.dumps({"x": 19, "y": 4.0, "mode": "a", "order": ["i", "j", "k", "l"]}))
    proc = run_script("--seed-configuration", bad, "--database", tmp_path / "t.db")
    _one_line_error(proc, "violates known constraint")


def test_seed_configuration_is_measured_first(tmp_path, run_script):
    seed = tmp_path / "seed.json"
    cfg = {"x": 3, "y": 1.5, "mode": "a", "order": ["i", "j", "k", "l"]}
    seed.write_text(json.dumps([cfg]))
    db = tmp_path / "s.db"
    proc = run_script("--seed-configuration", seed, "--database", db, "--test-limit", 5, "--quiet")
    assert proc.returncode == 0, proc.stderr
    first = sqlite3.connect(db).execute(
        "select c.data, d.requestor from desired_result d join configuration c on c.id=d.configuration_id "
        "order by d.id limit 1").fetchone()
    assert json.loads(first[0]) == cfg and first[1] == "seed"


def test_unwritable_database_path(tmp_path, run_script):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run_script("--database", blocker / "sub" / "t.db", "--test-limit", 3)
    _one_line_error(proc, "--database")


def test_run_returning_non_result_stops_with_one_line_and_keeps_results(tmp_path, run_script):
    db = tmp_path / "b.db"
    proc = run_script("--mode", "bad-return", "--database", db, "--test-limit", 10)
    _one_line_error(proc, "not a tunerlib.Result")
    con = sqlite3.connect(db)
    assert con.execute("select count(*) from result where state='ERROR'").fetchone()[0] == 1


def test_result_without_objective_metric(tmp_path, run_script):
    proc = run_script("--mode", "no-metric", "--database", tmp_path / "m.db", "--test-limit", 10)
    _one_line_error(proc, "cost")


def test_database_from_other_schema_version(tmp_path, run_script):
    db = tmp_path / "v.db"
    assert run_script("--database", db, "--test-limit", 3, "--quiet").returncode == 0
    con = sqlite3.connect(db)
    con.execute("update tunerlib_meta set value='999' where key='schema_version'")
    con.commit()
    proc = run_script("--database", db, "--test-limit", 3)
    _one_line_error(proc, "schema version")
    assert sqlite3.connect(db).execute("select count(*) from result").fetchone()[0] == 3
