"""tools/bench_overhead.py: one row of overhead figures per technique named (the default without one)."""
import json
import sys

import pytest

from tools import bench_overhead


def test_one_row_per_named_technique_and_the_default_without(capsys):
    assert bench_overhead.main(["--evals", "30", "--technique", "PureRandom", "AUCBanditMetaTechniqueA",
                                "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert list(rows) == ["tunerlib PureRandom", "tunerlib AUCBanditMetaTechniqueA"]
    assert all(row["evals"] == 30 and row["mean_ms"] > 0 for row in rows.values())
    assert bench_overhead.main(["--evals", "20"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("framework") and table[1].split()[:2] == ["tunerlib", "20.000"]


#: a stand-in for the ``opentuner`` 0.8.8 package: its option names (argparse takes ``--seed=N`` for
#: ``--seed-configuration N``), configurations drawn from ``random`` and ``numpy.random``; writes what it
#: parsed and drew to $FAKE_OPENTUNER_LOG
FAKE_OPENTUNER = '''
import argparse, json, os, random
import numpy


def default_argparser():
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--test-limit", type=int)
    parser.add_argument("--seed-configuration", nargs="+", default=[])
    parser.add_argument("--database")
    parser.add_argument("--no-dups", action="store_true")
    return parser


class FloatParameter:
    def __init__(self, name, low, high):
        self.name, self.low, self.high = name, low, high


class ConfigurationManipulator:
    def __init__(self):
        self.params = []

    def add_parameter(self, p):
        self.params.append(p)


class Result:
    def __init__(self, time=None):
        self.time = time


class _Holder:
    def __init__(self, data):
        self.configuration, self.data = self, data


class MeasurementInterface:
    def __init__(self, args):
        self.args = args

    @classmethod
    def main(cls, args):
        tuner = cls(args)
        params = tuner.manipulator().params
        draws = []
        for _ in range(args.test_limit):
            cfg = {p.name: random.uniform(p.low, p.high) + numpy.random.random() for p in params}
            draws.append(cfg)
            tuner.run(_Holder(cfg), None, None)
        with open(os.environ["FAKE_OPENTUNER_LOG"], "w") as fh:
            json.dump({"seed_configuration": args.seed_configuration, "draws": draws}, fh)
        raise SystemExit(0)
'''


def test_the_opentuner_run_is_seeded_without_a_seed_option(tmp_path, monkeypatch):
    """OpenTuner 0.8.8 has no --seed: the child seeds random and numpy.random itself, so the same seed
    draws the same configurations and no seed reaches --seed-configuration."""
    (tmp_path / "opentuner").mkdir()
    (tmp_path / "opentuner" / "__init__.py").write_text(FAKE_OPENTUNER)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    logs = []
    for i, seed in enumerate((1, 1, 2)):
        monkeypatch.setenv("FAKE_OPENTUNER_LOG", str(tmp_path / f"log{i}.json"))
        row = bench_overhead.bench_opentuner(sys.executable, 5, seed)
        assert row["evals"] == 5
        logs.append(json.loads((tmp_path / f"log{i}.json").read_text()))
    assert [log["seed_configuration"] for log in logs] == [[], [], []]
    assert logs[0]["draws"] == logs[1]["draws"] != logs[2]["draws"]


def test_cpu_per_evaluation_at_2000_and_over_the_last_1000_on_a_tour_in_memory(capsys):
    """With 2,000 evaluations or more the row has the CPU per evaluation over evaluations 1,001-2,000
    and over the last 1,000; ``--space tour`` tunes one permutation, ``--database memory://`` keeps the
    results in memory."""
    assert bench_overhead.main(["--evals", "2000", "--technique", "PureRandom", "--database", "memory://",
                                "--space", "tour", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["tunerlib PureRandom"]
    assert row["evals"] == 2000 and row["cpu2k_ms"] >= 0 and row["cpu_last1000_ms"] >= 0
    assert row["cpu2k_ms"] == row["cpu_last1000_ms"]        # the same 1,000 evaluations
    with pytest.raises(SystemExit) as exc:
        bench_overhead.main(["--evals", "30", "--space", "cube"])
    assert exc.value.code == 2 and "invalid choice: 'cube'" in capsys.readouterr().err
