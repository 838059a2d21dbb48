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

import logging
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Protocol, cast

from ..db import ResultsStore
from ..logs import tell
from ..options import DEFAULT_TEST_CAP
from ..parameters import ConfigurationManipulator
from ..techniques import SearchContext, Technique, create_technique

if TYPE_CHECKING:  # the store's modules are imported only when a run uses the store
    from ..store.recommender import StoreRecommender

Say = Callable[[str], None]


class StoreUser(Protocol):
    """A technique that asks the cross-session store (``uses_store`` true: the recommendation bandits, the
    default technique): what :func:`attach_recommender` sets and calls."""

    name: str
    metric: str

    def attach_recommender(self, recommender: Any, build: Callable[[str], Technique]) -> None:
        """Called before bind: where recommendations come from and how a named technique is built."""
log = logging.getLogger(__name__)


def stderr_say(quiet: bool) -> Say:
    """A one-line notice printer: an info record of this module's logger where a command-line entry
    point configured logging (:mod:`.logs`: its level decides, ``--quiet`` is warning), else, for
    library callers that configured nothing, the line on stderr unless ``quiet``."""
    return lambda text: tell(log, logging.INFO, text, quiet)


def _build(name: str) -> Technique:
    return create_technique([name])


def search_context(options: Any, objectives: int = 1) -> SearchContext:
    """What the run tells its root technique before binding it: budget, parallelism, store, objectives."""
    test_limit, stop_after = options.test_limit, options.stop_after
    kind = "tests" if test_limit is not None else "time" if stop_after is not None else "default"
    if kind == "default":
        test_limit = DEFAULT_TEST_CAP
    store = getattr(options, "store", None) or os.environ.get("TUNERLIB_STORE") or None
    return SearchContext(test_limit, kind, stop_after, max(1, int(getattr(options, "parallelism", 1) or 1)), store,
                         objectives)


def prepare_technique(technique: Technique, options: Any, manipulator: ConfigurationManipulator,
                      say: Say, objectives: int = 1) -> None:
    """Called before the root technique is bound: give it the run's :class:`SearchContext`, its
    recommender (a technique that uses the store) and, for a technique that explains its decisions
    (``decision_listeners``: ``auto``), a listener printing each one on stderr."""
    technique.set_context(search_context(options, objectives))
    attach_recommender(technique, options, manipulator, say)
    listeners = getattr(technique, "decision_listeners", None)
    if listeners is not None:
        listeners.append(lambda entry: say(f"{technique.name}: {entry['technique']} -- {entry['reason']}"
                                           + (f" (at evaluation {entry['evaluation']})" if entry["evaluation"]
                                              else "")))


def decisions_extra(technique: Technique) -> Dict[str, Any]:
    """``{"technique_decisions": [...]}`` for the summary of a run whose technique explains its
    decisions (``auto``), ``{"technique_swaps": [...]}`` for one that swapped techniques (a
    recommendation bandit's :attr:`swap_log`), else ``{}``."""
    decisions = getattr(technique, "decisions", None)
    swaps = getattr(technique, "swap_log", None)
    out: Dict[str, Any] = {"technique_decisions": [dict(d) for d in decisions]} if decisions else {}
    if swaps:
        out["technique_swaps"] = [dict(s) for s in swaps]
    return out


def attach_recommender(technique: Technique, options: Any, manipulator: ConfigurationManipulator,
                       say: Say) -> Optional[StoreRecommender]:
    """Give ``technique`` its recommender when it is a recommendation bandit (before it is bound);
    returns the recommender, or None (not a recommendation bandit, or a store that cannot help)."""
    if not getattr(technique, "uses_store", False):
        return None
    user = cast(StoreUser, technique)  # a technique that says it uses the store has what StoreUser names
    from ..store import StoreError
    from ..store.recommender import StoreRecommender, describe_table
    from ..store.representation import entries_of, type_counts
    from ..store.starter import STARTER, recommendation_table
    metric = getattr(options, "affinity_metric", None)
    if metric:
        user.metric = metric
    counts = type_counts(entries_of(manipulator.parameters))
    try:
        table, source, where = recommendation_table(
            getattr(options, "store", None), counts, user.metric,
            getattr(options, "store_exclude", None) or (), not getattr(options, "no_starter_history", False))
    except StoreError as exc:
        _say_without_store(say, technique, str(exc))
        return None
    why = describe_table(table)
    if why is not None:
        _say_without_store(say, technique, f"{where}: {why}")
        return None
    if source == STARTER and getattr(technique, "without_store", "") is not None:
        say(f"{technique.name} learns from the {where}: the store holds no run of a similar search space")
    recommender = StoreRecommender(table, counts)
    recommender.source = "the starter history" if source == STARTER else "the store"
    user.attach_recommender(recommender, _build)
    return recommender


def _say_without_store(say: Say, technique: Technique, why: str) -> None:
    """Say why the store cannot help, in the technique's words (``without_store``; None: say nothing)."""
    words = getattr(technique, "without_store", "runs as a plain AUC bandit")
    if words is not None:
        say(f"{technique.name} {words}: {why}")


def warm_start(options: Any, manipulator: ConfigurationManipulator, parameter_info: str,
               say: Say) -> List[Dict[str, Any]]:
    """The configurations ``--warm-start`` adds to the seeds (empty when off or when the store has none)."""
    if not getattr(options, "warm_start", False):
        return []
    from ..store import CrossSessionStore, StoreError
    from ..store.warm import warm_start_choices
    try:
        with CrossSessionStore(getattr(options, "store", None), create=False) as store:
            chosen = warm_start_choices(store, manipulator, parameter_info)
            where = store.display_url
    except StoreError as exc:
        say(f"--warm-start adds nothing: {exc}")
        return []
    if not chosen:
        say(f"--warm-start adds nothing: store {where} holds no configurations of this search space "
            "(runs are uploaded with configurations only with --include-configurations)")
    else:
        say(warm_start_line(chosen, where))
    return [config for config, _ in chosen]


def warm_start_line(chosen: List[Any], where: str) -> str:
    """What ``--warm-start`` seeded: how many stored configurations, from which runs (UUID prefixes,
    with how many each gave), from which store."""
    runs: Dict[str, int] = {}
    for _, uuid in chosen:
        runs[uuid] = runs.get(uuid, 0) + 1
    listed = ", ".join(f"{uuid[:8]} ({n})" for uuid, n in runs.items())
    return (f"--warm-start seeded {len(chosen)} stored configuration{'s' if len(chosen) != 1 else ''} of this "
            f"search space, measured first, from {len(runs)} run{'s' if len(runs) != 1 else ''} of store "
            f"{where}: {listed}")


def upload_finished_run(options: Any, db: ResultsStore, run_id: int, say: Say) -> Optional[str]:
    """Upload the run (``--upload``) and say what happened; returns the outcome or None when off."""
    if not getattr(options, "upload", False):
        return None
    from ..store import CrossSessionStore, StoreError
    from ..store.export import export_run
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
