"""tunerlib.measure.report: the best-vs-baselines table."""
from tunerlib.measure import BEST, Row, format_table, rows_from_timings, speedup


def test_table_rows_speedups_and_missing_times():
    table = format_table("blur (size 64): best vs baselines", [
        Row("Mullapudi2016", None, "plugin not installed"), ("Li2018", 0.002, None, "auto"), (BEST, 0.001)])
    lines = table.splitlines()
    assert lines[0] == "blur (size 64): best vs baselines"
    assert "time (ms)" in lines[1] and "speed-up of best" in lines[1] and "configuration" in lines[1]
    assert lines[2].split()[:2] == ["Mullapudi2016", "-"] and "[not available: plugin not installed]" in lines[2]
    assert lines[3].split() == ["Li2018", "2.000", "2.00x", "auto"]
    assert lines[4].split() == ["tunerlib", "best", "1.000", "1.00x"]


def test_speedup_without_a_best_time():
    assert speedup(0.002, None) == "-" and speedup(None, 0.001) == "-" and speedup(0.003, 0.001) == "3.00x"
    table = format_table("t", [("default", 0.002, None), (BEST, None, "wrong output")], ms_digits=4)
    assert "2.0000" in table and "2.00x" not in table


def test_rows_from_timings_keeps_order_and_reasons():
    rows = rows_from_timings(["default", "expert", BEST], {"default": 0.5, BEST: 0.25},
                             {"expert": "did not build"}, {"default": "i,j"})
    assert rows == [Row("default", 0.5, None, "i,j"), Row("expert", None, "did not build"), Row(BEST, 0.25)]
