"""One best: the configuration a tuner's final table shows as its re-timed best is
the one every other output names -- the summary, --summary-json, --final-config and the results
database's best (``tunerlib report``) -- with the table's re-timed value and the value recorded
during the search."""
import json
from pathlib import Path
from typing import Any, Dict

import pytest

from tunerlib.report.data import load_runs


def assert_one_best(summary_json: Path, final_config: Path, database: Path, config: Dict[str, Any],
                    seconds: float) -> Dict[str, Any]:
    """Fail unless every output names ``config`` (the table's best) with re-timed ``seconds``; returns
    the summary JSON."""
    summary = json.loads(Path(summary_json).read_text())
    assert summary["best_configuration"] == config, "the summary names another configuration than the table"
    assert summary["best_value"] == pytest.approx(seconds), "the summary's value is not the table's re-timed one"
    assert summary["retimed"] is not None and summary["recorded_value"] is not None
    assert json.loads(Path(final_config).read_text()) == config, "--final-config differs from the table"
    run = load_runs(str(database))[-1]
    best = run.best_point()
    assert best.config == config, "the database's best differs from the table"
    assert best.value == pytest.approx(summary["recorded_value"]) and run.retimed_value == pytest.approx(seconds)
    return summary
