"""The AUC bandit meta-technique (OpenTuner / DeepTuner thesis), maintained in O(1) per step.

score(t) = AUC_t + C * sqrt(2 * ln(H) / H_t), over a sliding window of the last H uses,
AUC_t = 2 / (H_t (H_t + 1)) * sum_{i=1..H_t} i * V_{t,i}, where V_{t,i} = 1 when the
i-th use (oldest first) of t in the window produced a new best.  Arms never used in
the window score +inf.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any, ClassVar, Deque, Dict, List, Optional, Sequence, Tuple

from .base import Feedback, Technique, TechniqueError
from .meta import MetaTechnique
from .options import Option, configure


class AUCBandit:
    """The bandit's bookkeeping, independent of techniques (unit-testable)."""

    def __init__(self, arms: Sequence[str], C: float, window: int) -> None:
        if not arms:
            raise TechniqueError("an AUC bandit needs at least one arm")
        if len(set(arms)) != len(arms):
            raise TechniqueError(f"AUC bandit arms must have distinct names, got {list(arms)}")
        self.arms = list(arms)
        self.C = C
        self.window = window
        self.history: Deque[Tuple[str, int]] = deque()
        self.uses = {a: 0 for a in self.arms}      # H_t
        self.wins = {a: 0 for a in self.arms}      # sum of V over the window
        self.weighted = {a: 0 for a in self.arms}  # sum of i * V

    def record(self, arm: str, new_best: bool) -> None:
        """Append one use of ``arm``; evict the oldest use when the window is full."""
        v = 1 if new_best else 0
        self.history.append((arm, v))
        self.uses[arm] += 1
        self.wins[arm] += v
        self.weighted[arm] += self.uses[arm] * v
        if len(self.history) > self.window:
            old, ov = self.history.popleft()
            # the remaining uses of `old` each move down one index: W -= sum V (incl. evicted)
            self.weighted[old] -= self.wins[old]
            self.wins[old] -= ov
            self.uses[old] -= 1

    def auc(self, arm: str) -> float:
        n = self.uses[arm]
        return 0.0 if n == 0 else 2.0 * self.weighted[arm] / (n * (n + 1))

    def score(self, arm: str) -> float:
        n = self.uses[arm]
        if n == 0:
            return math.inf
        return self.auc(arm) + self.C * math.sqrt(2.0 * math.log(len(self.history)) / n)

    def ranked(self) -> List[str]:
        """Arms by decreasing :meth:`score`; ties keep arm order (deterministic).  Called before every
        proposal: the scores are computed here in one pass, the logarithm once."""
        uses, weighted, C = self.uses, self.weighted, self.C
        explore = 2.0 * math.log(len(self.history)) if self.history else 0.0
        scored = []
        for i, arm in enumerate(self.arms):
            n = uses[arm]
            score = math.inf if n == 0 else 2.0 * weighted[arm] / (n * (n + 1)) + C * math.sqrt(explore / n)
            scored.append((-score, i, arm))
        scored.sort()
        return [arm for _, _, arm in scored]

    def state_dict(self) -> Dict[str, Any]:
        return {"arms": self.arms, "C": self.C, "window": self.window,
                "history": [[a, v] for a, v in self.history]}

    @classmethod
    def from_state(cls, state: Dict[str, Any]) -> "AUCBandit":
        bandit = cls(state["arms"], state["C"], state["window"])
        for arm, v in state["history"]:
            bandit.record(arm, bool(v))
        return bandit


class AUCBanditMetaTechnique(MetaTechnique):
    """Schedules sub-techniques with the AUC bandit; every sub-technique sees every result."""

    description = "AUC bandit over sub-techniques (C=0.05, window 500)"

    OPTIONS: ClassVar[Tuple[Option, ...]] = (
        Option("C", float, 0.05, 0.0, 1e9, 0.01, 0.5, "exploration constant (the rec approaches: 1e6)"),
        Option("window", int, 500, 1, 10000000, 50, 1000, "sliding window of uses"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    C: float
    window: int

    def __init__(self, techniques: Sequence[Technique], name: Optional[str] = None, **options: Any) -> None:
        super().__init__(techniques, name)
        configure(self, options)
        self.bandit = AUCBandit([t.name for t in self.techniques], self.C, self.window)
        self._by_name = {t.name: t for t in self.techniques}

    def order(self) -> List[Technique]:
        return [self._by_name[arm] for arm in self.bandit.ranked()]

    def on_sub_result(self, technique: Technique, feedback: Feedback) -> None:
        self.bandit.record(technique.name, feedback.was_new_best)

    def state_dict(self) -> Dict[str, Any]:
        return {"bandit": self.bandit.state_dict(), **super().state_dict()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.bandit = AUCBandit.from_state(state["bandit"])
        super().load_state_dict(state)
