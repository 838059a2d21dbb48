"""What a serial run on SQLite sends the database per evaluation: two write transactions (the request,
written already claimed, and the result with its request's state) and the poll's data_version check;
nothing reads back what the process already knows."""
import re
from collections import Counter

import pytest

from tunerlib import MeasurementInterface, MinimizeAttribute, Result, TuningOptions
from tunerlib.parameters import ConfigurationManipulator, FloatParameter

from sqltrace import traced_run

#: the statements of one evaluation, in order
PER_EVALUATION = ["BEGIN IMMEDIATE", "INSERT INTO configuration", "INSERT INTO desired_result", "COMMIT",
                  "BEGIN IMMEDIATE", "INSERT INTO result", "UPDATE desired_result", "COMMIT",
                  "PRAGMA data_version"]


class _Quadratic(MeasurementInterface):
    def manipulator(self):
        return ConfigurationManipulator([FloatParameter(f"x{i}", -1.0, 1.0) for i in range(3)])

    def objective(self):
        return MinimizeAttribute("v")

    def run(self, desired_result, input, limit):
        return Result(extra={"v": sum(x * x for x in desired_result.configuration.data.values())})


def _kind(sql):
    """A statement's first words: its kind and the table it writes."""
    words = re.split(r"\s+", sql.strip())
    return " ".join(words[:3] if words[0] == "INSERT" else words[:2])


def _side_transactions(kinds):
    """``kinds`` without the new-best marks and the technique snapshots (each its own transaction)."""
    out, i = [], 0
    while i < len(kinds):
        if kinds[i] == "BEGIN IMMEDIATE" and i + 1 < len(kinds) and kinds[i + 1] in ("UPDATE result",
                                                                                   "UPDATE technique_state",
                                                                                   "INSERT INTO technique_state"):
            i = kinds.index("COMMIT", i) + 1
            continue
        out.append(kinds[i])
        i += 1
    return out


@pytest.mark.parametrize("technique", ["auto", "AUCBanditMetaTechniqueA"])
def test_each_evaluation_is_two_write_transactions_and_a_version_check(tmp_path, monkeypatch, technique):
    opts = TuningOptions(database=str(tmp_path / "s.db"), quiet=True, seed=3, technique=[technique],
                         test_limit=60)
    summary, seen, polls = traced_run(monkeypatch, _Quadratic, opts)
    assert summary.tests == 60
    # from the second poll (the first reads the run's results) to the one after the stop
    kinds = _side_transactions([_kind(sql) for sql in seen[polls[1]:polls[-1]]])
    evaluations = Counter(kinds)["INSERT INTO result"]
    assert evaluations >= 55
    assert kinds == PER_EVALUATION[-1:] + PER_EVALUATION * evaluations
