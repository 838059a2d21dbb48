"""RecordedTable / TableBuilder: canonical keys, duplicate merging, lookups, optimum (no shared data)."""
import pytest
from hypothesis import given, settings, strategies as st

from tunerlib.replay.table import Record, RecordedTable, TableBuilder, canonical_value


def _table(duplicates="median"):
    b = TableBuilder("toy", ["a", "b", "c"], duplicates)
    b.add((1, 2, 7), Record(5.0, simulated_s=1.0))
    b.add((1, 2, 7), Record(3.0, simulated_s=1.0))
    b.add((1, 2, 7), Record(10.0, simulated_s=1.0))
    b.add((2, 2, 7), Record(None, "boom", 0.5))
    b.add((2, 2, 7), Record(None, "boom", 0.5))
    b.add((4, 1, 7), Record(None, "fail"))
    b.add((4, 1, 7), Record(8.0))
    b.add((8, 1, 7), Record(4.0))
    return b.build(constants={"c": 7}, source="mem")


def test_canonical_value_examples():
    assert canonical_value(32.0) == 32 and isinstance(canonical_value(32.0), int)
    assert canonical_value(True) == 1 and canonical_value(0.5) == 0.5
    assert canonical_value([4, 3.0, [1]]) == (4, 3, (1,))
    assert canonical_value("x") == "x"


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.text(max_size=3),
                              st.floats(allow_nan=False, allow_infinity=False)),
                    lambda inner: st.lists(inner, max_size=4), max_leaves=8))
def test_canonical_value_is_idempotent_and_hashable(value):
    c = canonical_value(value)
    hash(c)
    assert canonical_value(c) == c


@pytest.mark.parametrize("policy,expected", [("median", 5.0), ("min", 3.0), ("first", 5.0)])
def test_duplicates_are_merged_by_policy(policy, expected):
    t = _table(policy)
    rec = t.lookup({"a": 1, "b": 2})
    assert rec.value == expected and rec.count == 3 and rec.simulated_s == pytest.approx(3.0)
    assert t.metadata["rows_read"] == 8 and t.metadata["duplicate_keys"] == 3


def test_failed_only_when_every_row_failed():
    t = _table()
    assert not t.lookup({"a": 2, "b": 2}).ok and t.lookup({"a": 2, "b": 2}).reason == "boom"
    assert t.lookup({"a": 4, "b": 1}).value == 8.0  # one OK row wins over a failed one
    assert t.failed_count == 1 and t.ok_count == 3 and len(t) == 4


def test_lookup_with_constants_floats_and_absent():
    t = _table()
    assert t.lookup({"a": 8.0, "b": 1}).value == 4.0          # 8.0 == 8, constant c filled in
    assert t.lookup({"a": 8, "b": 1, "c": 7}).value == 4.0     # constant given explicitly
    assert t.lookup({"a": 8, "b": 1, "c": 9}) is None          # other constant value: not measured
    assert t.lookup({"a": 16, "b": 1}) is None                 # absent: not measured
    with pytest.raises(KeyError, match="lacks parameter 'b'"):
        t.lookup({"a": 1})


def test_optimum_and_best_config():
    t = _table("min")
    assert t.optimum == 3.0 and t.best_config == {"a": 1, "b": 2}
    assert t.config_of((1, 2, 7), with_constants=True) == {"a": 1, "b": 2, "c": 7}
    assert t.value_sets() == {"a": [1, 2, 4, 8], "b": [1, 2], "c": [7]}


def test_no_ok_record_has_no_optimum():
    b = TableBuilder("bad", ["x"])
    b.add((1,), Record(None, "f"))
    with pytest.raises(ValueError, match="no successful measurement"):
        _ = b.build().optimum


def test_bad_builder_input():
    with pytest.raises(ValueError, match="duplicates must be one of"):
        TableBuilder("t", ["x"], "mean")
    with pytest.raises(ValueError, match="has 2 values, expected 1"):
        TableBuilder("t", ["x"]).add((1, 2), Record(1.0))
    with pytest.raises(ValueError, match="not table parameters"):
        RecordedTable("t", ["x"], {}, constants={"y": 1})


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(st.integers(1, 64), st.sampled_from([(0, 1, 2), (2, 1, 0)])),
                       st.one_of(st.none(), st.floats(0.001, 1e4)), min_size=1, max_size=30))
def test_every_built_record_is_found_by_its_config(rows):
    b = TableBuilder("perm", ["n", "perm"])
    for key, value in rows.items():
        b.add(key, Record(value, None if value is not None else "x"))
    t = b.build()
    for key, value in rows.items():
        cfg = t.config_of(key)
        assert isinstance(cfg["perm"], list)          # JSON form, as a PermutationParameter holds it
        assert t.lookup(cfg).value == value
    oks = [v for v in rows.values() if v is not None]
    if oks:
        assert t.optimum == min(oks)
