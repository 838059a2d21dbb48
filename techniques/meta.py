"""Meta-techniques: techniques that schedule other techniques.

:class:`MetaTechnique` binds each sub-technique under its own path (``<meta>/<sub>``), asks them in
the order :meth:`MetaTechnique.order` gives until one proposes, and forwards every feedback to
every sub-technique (each recognises its own requests by path), so all of them learn from all
results.  Subclasses decide the order and react to their sub-techniques' results.
"""
from __future__ import annotations

import random
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence

from ..parameters import ConfigurationManipulator
from .base import Config, Feedback, Proposal, Technique, TechniqueError
from .options import Option, configure

Factory = Callable[[], Technique]


class MetaTechnique(Technique):
    """Base of meta-techniques; subclasses implement :meth:`order`."""

    def __init__(self, techniques: Sequence[Technique], name: Optional[str] = None) -> None:
        super().__init__(name)
        if not techniques:
            raise TechniqueError(f"{type(self).__name__} needs at least one sub-technique")
        names = [t.name for t in techniques]
        if len(set(names)) != len(names):
            raise TechniqueError(f"sub-techniques of {self.name} must have distinct names, got {names}")
        self.techniques: List[Technique] = list(techniques)

    @property
    def multi_objective(self) -> bool:  # type: ignore[override]  # Technique's class attribute, computed here
        """True when every sub-technique handles several objectives (a meta-technique only schedules;
        its credit, ``was_new_best``, is "entered the Pareto front" in a multi-objective run)."""
        return all(getattr(t, "multi_objective", False) for t in self.techniques)

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        for tech in self.techniques:
            self._bind_sub(tech)

    def _bind_sub(self, tech: Technique) -> None:
        assert self.manipulator is not None
        tech.bind(self.manipulator, random.Random(self.rng.getrandbits(64)), f"{self.path}/{tech.name}")

    def order(self) -> List[Technique]:
        """Sub-techniques in the order they are asked for the next proposal."""
        raise NotImplementedError

    def propose(self) -> Optional[Proposal]:
        for tech in self.order():
            proposal = tech.propose()
            if proposal is not None:
                return proposal
        return None

    def desired_configuration(self) -> Optional[Config]:  # pragma: no cover - propose() overrides
        proposal = self.propose()
        return None if proposal is None else proposal.config

    def sub_technique_of(self, feedback: Feedback) -> Optional[Technique]:
        """The direct sub-technique that requested ``feedback`` (None for others' results)."""
        prefix = self.path + "/"
        if not feedback.requestor.startswith(prefix):
            return None
        name = feedback.requestor[len(prefix):].split("/", 1)[0]
        for tech in self.techniques:
            if tech.name == name:
                return tech
        return None

    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        sub = self.sub_technique_of(feedback)
        if sub is not None:
            self.on_sub_result(sub, feedback)
        for tech in self.techniques:
            tech.observe(feedback)

    def on_sub_result(self, technique: Technique, feedback: Feedback) -> None:
        """Called before forwarding a result requested by ``technique``."""

    def state_dict(self) -> Dict[str, Any]:
        return {"techniques": {t.name: t.state_dict() for t in self.techniques}}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        subs = state.get("techniques", {})
        for tech in self.techniques:
            if tech.name in subs:
                tech.load_state_dict(subs[tech.name])


class RoundRobinMetaTechnique(MetaTechnique):
    """Asks its sub-techniques in turn."""

    description = "round robin over sub-techniques"

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self._queue: Deque[Technique] = deque(self.techniques)

    def order(self) -> List[Technique]:
        current = list(self._queue)
        self._queue.rotate(-1)
        return current


class RecyclingMetaTechnique(MetaTechnique):
    """Round robin that periodically replaces the worst sub-technique with a fresh one.

    Every ``window`` requests of its own, the sub-technique whose best result in that window is worst
    (or that produced none) is replaced by a new instance from the same factory, renamed
    ``<name>.R<i>``, which is shown every result so far (so it starts from the global best and
    knows what was measured), unless the worst one holds the global best.
    """

    description = "round robin that restarts the worst sub-technique every window requests"

    def __init__(self, factories: Sequence[Factory], name: Optional[str] = None, window: int = 100) -> None:
        self.factories = list(factories)
        self._renames = 0
        techniques = [self._fresh(i) for i in range(len(self.factories))]
        super().__init__(techniques, name)
        self.window = window

    def _fresh(self, index: int) -> Technique:
        tech = self.factories[index]()
        tech.name = f"{tech.name}.R{self._renames}"
        self._renames += 1
        return tech

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self._slots: Deque[int] = deque(range(len(self.techniques)))
        self._window_best: Dict[str, float] = {}
        self._requests = 0
        self._history: List[Feedback] = []  # replayed into restarted members

    def order(self) -> List[Technique]:
        self._requests += 1
        if self._requests % self.window == 0:
            self._recycle()
        current = [self.techniques[i] for i in self._slots]
        self._slots.rotate(-1)
        return current

    def observe(self, feedback: Feedback) -> None:
        self._history.append(feedback)
        super().observe(feedback)

    def on_sub_result(self, technique: Technique, feedback: Feedback) -> None:
        if feedback.ok and feedback.value < self._window_best.get(technique.name, float("inf")):
            self._window_best[technique.name] = feedback.value

    def _recycle(self) -> None:
        def score(i: int) -> float:
            return self._window_best.get(self.techniques[i].name, float("inf"))
        worst = max(range(len(self.techniques)), key=lambda i: (score(i), i))
        if self.best_config is not None and score(worst) <= self.best_value:
            self._window_best = {}
            return
        fresh = self._fresh(worst)
        self._bind_sub(fresh)
        for feedback in self._history:  # it starts from the global best and knows what was measured
            fresh.observe(feedback)
        self.techniques[worst] = fresh
        self._window_best = {}


class StallPortfolioMetaTechnique(MetaTechnique):
    """A primary technique with a cheap partner for when it stalls.

    The first sub-technique (the primary, e.g. a model) is asked first until ``patience`` of its own
    results in a row brought no new best of the run; from then on the second (the partner, e.g. a
    GA) and the primary take turns, partner first, until the primary finds a new best again.  Both
    see every result, so the partner starts from the primary's best results and the model learns
    from the partner's.  A sub-technique that proposes nothing gives its turn to the other.
    """

    description = "primary technique; a partner takes every other turn while the primary stalls"

    OPTIONS = (Option("patience", int, 10, 1, 1000000, 5, 30,
                      "primary results in a row without a new best before the partner takes turns"),)
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    patience: int

    def __init__(self, techniques: Sequence[Technique], name: Optional[str] = None, **options: Any) -> None:
        super().__init__(techniques, name)
        if len(self.techniques) != 2:
            raise TechniqueError(f"{self.name} needs exactly two sub-techniques (primary, partner)")
        configure(self, options)

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self.stalled_for = 0          # primary results in a row without a new best
        self._partner_next = False

    def order(self) -> List[Technique]:
        primary, partner = self.techniques
        if self.stalled_for < self.patience:
            return [primary, partner]
        self._partner_next = not self._partner_next
        return [partner, primary] if self._partner_next else [primary, partner]

    def on_sub_result(self, technique: Technique, feedback: Feedback) -> None:
        if technique is self.techniques[0]:
            self.stalled_for = 0 if feedback.was_new_best else self.stalled_for + 1
