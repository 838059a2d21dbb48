"""tunerlib.measure.report: the best-vs-baselines table."""
from tunerlib.measure import BEST, Row, format_table, rows_from_timings, seconds_decimals, speedup


def test_table_rows_speedups_and_missing_times():
    table = format_table("blur (size 64): best vs baselines", [
        Row("Mullapudi2016", None, "plugin not installed"), ("Li2018", 0.002, None, "auto"), (BEST, 0.001)])
    lines = table.splitlines()
    assert lines[0] == "blur (size 64): best vs baselines"
    assert "time (s)" in lines[1] and "speed-up of best" in lines[1] and "configuration" in lines[1]
    assert lines[2].split()[:2] == ["Mullapudi2016", "-"] and "[not available: plugin not installed]" in lines[2]
    assert lines[3].split() == ["Li2018", "0.002000", "2.00x", "auto"]       # seconds, 4 significant digits
    assert lines[4].split() == ["tunerlib", "best", "0.001000", "1.00x"]


def test_speedup_without_a_best_time():
    assert speedup(0.002, None) == "-" and speedup(None, 0.001) == "-" and speedup(0.003, 0.001) == "3.00x"
    table = format_table("t", [("default", 0.002, None), (BEST, None, "wrong output")], significant=5)
    assert "0.0020000" in table and "2.00x" not in table


def test_rows_from_timings_keeps_order_and_reasons():
    rows = rows_from_timings(["default", "expert", BEST], {"default": 0.5, BEST: 0.25},
                             {"expert": "did not build"}, {"default": "i,j"})
    assert rows == [Row("default", 0.5, None, "i,j"), Row("expert", None, "did not build"), Row(BEST, 0.25)]


def test_the_table_is_in_seconds_with_the_digits_its_fastest_row_needs():
    """One unit (seconds) in every table, stated in its header; a sub-millisecond
    kernel keeps 4 significant digits, a slow one is not padded past them."""
    lines = format_table("t", [("default", 1.5, None), (BEST, 0.000302)]).splitlines()
    assert lines[1].split()[1:3] == ["time", "(s)"] and "ms" not in lines[1]
    assert lines[2].split()[:3] == ["default", "1.5000000", "4966.89x"]
    assert lines[3].split()[:3] == ["tunerlib", "best", "0.0003020"]
    assert seconds_decimals([1.5]) == 3 and seconds_decimals([None, 0.0563]) == 5 and seconds_decimals([]) == 3
