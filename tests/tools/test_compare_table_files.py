"""tools/compare.py --problems BENCHMARK=FILE[@table]: a table recorded on another machine, named by its
file, is searched in its kernel's space (or over its recorded rows) with no shared folder needed."""
import re

import pytest

from other_machine import RISE_BACO, needs_rise, perturb_csv
from tunerlib.parameters import FeasibleSpace
from tools import compare
from tools.problems import default_problems
from tools.replay_problems import is_table_file_name


def test_table_file_names_are_told_apart_from_shared_names(tmp_path):
    table = tmp_path / "kmeans_elsewhere.csv.gz"
    table.write_bytes(b"")
    assert is_table_file_name(f"rise_kmeans={tmp_path / 'missing.csv.gz'}")
    assert is_table_file_name(f"rise_kmeans={table}@table")
    assert is_table_file_name(str(table)) and is_table_file_name(f"{table}@table")
    assert not is_table_file_name("rise_kmeans") and not is_table_file_name("rise_kmeans@table")
    assert not is_table_file_name(str(tmp_path / "missing.csv.gz"))


@needs_rise
def test_compare_runs_other_machines_tables_without_a_shared_folder(tmp_path, capsys):
    kmeans = perturb_csv(RISE_BACO / "kmeans_rtxtitan.csv.gz", tmp_path / "kmeans_other.csv.gz", seed=3)
    harris = perturb_csv(RISE_BACO / "harris_rtxtitan.csv.gz", tmp_path / "harris_other.csv.gz", seed=4)
    names = [f"rise_kmeans={kmeans}", f"rise_harris={harris}@table"]
    problems = default_problems(names, shared=tmp_path / "no_shared_here")
    assert list(problems) == names
    full, table = problems[names[0]], problems[names[1]]
    # the kernel defines the space (its known constraints included); the table only answers
    assert full.data["replay"] and not full.data["table_space"] and table.data["table_space"]
    shipped = default_problems(["rise_kmeans"], shared=RISE_BACO.parents[2])["rise_kmeans"]
    assert FeasibleSpace(full.make_space()).size() == FeasibleSpace(shipped.make_space()).size()
    assert full.optimum == pytest.approx(min(r.value for _, r in full.data["benchmark"].table.items() if r.ok))
    argv = ["--problems", *names, "--techniques", "PureRandom", "--seeds", "2", "--budgets", "5", "10",
            "--jobs", "1", "--shared", str(tmp_path / "no_shared_here"), "--score"]
    assert compare.main(argv) == 0
    out = capsys.readouterr().out
    assert f"== {names[0]} (optimum" in out and f"== {names[1]} (optimum" in out
    assert out.count("PureRandom (n=2)") == 2


def test_a_missing_or_foreign_table_file_is_a_one_line_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        compare.main(["--problems", f"rise_kmeans={tmp_path / 'missing.csv.gz'}", "--seeds", "1"])
    assert exc.value.code == 2
    assert re.match(r"^compare: error: replay table .*missing\.csv\.gz not found[^\n]*\n$", capsys.readouterr().err)
    foreign = tmp_path / "foreign.csv"
    foreign.write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit) as exc:
        compare.main(["--problems", f"rise_kmeans={foreign}", "--seeds", "1"])
    assert exc.value.code == 2
    assert re.match(r"^compare: error: .*foreign\.csv: no 'compute_time' column[^\n]*\n$", capsys.readouterr().err)