"""A known constraint that cannot be evaluated: one line at start-up, exit 2 and no run recorded;
one that fails only on some configuration later counts as violated there (one warning line) and the
run goes on."""
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tunerlib.parameters import ConfigurationError, ConfigurationManipulator, IntegerParameter

SCRIPT = Path(__file__).parent / "scripts" / "constraint_tuner.py"


def _run(tmp_path, *args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args), "--database", str(tmp_path / "c.db"),
                           "--seed", "3"], capture_output=True, text=True, timeout=300)


def _runs(db: Path):
    if not db.exists():
        return []
    with sqlite3.connect(db) as con:
        tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
        return list(con.execute("select state from tuning_run")) if "tuning_run" in tables else []


@pytest.mark.parametrize("constraint, needles", [
    ("a < 'x'", ["constraint \"a < 'x'\"", "'<' not supported between instances of 'int' and 'str'",
                 "checked at start-up"]),
    ("a < 2**10000000", ["constraint 'a < 2**10000000'", "undefined arithmetic (power too large)",
                         "would reject every configuration; fix the expression"]),
    ("a % (b - b) == 0", ["undefined arithmetic (integer modulo by zero)"]),
    ("len(a) > 2", ["constraint 'len(a) > 2'"]),
])
def test_a_constraint_that_cannot_be_evaluated_stops_the_start_with_one_line(tmp_path, constraint, needles):
    for extra in ((), ("--resume", "last")):
        proc = _run(tmp_path, "--constraint", constraint, "--test-limit", "5", *extra)
        assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
        err = proc.stderr.strip()
        assert err.count("\n") == 0 and err.startswith("ConstraintTuner: error: "), err
        for needle in needles:
            assert needle in err, err
        assert _runs(tmp_path / "c.db") == []


def test_a_constraint_that_fails_mid_run_counts_as_violated_and_the_run_completes(tmp_path):
    proc = _run(tmp_path, "--fail-after", "64", "--test-limit", "40")
    assert proc.returncode == 0, proc.stderr[-3000:]
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "constraint 'breaks_later' raised TypeError" in warnings[0], proc.stderr
    assert "count as violating it" in warnings[0]
    assert _runs(tmp_path / "c.db") == [("COMPLETE",)]
    with sqlite3.connect(tmp_path / "c.db") as con:
        assert con.execute("select count(*) from result").fetchone()[0] == 40


def _space(constraint: str) -> ConfigurationManipulator:
    m = ConfigurationManipulator([IntegerParameter("a", 0, 10 ** 6), IntegerParameter("b", 0, 4)])
    m.add_constraint(constraint)
    return m


def test_the_start_up_check_raises_configuration_errors_and_then_tolerates_misuse(capsys):
    with pytest.raises(ConfigurationError, match=r"^constraint \"a < 'x'\": '<' not supported"):
        _space("a < 'x'").check_constraints()
    rare = _space("a != 777 or b < 'x'")           # misuse on a value no sample draws
    with pytest.raises(ValueError):
        rare.is_feasible({"a": 777, "b": 1})       # outside a run a misuse raises, as documented
    rare.check_constraints()
    assert rare.is_feasible({"a": 5, "b": 1})
    assert not rare.is_feasible({"a": 777, "b": 1}) and not rare.is_feasible({"a": 777, "b": 2})
    (c,) = rare.constraints
    assert c.misuse_count == 2 and "'<' not supported" in c.misuse
    assert capsys.readouterr().err.count("warning") == 1


def test_a_constraint_undefined_on_some_configurations_passes_the_check():
    m = _space("a % b == 0")                       # b = 0 is undefined there: violated, not an error
    m.check_constraints()
    assert not m.is_feasible({"a": 4, "b": 0}) and m.is_feasible({"a": 4, "b": 2})
