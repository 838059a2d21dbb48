"""``--prior FILE`` through the real tuner script: bad files are one-line errors (exit 2) that leave
no run; the priors steer the proposals and are stored with the run, so ``--resume`` keeps them."""
import collections
import json

import pytest

from dbrows import rows


def _one_line_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert err.count("\n") == 0, err
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize("content,needles", [
    ("{\"parameters\": ", ["malformed JSON", "fix the file"]),
    ("[1, 2]", ["must hold a JSON object"]),
    (json.dumps({"parameters": {"z": {"beta": [2, 2]}}}), ["unknown parameter 'z'", "known: x, y, mode, order"]),
    (json.dumps({"parameters": {"y": {"beta": [2, -1]}}}), ["prior of 'y'", "Beta's b must be a number > 0"]),
    (json.dumps({"parameters": {"mode": {"beta": [2, 2]}}}), ["give probabilities instead"]),
    (json.dumps({"parameters": {"order": {"near": ["i", "j", "k", "l"], "confidence": 0.5}}}),
     ["takes no prior"]),
    (json.dumps({"priors": {}}), ["unknown key(s) ['priors']", "use \"parameters\""]),
])
def test_bad_prior_file_is_a_one_line_error_and_leaves_no_run(tmp_path, run_script, content, needles):
    bad = tmp_path / "prior.json"
    bad.write_text(content)
    db = tmp_path / "t.db"
    proc = run_script("--prior", bad, "--database", db, "--test-limit", 3, "--technique", "PureRandom")
    _one_line_error(proc, f"--prior {bad}", *needles)
    assert not db.exists() or rows(db, "select count(*) from tuning_run")[0][0] == 0


def test_missing_prior_file(tmp_path, run_script):
    proc = run_script("--prior", tmp_path / "none.json", "--database", tmp_path / "t.db", "--test-limit", 3)
    _one_line_error(proc, "cannot read file", "none.json")


def _modes(db):
    return [json.loads(d)["mode"] for (d,) in rows(db, "select c.data from result r join configuration c "
                                                       "on c.id = r.configuration_id order by r.id")]


def test_prior_steers_proposals_and_resume_keeps_it(tmp_path, run_script):
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps({"near": {"configuration": {"mode": "c"}, "confidence": 0.98},
                                 "parameters": {"x": {"beta": [1, 6]}}}))
    db = tmp_path / "t.db"
    base = ["--database", db, "--technique", "PureRandom", "--seed", 3]
    first = run_script("--prior", prior, "--test-limit", 12, *base)
    assert first.returncode == 0, first.stderr
    (args,) = rows(db, "select args from tuning_run")
    stored = json.loads(args[0])["prior_definition"]
    assert stored == {"near": {"configuration": {"mode": "c"}, "confidence": 0.98},
                      "parameters": {"x": {"beta": [1, 6]}}}
    resumed = run_script("--resume", "--test-limit", 24, *base)        # no --prior: the run's own
    assert resumed.returncode == 0, resumed.stderr
    modes = _modes(db)
    assert len(modes) == 24 and collections.Counter(modes[12:])["c"] >= 11   # uniform: 4 of 12 expected
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"parameters": {"x": {"beta": [6, 1]}}}))
    proc = run_script("--resume", "--prior", other, "--test-limit", 30, *base)
    _one_line_error(proc, "other priors", "drop --prior")
    assert len(_modes(db)) == 24                                         # nothing recorded is lost


def test_without_prior_the_proposals_stay_uniform(tmp_path, run_script):
    db = tmp_path / "t.db"
    proc = run_script("--database", db, "--technique", "PureRandom", "--seed", 3, "--test-limit", 24)
    assert proc.returncode == 0, proc.stderr
    assert collections.Counter(_modes(db))["c"] <= 16
    (args,) = rows(db, "select args from tuning_run")
    assert json.loads(args[0])["prior_definition"] is None
