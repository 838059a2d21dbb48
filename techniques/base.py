"""The technique API.

Call protocol (the search driver is the only caller):

0. ``set_context(context)`` at most once, before ``bind``: the run's :class:`SearchContext` (budget,
   parallelism, store); techniques that do not adapt to the run ignore it.
1. ``bind(manipulator, rng, path)`` once, before anything else but ``set_context``.  ``path`` is the
   technique's requestor name inside the run (``"Bandit/UniformGreedyMutation"``).
2. ``propose()`` whenever the driver has room for another measurement.  It returns a
   :class:`Proposal` or ``None`` ("nothing to propose right now", e.g. while a
   sequential technique waits for its result); ``None`` never stalls the run.
3. ``observe(feedback)`` once for every completed result of the run, whichever
   technique requested it, in completion order.  A technique recognises its own
   requests by ``feedback.requestor == self.path``.

Techniques never touch the database: feedback is plain data and the value is
oriented so that lower is better (``inf`` for anything that is not OK).
"""
from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, Generator, Optional, Tuple

from ..parameters import ConfigurationManipulator

Config = Dict[str, Any]


class TechniqueError(ValueError):
    """A technique cannot run on the given space, or was configured wrongly."""


@dataclass(frozen=True)
class SearchContext:
    """What the search driver knows about the run before it starts (given by ``set_context``).

    ``test_limit`` is the number of measurements the run may make (None: no count limit, only a
    deadline); ``budget_kind`` says where it comes from: ``"tests"`` (``--test-limit``), ``"time"``
    (``--stop-after`` alone: the count is unknown) or ``"default"`` (neither: the default cap);
    ``parallelism`` is the number of suggestions wanted per round (measurements in flight at once);
    ``store`` names the configured cross-session store (None: none); ``objectives`` is the number of
    objectives the run minimises (more than one: a multi-objective run, see :class:`Feedback`).
    """

    test_limit: Optional[int] = None
    budget_kind: str = "default"
    stop_after: Optional[float] = None
    parallelism: int = 1
    store: Optional[str] = None
    objectives: int = 1


@dataclass(frozen=True)
class Proposal:
    """A configuration a technique wants measured, tagged with who asked."""

    config: Config
    requestor: str
    #: the configuration's hash (``manipulator.hash_valid(config)``) when the technique computed it
    #: already (the search driver uses it instead of hashing again), else None
    key: Optional[str] = None


@dataclass(frozen=True)
class Feedback:
    """One completed result, as techniques see it.

    In a multi-objective run ``values`` is the oriented objective vector (every entry lower is
    better, ``inf`` unless ``ok``), ``value`` is its first entry, and ``was_new_best`` means the
    result entered the current Pareto front.  In a single-objective run ``values`` is empty.
    """

    config: Config
    key: str            # stable hash of the configuration
    value: float        # lower is better; inf unless state == "ok"
    state: str          # "ok" | "infeasible" | "error"
    requestor: str      # path of the technique that asked for it ("seed" for seeds)
    was_new_best: bool
    duplicate: bool = False  # True when this answers a re-proposal of a known configuration
    #: True for a failure that only says the configuration has no measurement (a replayed table without
    #: its row, ``Result.extra["not_measured"]``): no evidence that the configuration is infeasible
    unmeasured: bool = False
    #: seconds the measurement took (the result's recorded collection cost); NaN when unknown
    #: (a duplicate, an infeasible proposal, a caller that measured without timing)
    cost: float = math.nan
    #: oriented objective vector of a multi-objective run (lower is better); empty otherwise
    values: Tuple[float, ...] = ()

    @property
    def ok(self) -> bool:
        return self.state == "ok"


class Technique(ABC):
    """Base class: tracks the best observed configuration for its subclasses."""

    #: one-line description shown by --list-techniques
    description: str = ""
    #: True for techniques that handle several objectives (use ``Feedback.values``); a run with
    #: several objectives refuses every other technique at construction
    multi_objective: bool = False
    #: the option schema (a tuple of :class:`~.options.Option`): the one declaration of the options'
    #: names, types, defaults and ranges; ``__init__`` passes what it is given to
    #: :func:`~.options.configure`, and the catalogue, names, docs and random generation read it
    OPTIONS: ClassVar[Tuple[Any, ...]] = ()
    #: whether :func:`~.naming.technique_name` writes ``Class;option,value;...`` for an instance
    NAMED_BY_OPTIONS: ClassVar[bool] = False
    #: (configuration, its hash) recorded by :meth:`remember_key` for the next proposal
    _made: Optional[Tuple[Config, str]] = None

    def __init__(self, name: Optional[str] = None) -> None:
        self.name = name or type(self).__name__
        self.path = self.name
        self.manipulator: Optional[ConfigurationManipulator] = None
        self.rng = random.Random(0)
        self.best_config: Optional[Config] = None
        self.best_value = math.inf
        self.context = SearchContext()

    # ---- protocol -----------------------------------------------------------
    def set_context(self, context: SearchContext) -> None:
        """Called by the driver before :meth:`bind` with what it knows about the run (budget,
        parallelism, store); the default keeps it in ``self.context``."""
        self.context = context

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        """Called once before the first proposal; raise TechniqueError if the space is unsupported."""
        self.manipulator = manipulator
        self.rng = rng
        self.path = path or self.name
        self.check_space(manipulator)

    def check_space(self, manipulator: ConfigurationManipulator) -> None:  # noqa: B027 (optional hook)
        """Raise TechniqueError naming the parameter type this technique cannot handle."""

    def propose(self) -> Optional[Proposal]:
        """Next configuration to measure, or None for "nothing right now"."""
        cfg = self.desired_configuration()
        return None if cfg is None else Proposal(cfg, self.path, self.take_key(cfg))

    def remember_key(self, cfg: Config, key: str) -> None:
        """Called by :meth:`desired_configuration` for the configuration it is about to return, whose
        hash (``hash_valid``) it computed: the proposal carries it, so that nobody hashes it again.
        ``cfg`` must not change before it is proposed."""
        self._made = (cfg, key)

    def take_key(self, cfg: Config) -> Optional[str]:
        """The hash :meth:`remember_key` recorded for this very object ``cfg``, or None; called once per
        proposal (it forgets the hash, so a later change of ``cfg`` cannot reuse it)."""
        made, self._made = self._made, None
        return made[1] if made is not None and made[0] is cfg else None

    @abstractmethod
    def desired_configuration(self) -> Optional[Config]:
        """Return a (legal) configuration dict, or None."""

    def observe(self, feedback: Feedback) -> None:
        """Receive one completed result (own or another technique's)."""
        if feedback.ok and feedback.value < self.best_value:
            self.best_value = feedback.value
            self.best_config = feedback.config

    def is_own(self, feedback: Feedback) -> bool:
        return feedback.requestor == self.path

    def option_values(self) -> Dict[str, Any]:
        """The option values the technique was configured with (by name, sorted; empty without a schema)."""
        values = getattr(self, "_options", {})
        return {n: values[n] for n in sorted(values)}

    # ---- persistence (techniques with state override these) ---------------
    def state_dict(self) -> Dict[str, Any]:
        """JSON-compatible state recorded in the results database (for resume)."""
        return {}

    def load_state_dict(self, state: Dict[str, Any]) -> None:  # noqa: B027 (optional hook)
        """Restore what :meth:`state_dict` returned."""


class SequentialTechnique(Technique):
    """Generator-style technique: write ``main_generator`` with ``feedback = yield config``.

    The generator is advanced only when the feedback for its last configuration has
    arrived, so at most one of its requests is in flight.  When the generator ends,
    the technique proposes nothing more.
    """

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self._gen: Optional[Generator[Config, Feedback, None]] = None
        self._waiting_key: Optional[str] = None
        self._reply: Optional[Feedback] = None
        self._done = False

    @abstractmethod
    def main_generator(self) -> Generator[Config, Feedback, None]:
        """Yield configurations; each ``yield`` evaluates to that configuration's Feedback."""

    def desired_configuration(self) -> Optional[Config]:
        if self._done:
            return None
        try:
            if self._gen is None:
                self._gen = self.main_generator()
                cfg = next(self._gen)
            elif self._reply is None:
                return None  # still waiting for our last request
            else:
                reply, self._reply = self._reply, None
                cfg = self._gen.send(reply)
        except StopIteration:
            self._done = True
            return None
        assert self.manipulator is not None
        self._waiting_key = self.manipulator.hash_config(cfg)
        return cfg

    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        if self.is_own(feedback) and feedback.key == self._waiting_key:
            self._waiting_key = None
            self._reply = feedback
