"""What a tuning run takes from and gives to the cross-session store: recommendations for a
recommendation bandit (attached before the technique is bound), warm-start configurations (``--warm-start``)
and the upload of the finished run (``--upload``). The store is opened, and its modules imported, only
when one of them is used.

Recommendations come from the user's store when it holds a run of a similar search space, else from
the starter history shipped with tunerlib (:mod:`.store.starter`; off with ``--no-starter-history``).
A store that cannot be opened, or that knows nothing yet, never stops a run: the bandit runs as its AUC
bandit, warm start adds nothing, and the run says so once on stderr (unless ``--quiet``).
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from .db import ResultsStore
from .parameters import ConfigurationManipulator
from .techniques import Technique, create_technique

if TYPE_CHECKING:  # the store's modules are imported only when a run uses the store
    from .store.recommender import StoreRecommender

Say = Callable[[str], None]


def stderr_say(quiet: bool) -> Say:
    """A one-line notice printer (silent with ``--quiet``)."""
    return (lambda text: None) if quiet else (lambda text: print(f"tunerlib: {text}", file=sys.stderr))


def _build(name: str) -> Technique:
    return create_technique([name])


def attach_recommender(technique: Technique, options: Any, manipulator: ConfigurationManipulator,
                       say: Say) -> Optional[StoreRecommender]:
    """Give ``technique`` its recommender when it is a recommendation bandit (before it is bound);
    returns the recommender, or None (not a recommendation bandit, or a store that cannot help)."""
    if not getattr(technique, "uses_store", False):
        return None
    from .store import StoreError
    from .store.recommender import StoreRecommender, describe_table
    from .store.representation import entries_of, type_counts
    from .store.starter import STARTER, recommendation_table
    metric = getattr(options, "affinity_metric", None)
    if metric:
        technique.metric = metric
    counts = type_counts(entries_of(manipulator.parameters))
    try:
        table, source, where = recommendation_table(
            getattr(options, "store", None), counts, technique.metric,
            getattr(options, "store_exclude", None) or (), not getattr(options, "no_starter_history", False))
    except StoreError as exc:
        say(f"{technique.name} runs as a plain AUC bandit: {exc}")
        return None
    why = describe_table(table)
    if why is not None:
        say(f"{technique.name} runs as a plain AUC bandit: {where}: {why}")
        return None
    if source == STARTER:
        say(f"{technique.name} learns from the {where}: the store holds no run of a similar search space")
    recommender = StoreRecommender(table, counts)
    technique.attach_recommender(recommender, _build)
    return recommender


def warm_start(options: Any, manipulator: ConfigurationManipulator, parameter_info: str,
               say: Say) -> List[Dict[str, Any]]:
    """The configurations ``--warm-start`` adds to the seeds (empty when off or when the store has none)."""
    if not getattr(options, "warm_start", False):
        return []
    from .store import CrossSessionStore, StoreError
    from .store.warm import warm_start_configurations
    try:
        with CrossSessionStore(getattr(options, "store", None), create=False) as store:
            configs = warm_start_configurations(store, manipulator, parameter_info)
            where = store.display_url
    except StoreError as exc:
        say(f"--warm-start adds nothing: {exc}")
        return []
    if not configs:
        say(f"--warm-start adds nothing: store {where} holds no configurations of this search space "
            "(runs are uploaded with configurations only with --include-configurations)")
    return configs


def upload_finished_run(options: Any, db: ResultsStore, run_id: int, say: Say) -> Optional[str]:
    """Upload the run (``--upload``) and say what happened; returns the outcome or None when off."""
    if not getattr(options, "upload", False):
        return None
    from .store import CrossSessionStore, StoreError
    from .store.export import export_run
    try:
        stored = export_run(db, run_id, bool(getattr(options, "include_configurations", False)))
        if stored is None:
            say("--upload: the run has no results; nothing uploaded")
            return None
        with CrossSessionStore(getattr(options, "store", None)) as store:
            outcome = store.write_run(stored)
            say(f"run {stored.uuid} uploaded to {store.display_url} ({outcome})")
            return outcome
    except (StoreError, ValueError) as exc:
        say(f"--upload failed, the results database is unchanged: {exc}")
        return None
