"""Tools and the installed recorded replay assume no data layout: run from another folder (the tools
importable from their checkout) without $TUNERLIB_SHARED_DIR they say in one line what to pass, and
with it (or the option) they work."""
import os
import sys
from pathlib import Path

import pytest

import zygote

SHARED = Path(os.environ["TUNERLIB_SHARED_DIR"])   # tests/conftest.py: ../shared unless set
KMEANS = SHARED / "data" / "gpu_cache" / "rise_baco" / "kmeans_rtxtitan.csv.gz"
needs_kmeans = pytest.mark.skipif(not KMEANS.is_file(), reason=f"{KMEANS} not found")


REPO = Path(__file__).resolve().parents[2]   # the checkout holding tools/


def _run(tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if k != "TUNERLIB_SHARED_DIR"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return zygote.run([sys.executable, "-m", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                      timeout=300)


def test_replay_problems_without_a_shared_folder_says_what_to_pass(tmp_path):
    done = _run(tmp_path, "tools.replay_problems")
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr                    # one line, no traceback
    assert lines[0].startswith("replay_problems: error: ")
    assert "pass --shared DIR or set $TUNERLIB_SHARED_DIR" in lines[0]


def test_the_recorded_replay_tuner_without_a_shared_folder_says_what_to_pass(tmp_path):
    done = _run(tmp_path, "tunerlib.replay.recorded", "--benchmark", "rise_kmeans", "--database",
                str(tmp_path / "r.db"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "pass --shared-dir DIR" in lines[0] and "TUNERLIB_SHARED_DIR" in lines[0]


@needs_kmeans
def test_with_the_option_or_a_table_file_they_work(tmp_path):
    done = _run(tmp_path, "tools.replay_problems", "--shared", str(SHARED), "rise_kmeans")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split()[:3] == ["rise_kmeans", "3361", "3361"]
    done = _run(tmp_path, "tools.replay_problems", f"rise_kmeans={KMEANS}")   # a file needs no folder
    assert done.returncode == 0, done.stderr
    done = _run(tmp_path, "tunerlib.replay.recorded", "--benchmark", "rise_kmeans", "--shared-dir", str(SHARED),
                "--test-limit", "10", "--seed", "1", "--database", str(tmp_path / "r.db"))
    assert done.returncode == 0 and "replay: 10 evaluations" in done.stdout, done.stderr
    assert _run(tmp_path, "tunerlib.replay.recorded", "--help").stdout.startswith(
        "usage: python -m tunerlib.replay.recorded")


def test_compare_without_an_examples_folder_is_an_input_error(tmp_path):
    """A checkout without examples/ (or --examples naming no folder): one line saying to pass --examples, exit 2."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    code = ("import runpy, sys; from pathlib import Path; import tools.example_problems as e; "
            "e.CHECKOUT_EXAMPLES = Path(sys.argv[1]); sys.argv[1:] = ['--problems', 'rosenbrock4d']; "
            "runpy.run_module('tools.compare', run_name='__main__')")
    for done in (_run(tmp_path, "tools.compare", "--examples", str(tmp_path / "none"), "--problems",
                      "rosenbrock4d"),
                 zygote.run([sys.executable, "-c", code, str(tmp_path / "none")], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)):
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and done.stdout == "", done.stderr
        assert lines[0].startswith("compare: ") and "--examples" in lines[0]
