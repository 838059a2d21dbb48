"""What tunerlib tells the user, through the real CLI: --warm-start says how many stored configurations
it seeded and from which runs; `tunerlib runs` has a header, the program version named, the best value
with its unit and the technique; `store techniques` says what score and weight are; `store similar` says
why it found nothing; --log-level and -v/--verbose on every command and tuner script."""
import json
import logging
import re

import pytest

from tunerlib.cli import build_parser, main
from tunerlib.db import ResultsDB


def test_warm_start_says_what_it_seeded_and_from_which_runs(tmp_path, toy, capsys):
    store, first = tmp_path / "s.db", tmp_path / "a.db"
    for seed in (1, 2):
        assert toy.ToyTuner.main(["--database", str(first), "--test-limit", "30", "--seed", str(seed), "--upload",
                                  "--include-configurations", "--store", str(store), "--quiet"]) == 0
    with ResultsDB(str(first)) as db:
        uuids = [r["uuid"] for r in db.list_runs()]
    capsys.readouterr()
    second = tmp_path / "b.db"
    assert toy.ToyTuner.main(["--database", str(second), "--test-limit", "20", "--seed", "3", "--warm-start",
                              "--store", str(store)]) == 0
    [line] = [x for x in capsys.readouterr().err.splitlines() if "--warm-start" in x]
    match = re.fullmatch(r"tunerlib: --warm-start seeded (\d+) stored configurations of this search space, "
                         r"measured first, from (\d) runs of store (.*): (.*)", line)
    assert match, line
    with ResultsDB(str(second)) as db:
        seeded = sum(r.requestor == "seed" for r in db.run_results(1))
    assert int(match.group(1)) == seeded == 5 and int(match.group(2)) == 2
    parts = dict(re.fullmatch(r"(\w{8}) \((\d)\)", p).groups() for p in match.group(4).split(", "))
    assert set(parts) == {u[:8] for u in uuids} and sum(map(int, parts.values())) == 5
    assert toy.ToyTuner.main(["--database", str(tmp_path / "c.db"), "--test-limit", "5", "--warm-start",
                              "--store", str(store), "--quiet"]) == 0
    assert "--warm-start" not in capsys.readouterr().err           # --quiet: warnings only


def test_runs_has_a_header_the_best_value_with_its_unit_and_the_technique(tmp_path, toy, capsys):
    db = tmp_path / "r.db"
    assert toy.ToyTuner.main(["--database", str(db), "--test-limit", "12", "--seed", "1", "--quiet",
                              "--cost-unit", "ms", "--technique", "PureRandom", "--label", "first"]) == 0
    capsys.readouterr()
    assert main(["runs", str(db)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert re.split(r"\s{2,}", header) == ["run", "program", "program version", "state", "results", "best",
                                          "technique", "label", "started", "seed"]
    cells = re.split(r"\s{2,}", row)
    with ResultsDB(str(db)) as opened:
        best = min(r.extra["cost"] for r in opened.run_results(1) if r.state == "OK")
    assert cells[3:5] == ["COMPLETE", "12"] and cells[6:8] == ["PureRandom", "first"]
    assert cells[5] == f"{best:.6g} ms (cost, lower is better)"


def test_store_techniques_labels_score_and_weight(tmp_path, results_db, cli):
    store = tmp_path / "s.db"
    assert cli("upload", results_db, "--store", store).returncode == 0
    out = cli("store", "techniques", "--store", store).stdout.splitlines()
    assert re.split(r"\s{2,}", out[0]) == ["technique", "score (new-bests)", "weight (requests)", "technique base"]
    assert out[-1].startswith("score: new bests per request in the stored runs, shrunk toward the mean")
    assert "weight: the requests behind the score" in out[-1]
    ranked = cli("store", "techniques", "--store", store, "--metric", "run-rank").stdout.splitlines()
    assert "weight (runs)" in ranked[0] and "rank of the runs it took part in" in ranked[-1]
    rows = json.loads(cli("store", "techniques", "--store", store, "--json").stdout)
    assert {"technique", "score", "weight", "root"} == set(rows[0])      # JSON keys stay as they were


def test_store_similar_says_why_it_found_nothing(tmp_path, results_db, cli):
    store = tmp_path / "s.db"
    assert cli("upload", results_db, "--store", store).returncode == 0
    done = cli("store", "similar", "--store", store, "--program", "toy")
    assert done.returncode == 0 and done.stdout == (
        "no similar representation: the store holds no representation but "
        f"{done.stdout.split(' but ')[1].split(':')[0]}: upload runs of other programs\n")
    done = cli("store", "similar", "--store", store, "--program", "toy", "--json")
    assert done.stdout == "[]\n" and done.stderr.startswith("tunerlib: no similar representation: ")
    assert "(nothing)" not in done.stdout + done.stderr


def _commands(parser, path=()):
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, path + (name,))
    if path:
        yield path, parser


def test_every_tunerlib_command_takes_log_level_and_verbose():
    commands = list(_commands(build_parser()))
    assert len(commands) >= 12
    for path, parser in commands:
        assert {"--log-level", "-v", "--verbose"} <= set(parser._option_string_actions), path
        assert parser._option_string_actions["--log-level"].choices == ("debug", "info", "warning", "error")


def test_log_level_controls_what_a_command_and_a_tuner_script_report(tmp_path, toy, capsys):
    from tunerlib.logs import configured
    db = tmp_path / "r.db"
    args = ["--database", str(db), "--test-limit", "5", "--warm-start", "--store", str(tmp_path / "none.db")]
    assert toy.ToyTuner.main(args) == 0
    assert "tunerlib: --warm-start adds nothing" in capsys.readouterr().err          # info: the default
    assert toy.ToyTuner.main(args + ["--log-level", "warning"]) == 0
    assert "--warm-start" not in capsys.readouterr().err
    assert toy.ToyTuner.main(args + ["--quiet", "--log-level", "info"]) == 0          # explicit wins over --quiet
    assert "--warm-start adds nothing" in capsys.readouterr().err
    assert toy.ToyTuner.main(args + ["-v"]) == 0
    err = capsys.readouterr().err
    assert "tunerlib: debug: tunerlib." in err or "--warm-start adds nothing" in err
    assert not configured()                        # an entry point leaves the process as it found it
    assert main(["runs", str(db), "--log-level", "error"]) == 0
    with pytest.raises(SystemExit) as stopped:                                      # argparse: exit 2
        toy.ToyTuner.main(args + ["--log-level", "loud"])
    assert stopped.value.code == 2 and "invalid choice: 'loud'" in capsys.readouterr().err


def test_verbose_shows_debug_records_of_tunerlib_loggers(capsys):
    from tunerlib.logs import cli_logging
    with cli_logging(verbose=True):
        logging.getLogger("tunerlib.techniques.bo.technique").debug("model refit")
        logging.getLogger("tunerlib.store.warm").info("plain")
        logging.getLogger("tunerlib.report").warning("careful")
    with cli_logging("error"):
        logging.getLogger("tunerlib.store.warm").warning("hidden")
    assert capsys.readouterr().err.splitlines() == [
        "tunerlib: debug: tunerlib.techniques.bo.technique: model refit", "tunerlib: plain",
        "tunerlib: warning: careful"]
