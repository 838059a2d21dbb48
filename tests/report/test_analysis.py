"""``tunerlib.load_results`` and ``tunerlib.load_store_records``: DataFrames of a results database and
of the cross-session store. The results frame holds every column of ``tunerlib export`` with the same
values (checked against the CSV export of the same database), plus the objective's unit and the
program version; without pandas, an ImportError names the extra."""
import csv
import io
import json
import math
import sys

import numpy as np
import pytest

pd = pytest.importorskip("pandas", reason="the [analysis] extra (pandas) is not installed")

import tunerlib  # noqa: E402
from tunerlib.cli import main  # noqa: E402
from tunerlib.errors import UsageError  # noqa: E402


def _csv_export(path, capsys):
    assert main(["export", path]) == 0
    text = capsys.readouterr().out
    return list(csv.reader(io.StringIO(text)))[0], list(csv.DictReader(io.StringIO(text)))


def _same(cell, text, column):
    """Whether a DataFrame cell holds what the CSV export wrote as ``text``."""
    if text == "":
        return cell is None or (isinstance(cell, float) and math.isnan(cell)) or cell is pd.NaT \
            or (not isinstance(cell, (list, dict)) and pd.isna(cell))
    if column == "collection_time":
        return cell.floor("s") == pd.Timestamp(text)       # the export writes whole seconds
    if isinstance(cell, (list, dict)):
        return cell == json.loads(text)
    if isinstance(cell, (bool, np.bool_)):
        return str(bool(cell)) == text
    if isinstance(cell, (int, float)) or hasattr(cell, "dtype"):
        return float(cell) == pytest.approx(float(text), rel=1e-12, abs=1e-9)
    return str(cell) == text


def _round_trip(path, capsys):
    header, records = _csv_export(path, capsys)
    frame = tunerlib.load_results(path)
    assert [c for c in frame.columns if c not in ("unit", "version")] == header
    assert len(frame) == len(records)
    for column in header:
        bad = [(i, frame[column].iloc[i], rec[column]) for i, rec in enumerate(records)
               if not _same(frame[column].iloc[i], rec[column], column)]
        assert bad == [], f"column {column}: {bad[:3]}"
    return frame


def test_every_export_column_round_trips(results_db, capsys):
    frame = _round_trip(results_db, capsys)
    assert frame["value"].dtype == "float64" and frame["evaluation"].dtype == "int64"
    assert frame["was_new_best"].dtype == bool and str(frame["collection_time"].dtype).startswith("datetime64")
    assert set(frame["state"]) == {"OK", "ERROR", "TIMEOUT", "INFEASIBLE"}
    assert frame.groupby("label").size().to_dict() == {"bandit": 120, "random": 120}
    assert frame["unit"].isna().all() and set(frame["version"]) == {"0"}   # a unitless attribute objective


def test_lists_units_and_renamed_parameters_round_trip(tmp_path, capsys):
    from tunerlib.parameters import ConfigurationManipulator, EnumParameter, PermutationParameter
    db = str(tmp_path / "perm.db")
    space = ConfigurationManipulator([PermutationParameter("tour", [0, 1, 2, 3]),
                                      EnumParameter("state", ["on", "off"])])
    manager = tunerlib.TuningRunManager.for_space(space, tunerlib.MinimizeAttribute("cost", unit="ms"),
                                                  database=db, test_limit=8, seed=1, label="perm", quiet=True)
    while (desired := manager.get_next_desired_result()) is not None:
        cfg = desired.configuration.data
        manager.report_result(desired, tunerlib.Result(extra={"cost": cfg["tour"][0] + (cfg["state"] == "on")}))
    manager.finish()
    frame = _round_trip(db, capsys)
    assert sorted(frame["tour"].iloc[0]) == [0, 1, 2, 3]                  # lists stay lists
    assert set(frame["param:state"]) <= {"on", "off"} and set(frame["state"]) == {"OK"}
    assert set(frame["unit"]) == {"ms"}                                     # as the run recorded it


def test_one_run_by_uuid_prefix_and_label(results_db):
    full = tunerlib.load_results(results_db)
    uuid = full["run_uuid"].iloc[-1]
    one = tunerlib.load_results(results_db, run=uuid[:8])
    assert set(one["run_uuid"]) == {uuid} and len(one) == (full["run_uuid"] == uuid).sum()
    assert set(tunerlib.load_results(results_db, labels=["random"])["label"]) == {"random"}
    with pytest.raises(UsageError, match="no runs match"):
        tunerlib.load_results(results_db, run="zzzz")
    with pytest.raises(UsageError, match="no results database at"):
        tunerlib.load_results(results_db + ".missing")


def test_store_records(results_db, tmp_path):
    store = str(tmp_path / "store.db")
    assert main(["upload", results_db, "--store", store]) == 0
    frame = tunerlib.load_store_records(store)
    assert len(frame["run_uuid"].unique()) == 6 and set(frame["program"]) == {"toy"}
    final = frame[frame["final"]]
    assert final.groupby("run_uuid").size().min() >= 1
    assert set(final[final["run_uuid"].isin(tunerlib.load_results(results_db, labels=["random"])["run_uuid"])]
               ["technique"]) == {"PureRandom"}
    assert ((frame["affinity"] - frame["new_bests"] / frame["requests"]).abs() < 1e-12).all()
    assert (frame.groupby(["run_uuid", "technique"])["tests"].max().sort_index()
            == final.set_index(["run_uuid", "technique"])["tests"].sort_index()).all()


def test_without_pandas_the_error_names_the_extra(results_db, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'tunerlib\[analysis\]'"):
        tunerlib.load_results(results_db)
    with pytest.raises(ImportError, match=r"tunerlib\[analysis\]"):
        tunerlib.load_store_records("nowhere.db")
