"""The checks every recorded-table reader shares (tunerlib.replay.checks): damaged files, recorded
times, the notice for disagreeing duplicates; through the core's ReplayInterface CLI."""
import gzip
import math

import pytest
from hypothesis import given, strategies as st

from tunerlib.replay import ReplayInterface, TableError, read_csv_table, recorded_time
from tunerlib.replay.checks import duplicate_notice


def _csv(path, rows):
    text = "x,y,compute_time\n" + "".join(f"{x},{y},{t}\n" for x, y, t in rows)
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    return path


@given(st.floats(min_value=0.0, allow_infinity=False, allow_nan=False) | st.integers(min_value=0))
def test_a_finite_non_negative_time_is_kept(value):
    assert recorded_time(value, "f:2") == float(value)


@given(st.floats(max_value=-1e-300) | st.sampled_from([math.nan, math.inf, -math.inf, None, "1", True, [1]]))
def test_anything_else_is_one_line_naming_where_and_the_fix(value):
    with pytest.raises(TableError) as info:
        recorded_time(value, "f.csv:7", "compute_time")
    message = str(info.value)
    assert message.startswith("f.csv:7: compute_time ") and "correct the row or delete it" in message
    assert "\n" not in message


def test_the_place_of_an_error_is_computed_only_for_an_error():
    calls = []
    assert recorded_time(2.5, lambda: calls.append(1) or "x") == 2.5 and calls == []
    with pytest.raises(TableError, match="^here: time -1 is negative"):
        recorded_time(-1, lambda: "here")


def test_a_truncated_csv_through_the_replay_cli_is_exit_2_and_one_line(tmp_path, capsys):
    rows = [(x, y, 1.0 + x * y) for x in range(60) for y in range(60)]
    path = _csv(tmp_path / "t.csv.gz", rows)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TableError, match=r"t\.csv\.gz: cannot be read after line \d+ \(Compressed file ended"):
        read_csv_table(path)
    assert ReplayInterface.main(["--data", str(path), "--database", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "truncated or corrupt" in err and not (tmp_path / "r.db").exists()


def test_a_file_that_is_not_gzip_is_one_line(tmp_path):
    path = tmp_path / "t.csv.gz"
    path.write_text("x,y,compute_time\n1,2,3\n")
    with pytest.raises(TableError, match=r"t\.csv\.gz: cannot be read .*Not a gzipped file"):
        read_csv_table(path)


def test_the_duplicate_notice():
    assert duplicate_notice("f.csv", 0, 0, "median") is None
    line = duplicate_notice("f.csv", 3, 7, "min")
    assert line == ("tunerlib: notice: f.csv: 3 configuration(s) recorded more than once with different results "
                    "(7 rows); each is replayed as the minimum of its successful times")
