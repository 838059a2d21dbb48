"""``tools/compare.py --first-seed N`` runs seeds N .. N + SEEDS - 1: the same runs as those seeds of a
longer comparison (for validating on seeds not used while developing)."""
import json

from tools import compare


def _runs(tmp_path, name, *extra):
    out = tmp_path / f"{name}.json"
    assert compare.main(["--problems", "rosenbrock4d", "--techniques", "PureRandom", "--budgets", "15",
                         "--jobs", "1", "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())["rosenbrock4d|PureRandom"]


def test_first_seed_selects_the_later_seeds(tmp_path):
    four = _runs(tmp_path, "four", "--seeds", "4")
    later = _runs(tmp_path, "later", "--seeds", "2", "--first-seed", "2")

    def strip(runs):
        return [r[:-1] for r in runs]          # the last entry of a run is its CPU time
    assert len(four) == 4 and strip(later) == strip(four)[2:]
    assert strip(four)[0] != strip(four)[2]
