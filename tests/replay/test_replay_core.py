"""The domain-free replay core: the measurement CSV reader, a spec joined with a table, a table of
unknown space, replay_result and ReplayInterface (synthetic tables only; no catalogue, no shared data)."""
import gzip
import json
import random

import pytest

from replaycheck import assert_replay_outcomes, run_through_ask_tell
from tunerlib.replay import (FAILED_REASON, BenchmarkSpec, ParamDef, Record, ReplayBenchmark, ReplayInterface,
                             ReplayOptions, TableBuilder, benchmark_from_table, parse_value, read_csv_table)
from tunerlib.report.data import load_runs

#: x in 1, 2, 4 and y in 0, 1 recorded (ms), (4, 1) failed; iterations 10, repeats 5: cost = t * 50 / 1000 s
CSV = """y,iterations,x,compute_time,repeats,energy
0,10,1,9.0,5,1.5
1,10,1,8.0,5,
0,10,2,8.0,5,2.5
1,10,2,7.0,5,2.5
0,10,4,6.0,5,2.5
1,10,4,0.0,5,2.5
"""


def _bench(exhaustive=False):
    """x in 1..8 declared (8 never recorded), y in {0, 1}; (4, 1) failed."""
    builder = TableBuilder("tiny", ["x", "y"])
    for x in (1, 2, 4):
        for y in (0, 1):
            builder.add((x, y), Record(None, "crashed", 1.0) if (x, y) == (4, 1) else Record(10.0 - x - y, None, 1.0))
    spec = BenchmarkSpec("tiny", params=(ParamDef("x", (1, 2, 4, 8)), ParamDef("y", (0, 1), "enum")),
                         constraints=("x * (y + 1) <= 8",), exhaustive=exhaustive, expert={"x": 2, "y": 0})
    return ReplayBenchmark(spec, builder.build())


def test_csv_reader_reads_columns_by_name(tmp_path):
    path = tmp_path / "tiny_box.csv.gz"
    path.write_bytes(gzip.compress(CSV.encode()))
    t = read_csv_table(path)
    assert t.name == "tiny_box" and t.params == ("y", "x") and len(t) == 6
    assert t.metadata["columns"] == ["iterations", "repeats", "energy"]
    rec = t.lookup({"x": 2, "y": 0})
    assert rec.value == 8.0 / 1000 and rec.simulated_s == pytest.approx(0.4) and rec.extra == {"energy": 2.5}
    assert t.metadata["recorded_unit"] == "ms" and t.optimum == 6.0 / 1000       # the file's ms, in seconds
    assert t.lookup({"x": 1, "y": 1}).extra == {}               # an empty energy cell is left out
    failed = t.lookup({"x": 4, "y": 1})
    assert failed.value is None and failed.reason == FAILED_REASON and failed.simulated_s == 0.0
    assert read_csv_table(path, params=["x", "y"], runs=("iterations",)).lookup({"x": 2, "y": 0}).simulated_s == \
        pytest.approx(0.08)


@pytest.mark.parametrize("text, expected", [("32", 32), ("32.0", 32), ("0.5", 0.5), ("(4, 3, 2)", (4, 3, 2)),
                                            ("[1, 0]", (1, 0))])
def test_cell_values(text, expected):
    assert parse_value(text, "here") == expected


@pytest.mark.parametrize("text", ["abc", "(1, 2]", "(1, x)"])
def test_bad_cells_are_one_line_errors(text):
    with pytest.raises(ValueError, match="here: ") as exc:
        parse_value(text, "here")
    assert "\n" not in str(exc.value)


def test_negative_time_is_an_error(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("x,compute_time\n1,-2.0\n")
    with pytest.raises(ValueError, match=r"bad.csv:2: compute_time -2.0 is negative; .*correct the row or delete it"):
        read_csv_table(path)


def test_a_spec_joined_with_a_table():
    b = _bench()
    assert b.manipulator().search_space_size() == 8 and b.constraints == ["x * (y + 1) <= 8"]
    assert (b.status({"x": 2, "y": 1}), b.status({"x": 4, "y": 1}), b.status({"x": 8, "y": 0})) == \
        ("ok", "failed", "not_measured")
    assert b.optimum == 6.0 and b.best_config == {"x": 4, "y": 0} and b.expert == {"x": 2, "y": 0}
    assert b.rows_in_space() == (6, 6) and b.feasible_count() == 7      # (8, 1) breaks the constraint
    assert b.spec.sparse and b.default is None


def test_a_table_of_unknown_space_gets_the_space_its_values_span(tmp_path):
    path = tmp_path / "tiny.csv"
    path.write_text('x,perm,size,compute_time\n1,"(0, 1)",64,3.0\n2,"(1, 0)",64,2.0\n4,"(0, 1)",64,1.0\n'
                    '4,"(1, 0)",64,0.0\n')
    b = benchmark_from_table(read_csv_table(path))
    m = b.manipulator()
    assert b.name == "tiny" and b.constraints == [] and "no known constraints" in b.spec.description
    assert sorted(m.names) == ["perm", "x"] and b.table.constants == {"size": 64}   # one value: a constant
    assert list(m.parameter("x").values) == [1, 2, 4] and m.parameter("perm").kind == "permutation"
    assert b.optimum == 0.001 and b.status({"x": 4, "perm": [1, 0]}) == "failed"
    assert b.status({"x": 1, "perm": [1, 0]}) == "not_measured"


def test_replay_result_outcomes():
    assert_replay_outcomes(_bench(), "crashed")


@pytest.mark.parametrize("table_space, outcomes", [(False, (5, 1, 1)), (True, (5, 1, 0))])
def test_interface_counts_outcomes_through_ask_tell(tmp_path, table_space, outcomes):
    options = ReplayOptions(database=str(tmp_path / "r.db"), seed=4, test_limit=7, quiet=True,
                            table_space=table_space)
    interface = ReplayInterface(options, benchmark=_bench())
    assert interface.program_name() == "replay-tiny"
    summary = run_through_ask_tell(interface, options)
    stats = interface.stats
    assert stats.evaluations == summary.tests == sum(outcomes)   # every feasible configuration, once
    assert (stats.ok, stats.failed, stats.not_measured) == outcomes
    assert summary.best_value == 6.0 and summary.best_configuration == {"x": 4, "y": 0}


def test_table_space_proposes_only_recorded_configurations():
    space = _bench().manipulator(table_space=True)
    rng = random.Random(0)
    assert {(c["x"], c["y"]) for c in (space.random(rng) for _ in range(200))} == \
        {(x, y) for x in (1, 2, 4) for y in (0, 1)}


def test_main_replays_a_measurement_csv_and_reports_bad_arguments(tmp_path, capsys):
    path = tmp_path / "tiny.csv"
    path.write_text(CSV)
    db = str(tmp_path / "m.db")
    assert ReplayInterface.main(["--data", str(path), "--test-limit", "5", "--database", db,
                                 "--display-frequency", "0", "--seed", "1"]) == 0
    assert "replay: 5 evaluations" in capsys.readouterr().out
    assert ReplayInterface.main(["--database", db]) == 2
    assert "needs a table: pass --data FILE" in capsys.readouterr().err
    assert ReplayInterface.main(["--data", str(tmp_path / "missing.csv"), "--database", db]) == 2
    assert "replay table" in capsys.readouterr().err
    (tmp_path / "cache.json").write_text("{}")
    assert ReplayInterface.main(["--data", str(tmp_path / "cache.json"), "--database", db]) == 2
    assert "reads measurement CSVs (.csv or .csv.gz)" in capsys.readouterr().err
    (tmp_path / "bad.csv").write_text("x,y\n1,2\n")
    assert ReplayInterface.main(["--data", str(tmp_path / "bad.csv"), "--database", db]) == 2
    assert "no 'compute_time' column" in capsys.readouterr().err


def test_the_reader_converts_the_files_unit_to_seconds(tmp_path):
    """A table holds seconds whatever unit its file records; the cost follows."""
    path = tmp_path / "tiny.csv"
    path.write_text(CSV.replace("9.0", "9000.0"))
    in_us = read_csv_table(path, unit="us")
    assert in_us.lookup({"x": 1, "y": 0}).value == 0.009 and in_us.metadata["recorded_unit"] == "us"
    in_s = read_csv_table(path, unit="s")
    assert in_s.lookup({"x": 2, "y": 0}).value == 8.0 and in_s.lookup({"x": 2, "y": 0}).simulated_s == 400.0
    with pytest.raises(ValueError, match="unknown time unit 'min'"):
        read_csv_table(path, unit="min")


def test_a_replayed_run_is_in_seconds_in_the_database_summary_and_report(tmp_path, capsys):
    """The file records ms; the run's database, --summary-json and closing line hold
    seconds (the recorded ms / 1000), as a measured backend's do."""
    path, db, js = tmp_path / "tiny.csv", tmp_path / "m.db", tmp_path / "s.json"
    path.write_text(CSV)
    assert ReplayInterface.main(["--data", str(path), "--test-limit", "8", "--database", str(db), "--seed", "1",
                                 "--display-frequency", "0", "--summary-json", str(js)]) == 0
    summary = json.loads(js.read_text())
    assert summary["best_value"] == 6.0 / 1000 and summary["best_configuration"] == {"x": 4, "y": 0}
    best = load_runs(str(db))[-1].best_point()
    assert best.value == 6.0 / 1000 and best.config == {"x": 4, "y": 0}
    assert "best 0.006 s, table optimum 0.006 s" in capsys.readouterr().out
