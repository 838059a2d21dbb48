"""Continuing a resumed run: re-derive the technique's state from the run's record, exactly where the
recorded requests can be replayed (``resume.HistoryReplay``), else by feeding the recorded results to a new
technique.  Called once by ``TuningRun.prepare`` for a ``--resume``.
"""
from __future__ import annotations

from typing import Any

from ..executors.orphans import requeue_noting_orphans
from ..techniques import Proposal
from .cross_session import warm_start
from .resume import Diverged, HistoryReplay
from .setup import bound_technique, new_search

__all__ = ["continue_history"]


def continue_history(run: Any) -> None:
    """Re-derive the technique's state from the run's record: exactly where possible, else by
    feeding the recorded results to a new technique."""
    cap = run.test_cap()
    done = run.resumed_from["tests"]
    run.orphans = requeue_noting_orphans(run.db, run.run_id, lambda: run.db.requeue_unfinished(
        run.run_id, None if cap is None else cap - done))
    replay = HistoryReplay(run.db, run.run_id)
    try:
        warm = warm_start(run.options, run.manipulator, run.manipulator.parameter_info(), run.say)
        run.search.restore(replay, cap, [Proposal(cfg, "seed") for cfg in run.seeds + warm])
        problems = replay.leftover()
        if problems:
            raise Diverged(problems[0])
        run.history_replay = "exact"
    except Diverged:
        rebuild_from_results(run)


def rebuild_from_results(run: Any) -> None:
    """The technique anew (salted by the record), fed every recorded result by a new search driver."""
    run.history_replay = "results"
    run.technique = bound_technique(run, f":resume:{run.db.counts_by_state(run.run_id)}")
    run.search = new_search(run)
    run.search.restore(None, None, [Proposal(cfg, "seed") for cfg in run.seeds])
