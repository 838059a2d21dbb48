"""tools/doc_figures.py: README figures are marked with their command; --check re-runs the
deterministic ones and fails on a mismatch, naming the README line and the new value.

``test_the_example_readmes_fast_figures_are_current`` is how CI runs it: every fast figure of every
example README (models, replays, seeded searches; those marked ``slow`` are skipped) is re-run."""
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import zygote
from tools import doc_figure_runs as runs

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("doc_figures", REPO / "tools" / "doc_figures.py")
figures = importlib.util.module_from_spec(_spec)
sys.modules["doc_figures"] = figures
_spec.loader.exec_module(figures)

PRINT = "$ python -c \"print('speed 1.5'); print('rows 3'); print('tunerlib: run 1b4e28ba-2fa1-11d2-883f-0016d3cca427')\""


def _readme(tmp_path, body):
    path = tmp_path / "README.md"
    path.write_text(body)
    return str(path)


def test_a_current_figure_passes_and_a_stale_one_names_line_and_new_value(tmp_path, capsys):
    ok = _readme(tmp_path, f"intro\n\n<!-- figure: check -->\n```\n{PRINT}\nspeed 1.5\nrows 3\n"
                           "tunerlib: run 00000000-0000-0000-0000-000000000000\n```\n")
    assert figures.main(["--check", ok]) == 0
    stale = _readme(tmp_path, f"intro\n\n<!-- figure: check -->\n```\n{PRINT}\nspeed 1.4\nrows 3\n...\n```\n")
    assert figures.main(["--check", stale]) == 1
    err = capsys.readouterr().err
    assert f"{stale}:3: stale figure" in err
    assert f"{stale}:6: README: speed 1.4" in err and "now:    speed 1.5" in err


def test_update_rewrites_stale_values_and_keeps_cut_lines_cut(tmp_path):
    path = _readme(tmp_path, f"<!-- figure: check -->\n```\n{PRINT}\nspeed 9 ...\nrows 2\n...\n```\ntail\n")
    assert figures.main(["--update", path]) == 0
    assert "```\n$ python" in Path(path).read_text()
    assert Path(path).read_text().endswith("\nspeed 1 ...\nrows 3\n...\n```\ntail\n")
    assert figures.main(["--check", path]) == 0


def test_update_replaces_a_block_without_wildcards(tmp_path):
    path = _readme(tmp_path, f"<!-- figure: check -->\n```\n{PRINT}\nold\n```\n")
    assert figures.main(["--update", path]) == 0
    assert figures.main(["--check", path]) == 0
    assert "speed 1.5\nrows 3\ntunerlib: run" in Path(path).read_text()


def test_a_table_after_a_command_block(tmp_path, capsys):
    cmd = "$ python -c \"print('| a | b |'); print('|---|---|'); print('| 1 | 2 |')\""
    path = _readme(tmp_path, f"<!-- figure: check -->\n```sh\n{cmd}\n```\n\n| a | b |\n|---|---|\n| 1 | 3 |\n"
                             "<!-- /figure -->\nafter\n")
    assert figures.main(["--check", path]) == 1
    assert f"{path}:8: README: | 1 | 3 |" in capsys.readouterr().err
    assert figures.main(["--update", path]) == 0
    assert Path(path).read_text().endswith("| 1 | 2 |\n<!-- /figure -->\nafter\n")


def test_measured_and_slow_figures_are_not_run_by_default(tmp_path, capsys):
    fail = "$ python -c \"import sys; sys.exit(3)\""
    path = _readme(tmp_path, f"<!-- figure: measured -->\n```\n{fail}\n1.0 ms\n```\n"
                             f"<!-- figure: check slow timeout=5 -->\n```\n{fail}\nx\n```\n")
    assert figures.main(["--check", path]) == 0
    assert figures.main(["--check", "--slow", path]) == 1
    assert "exited with 3" in capsys.readouterr().err
    assert figures.main(["--list", path]) == 0
    listed = capsys.readouterr().out
    assert "\tmeasured\t" in listed and "\tcheck slow\t" in listed


@pytest.mark.parametrize("body, message", [
    ("<!-- figure: check -->\n```\nno command\n```\n", "must start with its command"),
    ("<!-- figure: guess -->\n```\n$ true\n```\n", "needs a kind"),
    ("<!-- figure: check -->\ntext\n", "must be followed by a fenced block"),
    ("```\ntunerlib: prog: stopped after 3 tests\n```\n", "not marked as a figure"),
    # a command-only figure whose end marker is missing must not swallow (and so skip) the next figure
    ("<!-- figure: measured -->\n```\n$ true\n```\n| a |\n\n<!-- figure: check -->\n```\n$ true\n```\n"
     "<!-- /figure -->\n", "runs into the figure marked at line 7"),
])
def test_malformed_or_unmarked_figures_are_problems(tmp_path, capsys, body, message):
    assert figures.main(["--check", _readme(tmp_path, body)]) == 1
    assert message in capsys.readouterr().err


def test_the_sandbox_leaves_out_a_results_database_the_checkout_is_writing(tmp_path, monkeypatch):
    """A run in the checkout's root leaves tunerlib.db with its -wal/-shm files there while it runs; a
    README command's own default database must not be linked to them (it could not be created once
    the run deleted them)."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    for name in ("README.md", "tunerlib.db", "tunerlib.db-wal", "tunerlib.db-shm", "tunerlib.db-journal", ".git"):
        (repo / name).write_text("")
    monkeypatch.setattr(runs, "REPO", repo)
    (tmp_path / "sandbox").mkdir()
    work = runs._sandbox(tmp_path / "sandbox")
    assert sorted(p.name for p in work.iterdir()) == ["README.md"]


def test_wildcards():
    assert figures.matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert figures.matches(["a", "...", "d"], ["a", "d"])
    assert not figures.matches(["a", "d"], ["a", "b", "d"])
    assert figures.matches(["long line ..."], ["long line that goes on"])
    assert figures.matches(["stopped after 9 tests in 1.0 s"], ["stopped after 9 tests in 3.7 s"])
    assert not figures.matches(["stopped after 9 tests in 1.0 s"], ["stopped after 8 tests in 1.0 s"])


@pytest.mark.skipif(not runs.shared_dir().is_dir(), reason="the shared data folder (../shared or "
                    "$TUNERLIB_SHARED_DIR) is absent: the replay figures cannot run")
def test_the_example_readmes_fast_figures_are_current(capsys, monkeypatch):
    """CI's check: a behaviour change that alters a deterministic README figure fails here until the
    README is updated (python tools/doc_figures.py --update --only <command>). The README commands
    run as zygote children (tests/helpers/zygote.py), with the hash seed the tool gives them."""
    monkeypatch.setattr(runs, "subprocess", SimpleNamespace(**{**vars(subprocess), "Popen": zygote.popen}))
    code = figures.main(["--check", "--budget", "120"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert " ok " in captured.out
