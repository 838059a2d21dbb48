"""``auto``, the default technique: picks a member technique from the space, the budget, the measured
costs and the store, and says why.

The rule (:func:`plan`), first match wins:

====================================================  =========================================
the space and the budget                              the member
====================================================  =========================================
a permutation of n >= 20 items and a test limit       MetricStructuralSurrogate, the whole run
of at least ``10 n`` (the embedding's random
tours)
a permutation of more than 5 items (tours, orders)    StructuralSurrogate (its fallback: A)
more than 30 parameters                               AUCBanditMetaTechniqueG (a steady-state
                                                      GA and a TPE model); for a budget of more
                                                      than ``short_budget`` tests (or none),
                                                      AUCBanditMetaTechniqueA once G's last
                                                      ``patience`` results found no new best
a budget of at most ``short_budget`` (200) tests      BayesianOptimization, the whole run
a longer budget, a deadline only, or no limit         AUCBanditMetaTechniqueA for the first
                                                      :data:`COST_FIRST` results, then
                                                      BayesianOptimization if the cost policy
                                                      allows it (shown those results), then
                                                      AUCBanditMetaTechniqueA once BO's last
                                                      ``patience`` results found no new best
====================================================  =========================================

A run with several objectives (``SearchContext.objectives > 1``) follows :func:`multi_objective_plan`
instead: MultiObjectiveBO (at most 60 parameters and 200 tests) or NSGA-II for the whole run, itself the
fallback (the single-objective members are not used).

(Wide spaces: with more parameters than :data:`BO_MAX_DIMENSION` the GP is ruled out, and
AUCBanditMetaTechniqueA's local arms -- DE, greedy mutation, Nelder-Mead -- move one point a few
coordinates at a time, slow to start in many dimensions; G's crossover and per-parameter densities make
progress from its first results, while A's arms refine a good region better once G has stalled.)

(Tours: StructuralSurrogate learns one weight per pair of items, so with fewer than about two
evaluations per pair it has measured few of the pairs that matter; a metric embedding of the items has
``n d + 1`` unknowns and :class:`~.structural.metric.MetricStructuralSurrogate` identifies it from its
first ``10 n`` random tours, so it needs a test limit of at least that.  The embedding centres the prior
of the same full-rank model, so with enough results for every pair it is that model plus a prior: the
rule asks for no bound on the pairs (:func:`~.auto_rule._tour_plan` gives the figures).  Permutations of
fewer than :data:`~.structural.identification.MIN_ITEMS` items keep StructuralSurrogate.  The metric
surrogate's plan is exempt from the cost policy, like a short budget's: the whole run's search CPU is
bounded by the test limit.)

(A long run's BO waits for the first measurements because on a cheap objective it would never be
allowed: the run then never builds it, nor imports its scientific stack.)

With a configured cross-session store that ranks one of these members first for the nearest stored
representation, that member takes the place of ``AUCBanditMetaTechniqueA`` as the hand-over member.

**Cost policy.**  A member whose CPU seconds per suggestion exceed what the measured costs allow hands over
to ``AUCBanditMetaTechniqueA``; :mod:`.auto_cost` states the policy, its exemptions and when it is checked.

The member that starts the run draws from the run's own random stream (the others from seeds of
their own, drawn without consuming it): a run the first member keeps throughout makes the same
measurements as ``--technique MEMBER`` under the same ``--seed``, so ``auto`` and the member it runs
differ only where ``auto`` switches.

Each decision is kept (``decisions``: the evaluation it was made at, the member, the reason),
passed to ``decision_listeners`` (the run prints it) with the next result, recorded in
:meth:`state_dict` and restored by :meth:`load_state_dict`.
"""
from __future__ import annotations

import random
import time
from typing import Any, Callable, Dict, List, Optional

from ..parameters import ConfigurationManipulator
from .auto_cost import COST_FIRST, CostMeter, model_wins, seconds
from .auto_rule import (BANDIT, BO, MEMBERS, MULTI_OBJECTIVE_MEMBERS, STORE_CHOICES, TITLES, multi_objective_plan,
                        plan, space_facts)
from .base import Config, Feedback, Proposal, Technique, TechniqueError
from .options import Option, configure

class AutoTechnique(Technique):
    """The default technique (see the module docstring for its rule and cost policy).

    Options: ``cost_share`` (search CPU per suggestion allowed per second of measurement),
    ``cpu_floor`` (seconds of search CPU per suggestion always allowed), ``short_budget`` (test
    limits up to which the first member runs the whole run, exempt from the cost policy), ``patience``
    (the first member's results in a row without a new best before a longer run hands over)."""

    description = ("the default: BayesianOptimization, StructuralSurrogate, AUCBanditMetaTechniqueG or "
                   "AUCBanditMetaTechniqueA, "
                   "chosen from the space, the budget, measured costs and the store, and explained")

    OPTIONS = (Option("cost_share", float, 1.0, 0.0, 1e6, 0.1, 10.0,
                      "search CPU seconds per suggestion allowed per second of measurement"),
               Option("cpu_floor", float, 0.03, 0.0, 1e4, 0.001, 0.1,
                      "search CPU seconds per suggestion that are always allowed"),
               Option("short_budget", int, 200, 0, 10**9, 50, 400,
                      "test limits up to which the first member runs the whole run (exempt from the cost policy)"),
               Option("patience", int, 30, 1, 10**6, 10, 60,
                      "first member's results in a row without a new best before a longer run hands over"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    cost_share: float
    cpu_floor: float
    short_budget: int
    patience: int

    #: the store is optional: the run says nothing when it cannot help (see tunerlib.engine.cross_session)
    without_store = None
    #: several objectives: the rule picks among MULTI_OBJECTIVE_MEMBERS
    multi_objective = True

    def __init__(self, name: Optional[str] = None, build: Optional[Callable[[str], Technique]] = None,
                 **options: Any) -> None:
        super().__init__(name or "auto")
        configure(self, options)
        self._build = build
        self.decisions: List[Dict[str, Any]] = []
        self._announced = 0
        self.decision_listeners: List[Callable[[Dict[str, Any]], None]] = []
        self.recommender: Any = None
        self.metric = "run-rank"
        #: CPU clock of member proposals (tests inject one)
        self.cpu_clock: Callable[[], float] = time.process_time

    # ---- the store (attached by the run before bind, like a recommendation bandit) ---------------
    @property
    def uses_store(self) -> bool:
        """True when the run has a store: its ranking may pick the hand-over member."""
        return self.context.store is not None

    def attach_recommender(self, recommender: Any, build: Callable[[str], Technique]) -> None:
        """Called by the run before :meth:`bind` when the store knows earlier runs."""
        self.recommender = recommender

    def _store_pick(self) -> Optional[str]:
        if self.recommender is None:
            return None
        return next((n for n in self.recommender.initial_techniques() if n in STORE_CHOICES), None)

    # ---- set-up ------------------------------------------------------------------------------------
    def bind(self, manipulator: ConfigurationManipulator, rng: Any, path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        ctx = self.context
        self.facts = space_facts(manipulator)
        several = ctx.objectives > 1
        pick = None if several else self._store_pick()
        #: the member that is never handed over and proposes when the active one does not
        self.fallback = MULTI_OBJECTIVE_MEMBERS[-1] if several else BANDIT
        self.plan = (multi_objective_plan(self.facts, ctx.test_limit, ctx.budget_kind, ctx.objectives,
                                          self.short_budget) if several
                     else plan(self.facts, ctx.test_limit, ctx.budget_kind, self.short_budget, pick))
        #: a long run's BO starts only once the first measurements say it may (see _start_deferred)
        self.deferred = self.plan.first if self.plan.first == BO and not self.plan.short else None
        self.members: Dict[str, Technique] = {}
        self.meter = CostMeter()               # the cost policy's figures (auto_cost)
        first = [] if self.deferred else [self.plan.first]
        #: seeds of the members that do not share the run's stream (drawn without consuming it)
        copy = random.Random()
        copy.setstate(self.rng.getstate())
        self._seeds = random.Random(f"auto members/{copy.getrandbits(64)}")
        for i, name in enumerate(dict.fromkeys(first + [self.plan.then or self.fallback, self.fallback])):
            self._add_member(name, self.rng if i == 0 else None)
        self.active = self.plan.first if self.plan.first in self.members else self.fallback
        self.retired: List[str] = []
        self.early: List[Feedback] = []        # results before a deferred member starts (replayed to it)
        self.results = 0
        self.stall = 0                         # active member's results in a row without a new best
        source = getattr(self.recommender, "source", "the store")
        store = f"; {source} ranks {pick} first" if pick else ""
        wait = (f"; its first {COST_FIRST} suggestions while the cost of a measurement is measured, then "
                f"{TITLES[BO]} unless that cost makes it too costly") if self.deferred else ""
        self._decide(self.active, self.plan.reason + store + wait)

    def _add_member(self, name: str, rng: Optional[random.Random] = None) -> None:
        """Create and bind a member: the one that starts the run draws from the run's own random
        stream (``rng``), so a run whose plan keeps it throughout is the run ``--technique NAME`` makes
        under the same ``--seed``; the others from seeds of their own."""
        tech = self._create(name)
        assert self.manipulator is not None
        tech.set_context(self.context)       # the run's budget, as the member would get it alone
        try:
            tech.bind(self.manipulator, rng or random.Random(self._seeds.getrandbits(64)),
                      f"{self.path}/{tech.name}")
        except TechniqueError:
            if name == self.fallback:
                raise
            return
        self.members[name] = tech
        self.meter.add_member(name)

    def _create(self, name: str) -> Technique:
        if self._build is not None:
            return self._build(name)
        from . import registry        # the catalogue (loaded: it created this technique)
        return registry().create(name)

    def _decide(self, member: str, reason: str) -> None:
        self.decisions.append({"evaluation": self.results, "technique": member, "reason": reason})

    def _announce(self) -> None:
        """Pass decisions not yet announced to the listeners: from the first result on, so that
        nothing is printed for a run that fails before it has one (bad input, a broken script)."""
        while self._announced < len(self.decisions):
            entry = self.decisions[self._announced]
            self._announced += 1
            for listener in self.decision_listeners:
                listener(entry)

    # ---- proposing ---------------------------------------------------------------------------------
    def propose(self) -> Optional[Proposal]:
        active = self.active
        if active != self.fallback:  # the cheap bandit is not clocked: no decision reads its CPU
            start = self.cpu_clock()
            proposal = self.members[active].propose()
            if proposal is not None:
                self.meter.suggested(active, self.cpu_clock() - start)
                return proposal
        proposal = self.members[self.fallback].propose()   # the bandit, or the fallback while the active member has nothing
        if proposal is not None:
            self.meter.suggested(self.fallback)
        return proposal

    def desired_configuration(self) -> Optional[Config]:  # pragma: no cover - propose() overrides
        proposal = self.propose()
        return None if proposal is None else proposal.config

    # ---- observing ---------------------------------------------------------------------------------
    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        self._learn(feedback)
        self._announce()

    def _learn(self, feedback: Feedback) -> None:
        """Forward a result to the members still in play, count it and run the checks it is due for."""
        for name, tech in self.members.items():
            if name not in self.retired:
                tech.observe(feedback)
        if self.deferred:
            self.early.append(feedback)
        if feedback.duplicate:
            return
        self.results += 1
        if _asked_by(feedback, self.members[self.active]):
            self.stall = 0 if feedback.was_new_best else self.stall + 1
        if self.meter.measured(feedback.cost):
            self._check_cost()
        meter = self.meter
        if self.deferred and (meter.known_costs >= COST_FIRST or (self.results >= COST_FIRST and not meter.costs)):
            self._start_deferred(self.deferred)
        if self.plan.then and self.active == self.plan.first and self.stall >= self.patience:
            self._hand_over(self.plan.then, f"{TITLES[self.active]} found no new best in its last "
                                            f"{self.patience} results")

    def allowance(self) -> float:
        """Search CPU seconds per suggestion the cost policy allows now (:meth:`.auto_cost.CostMeter.allowance`)."""
        return self.meter.allowance(self.cost_share, self.cpu_floor, self.context.parallelism)

    def _start_deferred(self, name: str) -> None:
        """After the first results: start the deferred member ``name`` when the cost policy allows it (or
        the costs are unknown), shown every result so far; else keep the cheap bandit."""
        self.deferred = None
        early, self.early = self.early, []
        cpu = self.meter.cpu_per_suggestion(name)
        if self.meter.costs and cpu > self.allowance():
            self._decide(BANDIT, self._too_costly(name, cpu))
            return
        self._add_member(name)
        if name not in self.members:
            return
        for feedback in early:
            self.members[name].observe(feedback)
        self.active, self.stall = name, 0
        measured = (f"measurements of {seconds(self.meter.median_cost())} allow "
                    f"{seconds(self.allowance())} of CPU per suggestion (it takes about {seconds(cpu)})"
                    if self.meter.costs else "the cost of a measurement is not known")
        self._decide(name, measured)

    def _too_costly(self, name: str, cpu: float) -> str:
        return (f"{TITLES[name]} takes about {seconds(cpu)} of CPU per suggestion, more than the "
                f"{seconds(self.allowance())} allowed by measurements of {seconds(self.meter.median_cost())}")

    def _check_cost(self) -> None:
        if self.active == self.fallback or (self.plan.short and self.active == self.plan.first):
            return
        cpu = self.meter.cpu_per_suggestion(self.active)
        if cpu > self.allowance() and not model_wins(self.members[self.active]):
            self._hand_over(self.fallback, self._too_costly(self.active, cpu))

    def _hand_over(self, member: str, reason: str) -> None:
        if member not in self.members or member == self.active:
            member = self.fallback
        if member == self.active:
            return
        self.retired.append(self.active)
        self.active, self.stall = member, 0
        self._decide(member, reason)

    # ---- persistence -------------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, Any]:
        return {"active": self.active, "deferred": self.deferred, "retired": list(self.retired),
                "decisions": list(self.decisions),
                "results": self.results, "stall": self.stall, **self.meter.to_state(),
                "members": {n: t.state_dict() for n, t in self.members.items()}}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        if state.get("active") not in self.members and state.get("active") in MEMBERS:
            self._add_member(state["active"])           # a deferred member that had started
        if state.get("active") not in self.members:
            return
        self.deferred, self.early = state.get("deferred"), []
        self.active, self.retired = state["active"], list(state.get("retired", []))
        self.decisions = [dict(d) for d in state.get("decisions", self.decisions)]
        self._announced = min(self._announced, len(self.decisions))
        self.results, self.stall = int(state.get("results", 0)), int(state.get("stall", 0))
        self.meter.load_state(state, self.members)
        for name, tech in self.members.items():
            if name in state.get("members", {}):
                tech.load_state_dict(state["members"][name])


def _asked_by(feedback: Feedback, member: Technique) -> bool:
    """Whether the member (or, for a bandit, one of its arms) asked for the result."""
    return feedback.requestor == member.path or feedback.requestor.startswith(member.path + "/")
