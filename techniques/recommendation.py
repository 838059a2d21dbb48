"""Recommendation bandits (DeepTuner thesis ch. 6): AUC bandits that learn from earlier tuning runs.

A :class:`RecommendationBandit` is an AUC bandit that, every ``interval`` of its own requests, computes
the search affinity of the techniques it holds, asks a :class:`Recommender` (the cross-session store,
attached by the run before :meth:`bind`) for the techniques that did best on the stored representation
whose affinities correlate best with these, and swaps its worst technique (among those with at least
``min_age`` of the bandit's requests, so a technique the bandit starves is judged too, and only when
that one's affinity is at most half the held techniques' mean)
for the best recommended one it does not hold (the recommender offers only techniques that scored
better there than every held one). The DBI variant
(``initial_from_store``) first builds its set of ``size`` techniques from the representation nearest by
parameter structure. ``rec`` variants set C so high that uses are spread evenly (no bandit).

Without a recommender, or with one that knows nothing, it behaves exactly like its AUC bandit (the
run says so once). Techniques never touch the store: the recommender answers with technique names
and the bandit builds them with the ``build`` function given alongside it.

Search affinity of a held technique: ``new-bests`` = new bests / requests (thesis); ``improvement``
= summed relative improvement of its new bests / requests (thesis §8.2); requests count its proposals
that were measured (duplicates excluded). ``metric`` also says how the store scores techniques:
``run-rank`` (the default, chosen by tools/compare.py, see docs/benchmarks/store.md) ranks stored techniques by the rank
of the runs they took part in, and uses new-bests affinities for the live side.
"""
from __future__ import annotations

import logging
import math
import random
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Sequence

from ..parameters import ConfigurationManipulator
from .bandit import AUCBandit, AUCBanditMetaTechnique
from .base import Feedback, Proposal, Technique, TechniqueError
from .meta import MetaTechnique
from .options import Option

log = logging.getLogger(__name__)

#: C of the ``rec`` variants: exploration dominates every AUC, so uses are spread evenly
EVEN_C = 1.0e6
#: how the store scores techniques: an affinity measured in each run (``new-bests``, ``improvement``) or
#: ``run-rank``; the live affinity of a running bandit is "improvement" for improvement, else new-bests
AFFINITY_METRICS = ("new-bests", "improvement", "run-rank")
#: a held technique is swapped out only when its affinity is at most this share of the mean affinity
#: of the held techniques; 1.0 (the default, as in the thesis) always lets the worst one go. Measured
#: with tools/compare.py (leave-one-out TSPLIB, 20 seeds): 0.5 kept sets that were bad from the start
#: (rec-bndt-A on rbg323 3.88x vs 2.65x, ftv44 1.65x vs 1.48x) and gained nothing on the symmetric ones.
SWAP_BELOW = 1.0
#: feedback kept for replay into a technique swapped in mid-run (the most recent ones)
REPLAY_LIMIT = 10000


class Recommender(Protocol):
    """What a recommendation bandit asks the store (implemented in tunerlib.store.recommender)."""

    def initial_techniques(self) -> List[str]:
        """Technique names ranked best first for the representation nearest by parameters (DBI);
        called once, at bind. Empty when the store knows nothing useful."""

    def recommend(self, affinities: Mapping[str, float]) -> List[str]:
        """Technique names ranked best first on the stored representation whose affinities correlate
        best with ``affinities`` (held technique -> affinity); called every ``interval`` requests."""


class _Affinity:
    __slots__ = ("requests", "new_bests", "improvement")

    def __init__(self) -> None:
        self.requests, self.new_bests, self.improvement = 0, 0, 0.0

    def value(self, metric: str) -> float:
        gained = self.improvement if metric == "improvement" else self.new_bests
        return gained / self.requests if self.requests else 0.0


def relative_gain(previous: float, new: float) -> float:
    """Relative improvement of a new best over the previous best, in [0, 1] (0 for the first, whose
    previous best is inf)."""
    if not math.isfinite(previous) or previous == new:
        return 0.0
    if previous == 0:
        return 1.0
    return min(1.0, max(0.0, (previous - new) / abs(previous)))


class RecommendationBandit(AUCBanditMetaTechnique):
    """AUC bandit whose technique set follows the store's recommendations (see the module docstring)."""

    description = "AUC bandit that swaps in techniques recommended by the cross-session store"

    OPTIONS = AUCBanditMetaTechnique.OPTIONS + (
        Option("interval", int, 50, 1, 1000000, 10, 200, "own requests between recommendation steps"),
        Option("swap", bool, True, doc="swap the worst held technique for a recommended one"),
        Option("initial_from_store", bool, False, doc="the initial technique set comes from the store (DBI)"),
        Option("size", int, 5, 1, 1000, doc="techniques held at once"),
        Option("metric", str, "run-rank", choices=AFFINITY_METRICS, doc="how stored techniques are scored"),
        Option("min_age", int, 100, 0, 1000000, 0, 200, "bandit requests a technique is held before it may be swapped out"),
        Option("swap_below", float, SWAP_BELOW, 0.0, 1000.0, 0.25, 1.0,
               "a held technique is swapped out when its affinity is at most this share of the mean "
               "(1.0 swaps the worst whatever its affinity: the thesis)"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    interval: int
    swap: bool
    initial_from_store: bool
    size: int
    metric: str
    min_age: int
    swap_below: float

    def __init__(self, techniques: Sequence[Technique], name: Optional[str] = None, **options: Any) -> None:
        super().__init__(techniques, name, **options)
        self.recommender: Optional[Recommender] = None
        self.build: Optional[Callable[[str], Technique]] = None
        self.swaps: List[List[str]] = []      #: [removed, added] in order
        #: one dict per swap: request, removed (and its affinity), added, source, representations
        self.swap_log: List[Dict[str, Any]] = []
        self.initial_source = "default"       #: "store" when the DBI set came from the store

    @property
    def uses_store(self) -> bool:
        """True when this bandit asks a recommender (swaps or a DBI initial set)."""
        return self.swap or self.initial_from_store

    def attach_recommender(self, recommender: Recommender, build: Callable[[str], Technique]) -> None:
        """Called by the run before :meth:`bind`: where recommendations come from and how a named
        technique is built."""
        self.recommender, self.build = recommender, build

    # ---- set-up -----------------------------------------------------------------------------
    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        if self.initial_from_store and self.recommender is not None:
            self._initial_set(self.recommender, manipulator)
        super().bind(manipulator, rng, path)
        self._requests = 0
        self._removed: set = set()
        self._history: List[Feedback] = []
        self._affinity: Dict[str, _Affinity] = {t.name: _Affinity() for t in self.techniques}
        self._joined: Dict[str, int] = {}  #: the bandit's request count when a swapped-in technique joined

    def _initial_set(self, recommender: Recommender, manipulator: ConfigurationManipulator) -> None:
        chosen = self._buildable(recommender.initial_techniques(), manipulator, set(), self.size)
        if chosen:
            self._set_techniques(chosen)
            self.initial_source = "store"

    def _buildable(self, names: Sequence[str], manipulator: ConfigurationManipulator, held: set,
                   limit: int) -> List[Technique]:
        """Build up to ``limit`` of ``names`` (in order) that are not held, not meta-techniques and
        accept this space; names that cannot be built here are skipped."""
        out: List[Technique] = []
        build = self.build
        assert build is not None  # attached with the recommender, which every caller has
        for name in names:
            if len(out) >= limit:
                break
            if name in held or name in {t.name for t in out}:
                continue
            try:
                tech = build(name)
                tech.check_space(manipulator)
            except TechniqueError:
                continue
            if not isinstance(tech, MetaTechnique):
                out.append(tech)
        return out

    def _set_techniques(self, techniques: List[Technique]) -> None:
        self.techniques = list(techniques)
        self._by_name = {t.name: t for t in self.techniques}
        self.bandit = AUCBandit([t.name for t in self.techniques], self.bandit.C, self.bandit.window)

    # ---- running ----------------------------------------------------------------------------
    def propose(self) -> Optional[Proposal]:
        proposal = super().propose()
        if proposal is not None:
            self._requests += 1
            if self.swap and self.recommender is not None and self._requests % self.interval == 0:
                self._recommendation_phase(self.recommender)
        return proposal

    def observe(self, feedback: Feedback) -> None:
        previous = self.best_value
        sub = self.sub_technique_of(feedback)
        if sub is not None and not feedback.duplicate:
            tally = self._affinity.setdefault(sub.name, _Affinity())
            tally.requests += 1
            if feedback.was_new_best:
                tally.new_bests += 1
                tally.improvement += relative_gain(previous, feedback.value)
        super().observe(feedback)
        if self.swap:
            self._history.append(feedback)
            if len(self._history) > 2 * REPLAY_LIMIT:
                del self._history[:-REPLAY_LIMIT]

    def affinities(self) -> Dict[str, float]:
        """Search affinity of every held technique that has made a request."""
        return {t.name: self._affinity[t.name].value(self.metric) for t in self.techniques
                if self._affinity.get(t.name) and self._affinity[t.name].requests > 0}

    def _recommendation_phase(self, recommender: Recommender) -> None:
        current = self.affinities()
        eligible = [t for t in self.techniques if self._requests - self._joined.get(t.name, 0) >= self.min_age]
        if not eligible or not current:
            return
        mean = sum(current.get(t.name, 0.0) for t in self.techniques) / len(self.techniques)
        eligible = [t for t in eligible if current.get(t.name, 0.0) <= self.swap_below * mean]
        if not eligible:  # no held technique is clearly behind the others: keep the set
            return
        held = {t.name for t in self.techniques} | self._removed
        assert self.manipulator is not None  # bound before the first proposal
        fresh = self._buildable(recommender.recommend(current), self.manipulator, held, 1)
        if not fresh:
            return
        order = {t.name: i for i, t in enumerate(self.techniques)}
        worst = min(eligible, key=lambda t: (current.get(t.name, 0.0), -order[t.name]))
        self._replace(worst, fresh[0])
        self._tell_swap(worst.name, current.get(worst.name, 0.0), fresh[0].name)

    def _tell_swap(self, old: str, affinity: float, new: str) -> None:
        """Record the swap just made in :attr:`swap_log` (saved with the state: the summary JSON and the
        report list them) and log it as one info line."""
        answers = getattr(self.recommender, "log", None)  # a recommender may keep a log of its answers
        answer = answers[-1] if answers else {}
        entry: Dict[str, Any] = {
                 "request": self._requests, "removed": old, "removed_affinity": round(affinity, 6), "added": new,
                 "source": getattr(self.recommender, "source", "the recommender"),
                 "representations": list(answer.get("representations") or []),
                 "correlation": answer.get("correlation")}
        self.swap_log.append(entry)
        similar = f" for {', '.join(entry['representations'])}" if entry["representations"] else ""
        log.info("%s: at request %d swapped out %s (%s affinity %.3g, the lowest held) for %s, recommended by "
                 "%s%s", self.name, self._requests, old, self.metric, affinity, new, entry["source"], similar)

    def _replace(self, old: Technique, new: Technique) -> None:
        index = self.techniques.index(old)
        self._bind_sub(new)
        for feedback in self._history[-REPLAY_LIMIT:]:  # it starts from what the run knows
            new.observe(feedback)
        self.techniques[index] = new
        self._by_name = {t.name: t for t in self.techniques}
        self._affinity[new.name] = _Affinity()
        self._joined[new.name] = self._requests
        self._removed.add(old.name)
        kept = [(arm, v) for arm, v in self.bandit.history if arm != old.name]
        self.bandit = AUCBandit([t.name for t in self.techniques], self.bandit.C, self.bandit.window)
        for arm, v in kept:
            self.bandit.record(arm, bool(v))
        self.swaps.append([old.name, new.name])

    # ---- persistence ------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, Any]:
        return {"held": [t.name for t in self.techniques], "swaps": [list(s) for s in self.swaps],
                "swap_log": [dict(e) for e in self.swap_log],
                "requests": self._requests, "joined": dict(self._joined),
                "initial_source": self.initial_source, **super().state_dict()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        held = list(state.get("held") or [])
        if held and held != [t.name for t in self.techniques]:
            if self.build is None:
                raise TechniqueError(f"{self.name}: cannot restore techniques {held} without a recommender")
            techniques = [self._by_name.get(n) or self.build(n) for n in held]
            for tech in techniques:
                if tech.name not in self._by_name:
                    self._bind_sub(tech)
            self._set_techniques(techniques)
            for tech in techniques:
                self._affinity.setdefault(tech.name, _Affinity())
        self.swaps = [list(s) for s in state.get("swaps", [])]
        self.swap_log = [dict(e) for e in state.get("swap_log", []) if isinstance(e, dict)]
        self._requests = int(state.get("requests", self._requests))
        self._joined = {str(k): int(v) for k, v in (state.get("joined") or {}).items()}
        self._removed = {old for old, _ in self.swaps}
        self.initial_source = state.get("initial_source", self.initial_source)
        super().load_state_dict(state)


# ---- registered search approaches (thesis Table 7.1) -----------------------------------------
#: technique sets of the thesis: A (OpenTuner's default), pgd (PSO, GA, DE), D (NM, DE, PS, PSO)
TECHNIQUE_SETS = {"A": "AUCBanditMetaTechniqueA", "pgd": "PSO_GA_DE", "D": "AUCBanditMetaTechniqueD"}
APPROACHES: Dict[str, Dict[str, Any]] = {"bndt": dict(swap=False), "rec-bndt": dict(swap=True),
                                         "rec": dict(swap=True, C=EVEN_C)}


def approach_names() -> List[str]:
    """The 12 registered search approaches: ``{bndt,rec-bndt,rec}-{A,pgd,D,dbi}``."""
    return [f"{a}-{s}" for a in APPROACHES for s in [*TECHNIQUE_SETS, "dbi"]]


def register(registry: Any, members: Mapping[str, Sequence[str]]) -> None:
    """Register the 12 approaches; ``members`` maps a bundle name to its member technique names
    (every dbi approach starts from set A when the store has nothing)."""
    from .catalogue import Uses
    texts = {"bndt": "AUC bandit", "rec-bndt": "recommendation bandit (swaps every 50 requests)",
             "rec": "recommendation, even allocation (swaps every 50 requests)"}
    for approach, options in APPROACHES.items():
        for label in [*TECHNIQUE_SETS, "dbi"]:
            bundle = TECHNIQUE_SETS.get(label, TECHNIQUE_SETS["A"])
            name = f"{approach}-{label}"
            start = "initial set of 5 from the store (DBI)" if label == "dbi" else f"set {label}"
            registry.add(name, "recommendation:RecommendationBandit", f"{texts[approach]}; {start}",
                         {"techniques": Uses(tuple(members[bundle])), "name": name,
                          "initial_from_store": label == "dbi", **options})
