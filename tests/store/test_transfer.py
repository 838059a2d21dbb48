"""A tuner's --upload, --warm-start and recommendation notices through the real CLI."""
import json
import sys
from pathlib import Path

import pytest

import zygote

from tunerlib.db import ResultsDB
from tunerlib.store import CrossSessionStore

TOY = Path(__file__).parents[1] / "core" / "scripts" / "toy_tuner.py"


def toy(*args):
    return zygote.run([sys.executable, str(TOY), "--test-limit", "40", *map(str, args)], capture_output=True,
                      text=True, timeout=120)


def test_upload_then_warm_start_measures_the_stored_bests_first(tmp_path):
    store, first, second = tmp_path / "s.db", tmp_path / "a.db", tmp_path / "b.db"
    done = toy("--database", first, "--seed", 1, "--upload", "--include-configurations", "--store", store)
    assert done.returncode == 0, done.stderr
    assert "uploaded to" in done.stderr and "(added)" in done.stderr
    with CrossSessionStore(str(store)) as opened:
        assert opened.counts()["runs"] == 1
    db = ResultsDB(str(first))
    rows = sorted((r for r in db.run_results(1) if r.state == "OK"), key=lambda r: r.extra["cost"])
    db.close()
    best = []
    for r in rows:
        if r.config_data not in best:
            best.append(r.config_data)
    done = toy("--database", second, "--seed", 2, "--warm-start", "--store", store)
    assert done.returncode == 0, done.stderr
    db = ResultsDB(str(second))
    seeded = [r.config_data for r in db.run_results(1) if r.requestor == "seed"]
    db.close()
    assert seeded == best[:5]


def test_warm_start_and_recommendations_say_once_when_the_store_cannot_help(tmp_path):
    done = toy("--database", tmp_path / "r.db", "--warm-start", "--technique", "rec-bndt-A", "--store",
               tmp_path / "none.db", "--seed", 3, "--no-starter-history")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("tunerlib:")]
    assert len(lines) == 2 and all("does not exist yet" in line for line in lines)
    assert not (tmp_path / "none.db").exists()
    done = toy("--database", tmp_path / "r.db", "--upload", "--store", tmp_path / "s.db", "--quiet", "--seed", 4)
    assert done.returncode == 0 and "tunerlib:" not in done.stderr
    other = tmp_path / "r2.db"
    done = toy("--database", other, "--warm-start", "--store", tmp_path / "s.db", "--seed", 5)
    assert "holds no configurations of this search space" in done.stderr


def test_store_queries_through_the_cli(tmp_path, cli, toy_module):
    store = tmp_path / "s.db"
    for seed, technique in ((1, "PSO_GA_DE"), (2, "AUCBanditMetaTechniqueA")):
        assert toy_module.ToyTuner.main(["--test-limit", "40", "--database", str(tmp_path / "r.db"), "--seed",
                                         str(seed), "--technique", technique, "--upload", "--store", str(store),
                                         "--quiet"]) == 0
    done = cli("store", "techniques", "--store", store, "--program", "toy", "--json")
    rows = json.loads(done.stdout)
    assert rows and {"technique", "score", "weight", "root"} == set(rows[0])
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    ranks = json.loads(cli("store", "techniques", "--store", store, "--metric", "run-rank", "--json").stdout)
    assert ranks and all(0 <= r["score"] <= 1 for r in ranks)
    assert sum(r["weight"] for r in ranks) == pytest.approx(2.0)  # two runs, shares summing to 1 each
    by_base = json.loads(cli("store", "techniques", "--store", store, "--by", "base", "--json").stdout)
    assert {"GeneticAlgorithm", "PSO"} <= {r["base"] for r in by_base}
    text = cli("store", "representations", "--store", store).stdout
    assert "tunerlib/toy" in text and "PermutationParameter" in text
    done = cli("store", "techniques", "--store", store, "--program", "nosuch")
    assert done.returncode == 2 and "no representation for program nosuch" in done.stderr
    assert cli("store", "info", "--store", tmp_path / "none.db").returncode == 2
