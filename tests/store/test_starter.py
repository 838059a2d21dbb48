"""The starter history (tunerlib/store/starter.py): used read-only when the user's store holds no run of
a similar search space, ignored when it does, never written; rebuilt by ``tunerlib history starter``."""
import gzip
import hashlib
import json

from tunerlib import TuningRunManager
from tunerlib.store import CrossSessionStore
from tunerlib.store import starter as starter_module
from tunerlib.store.starter import STARTER, USER, read_starter, recommendation_table, write_starter
from tunerlib.testing import SPACES

from stores import PERMUTATION, affinity_pairs, hand_run

FLOATS = '[[["FloatParameter"],4]]'
PERM = {"PermutationParameter": 1}


def _starter(tmp_path, *runs):
    """A starter history file made from a store holding ``runs``."""
    with CrossSessionStore(str(tmp_path / "history.db")) as store:
        for run in runs:
            store.write_run(run)
        path = tmp_path / "starter.json.gz"
        write_starter(store, path)
    return path


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_empty_user_store_falls_back_to_the_starter_read_only(tmp_path):
    path = _starter(tmp_path, hand_run("att48", affinity_pairs({"PSO-OX3": 0.3, "GA-OX3": 0.1})))
    before, mtime = _digest(path), path.stat().st_mtime_ns
    table, source, where = recommendation_table(str(tmp_path / "missing.db"), PERM, starter_path=path)
    assert source == STARTER and "starter history" in where
    assert {r.program for r in table.reps.values()} == {"att48"}
    assert table.affinity[next(iter(table.reps))]["PSO-OX3"][0] == 0.3
    assert not (tmp_path / "missing.db").exists()
    assert _digest(path) == before and path.stat().st_mtime_ns == mtime


def test_a_user_store_with_a_similar_run_is_used_and_the_starter_ignored(tmp_path):
    path = _starter(tmp_path, hand_run("att48", affinity_pairs({"PSO-OX3": 0.3})))
    user = str(tmp_path / "user.db")
    with CrossSessionStore(user) as store:
        store.write_run(hand_run("mine", affinity_pairs({"GA-inv": 0.4}), FLOATS))
    # only a dissimilar run (floats) in the user's store: a tour space still learns from the starter
    assert recommendation_table(user, PERM, starter_path=path)[1] == STARTER
    with CrossSessionStore(user) as store:
        store.write_run(hand_run("mytour", affinity_pairs({"GA-inv": 0.4}), PERMUTATION))
    table, source, where = recommendation_table(user, PERM, starter_path=path)
    assert source == USER and where.startswith("store ")
    assert {r.program for r in table.reps.values()} == {"mine", "mytour"}
    # and without the starter, a dissimilar store is still the table
    assert recommendation_table(user, {"EnumParameter": 2}, starter=False, starter_path=path)[1] == USER


def test_a_run_learns_from_the_starter_and_never_writes_it(tmp_path, monkeypatch, capsys):
    """Through a tuning run with --upload: the recommendation bandit's DBI set comes from the starter
    history, the run is uploaded to the user's store, and the starter file is unchanged."""
    runs = [hand_run("tour", affinity_pairs({"OrOptGreedyMutation": 0.3, "UniformGreedyMutation": 0.2}))
            for _ in range(2)]
    path = _starter(tmp_path, *runs)
    monkeypatch.setattr(starter_module, "STARTER_PATH", path)
    before = _digest(path)
    m, fn = SPACES["permutation"]()
    user = tmp_path / "user.db"
    manager = TuningRunManager.for_space(m, program_name="p", test_limit=60, seed=2, database="memory://",
                                         technique=["rec-bndt-dbi"], store=str(user), upload=True)
    assert "learns from the starter history starter.json.gz" in capsys.readouterr().err
    assert manager.run.technique.recommender.log[0]["representations"]
    while (desired := manager.get_next_desired_result()) is not None:
        manager.report_result(desired, _result(fn(desired.configuration.data)))
    manager.finish()
    assert _digest(path) == before
    # the upload went to the user's store, which now holds a similar run
    assert recommendation_table(str(user), PERM, starter_path=path)[1] == USER


def _result(value):
    from tunerlib import Result
    return Result(time=value)


def test_the_starter_holds_no_configuration_values_and_is_reproducible(tmp_path):
    run = hand_run("att48", affinity_pairs({"PSO-OX3": 0.3}), configurations=[(1.0, {"tour": "MARKER-7"})])
    path = _starter(tmp_path, run)
    first = path.read_bytes()
    with CrossSessionStore(str(tmp_path / "history.db")) as store:
        write_starter(store, path)
    assert path.read_bytes() == first
    text = gzip.decompress(first).decode()
    assert "MARKER-7" not in text and set(json.loads(text)) == {"format", "representations", "snapshots",
                                                                 "techniques"}
    assert read_starter(tmp_path / "absent.json.gz") is None


def test_history_starter_command_writes_the_file_and_rejects_a_missing_store(tmp_path, cli):
    _starter(tmp_path, hand_run("att48", affinity_pairs({"PSO-OX3": 0.3})))
    out = tmp_path / "again.json.gz"
    done = cli("history", "starter", "--store", tmp_path / "history.db", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "1 representations, 1 runs" in done.stdout and read_starter(out).representations
    done = cli("history", "starter", "--store", tmp_path / "none.db", "--out", out)
    assert done.returncode == 2 and "does not exist yet" in done.stderr and done.stderr.count("\n") == 1
