"""The feasible space of a search space: enumerating, counting and sampling the configurations that
satisfy the known constraints.  One service used by the manipulator (:meth:`FeasibleSpace.random_config`),
Bayesian optimization and its neighbour generator (the chain of trees), and replay (:meth:`count`).

Parameters linked by constraints form groups (``manipulator.groups()``).  Every parameter kind lists
its own values (:meth:`Parameter.domain`), so adding a kind needs no change here.

Chain of trees (BaCO §4.2, after Rasch et al.), built on first use: every group with constraints
whose parameters all have small finite domains is enumerated depth-first into its feasible partial
configurations (the leaves of its tree, :class:`~.trees.TreeGroup`).

* sampling is uniform over the leaves of each tree (unbiased, unlike walking the tree), groups
  independent of each other, and unconstrained parameters drawn with ``Parameter.sample_values``;
* a group whose parameters are all read by a table constraint (``TableConstraint``, e.g. a replay
  table's recorded configurations) is not enumerated: its leaves are the table's rows that satisfy
  the group's other constraints (``manipulator.table_rows``), however large the domains;
* the feasible space size is the product of the leaf counts and the free parameters' sizes;
* :meth:`FeasibleSpace.alternatives` lists the values one parameter can take while the rest of the
  configuration stays fixed and feasible (feasible single-parameter neighbours).

A group whose domains are not enumerable (a float, a huge permutation) or whose enumeration exceeds
``max_leaves`` leaves or ``max_nodes`` visited nodes (a bound counted in work, so the choice
depends on the space alone, not on the machine's speed) falls back to rejection sampling over that group, with one
``logging`` debug record per group (``-v`` shows it); its membership test evaluates the constraints.
"""
from __future__ import annotations

import itertools
import logging
import random
from typing import Any, Dict, List, Optional

import numpy as np

from .base import Config, ConfigurationError, Parameter
from .constrained_space import ConstrainedSpace
from .constraints import Constraint
from .counting import count_feasible
from .space_prior import SpacePrior
from .trees import MAX_LEAVES, MAX_NODES, RejectionGroup, TooLarge, TreeGroup

#: no priors: what ``sample(..., uniform=True)`` draws from
_NO_PRIOR = SpacePrior()

log = logging.getLogger(__name__)


class FeasibleSpace:
    """The known-constraint structure of a space: tree groups, rejection groups and free parameters
    (built on first use), plus rejection sampling and exact counting, which need no trees."""

    def __init__(self, manipulator: ConstrainedSpace, max_leaves: int = MAX_LEAVES,
                 max_nodes: int = MAX_NODES) -> None:
        self.manipulator = manipulator
        self.names = manipulator.names
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self._group_of: Optional[Dict[str, Any]] = None
        self._trees: List[TreeGroup] = []
        self._rejection: List[RejectionGroup] = []
        self._free: List[Parameter] = []
        self._leaf_probs: Dict[Any, Any] = {}    # (id(tree), id(priors)) -> (version, leaf probabilities)

    # ---- the chain of trees ---------------------------------------------------------------
    def _chain(self) -> None:
        m = self.manipulator
        group_of: Dict[str, Any] = {}
        by_name = {p.name: p for p in m.parameters}
        for group in m.groups():
            params = [by_name[n] for n in self.names if n in group]
            cons = m.group_constraints(group)
            if not cons:
                self._free.extend(params)
                continue
            rows = m.table_rows(group)     # a table constraint over the whole group
            if rows is not None:
                built: Any = TreeGroup(params, [], rows=rows)
                self._trees.append(built)
            else:
                built = self._build(params, cons)
            for n in group:
                group_of[n] = built
        self._group_of = group_of

    def _build(self, params: List[Parameter], cons: List[Constraint]) -> Any:
        domains = [p.domain() for p in params]
        why = None
        if any(d is None for d in domains):
            why = "a parameter has an infinite or very large domain"
        else:
            try:
                tree = TreeGroup(params, domains, cons, self.max_leaves, self.max_nodes)  # type: ignore[arg-type]
            except TooLarge as exc:
                why = str(exc)
            else:
                self._trees.append(tree)
                return tree
        log.debug("chain of trees: parameters %s are sampled by rejection (%s)",
                    [p.name for p in params], why)
        group = RejectionGroup(params, cons)
        self._rejection.append(group)
        return group

    def _built(self) -> "FeasibleSpace":
        """This space, its chain of trees built (once)."""
        if self._group_of is None:
            self._chain()
        return self

    @property
    def group_of(self) -> Dict[str, Any]:
        """The group (tree or rejection) of every constrained parameter, by name."""
        return self._built()._group_of  # type: ignore[return-value]

    @property
    def trees(self) -> List[TreeGroup]:
        return self._built()._trees

    @property
    def rejection(self) -> List[RejectionGroup]:
        return self._built()._rejection

    @property
    def free(self) -> List[Parameter]:
        """The parameters no constraint reads."""
        return self._built()._free

    # ---- queries ----------------------------------------------------------------------------
    @property
    def exact_size(self) -> bool:
        """True when :meth:`size` counts feasible configurations exactly (no rejection groups)."""
        return not self.rejection

    def size(self) -> float:
        """Feasible configurations: product of leaf counts and free sizes (rejection groups count
        their unconstrained size, an upper bound); ``inf`` for continuous spaces."""
        total = 1.0
        for t in self.trees:
            total *= t.size
        for g in self.rejection:
            total *= g.size()
        for p in self.free:
            total *= p.search_space_size()
        return total

    def is_feasible(self, config: Dict[str, Any]) -> bool:
        """Membership: one hash lookup per tree group, predicates for rejection groups."""
        return all(t.contains(config) for t in self.trees) and all(g.contains(config) for g in self.rejection)

    def sample(self, rng: random.Random, np_rng: np.random.Generator, count: int,
               uniform: bool = False, local: bool = False) -> List[Dict[str, Any]]:
        """``count`` independent random feasible configurations, drawn from the space's priors
        (uniformly when it has none, or with ``uniform``; with ``local``, every one from the
        concentrated part of the priors: near the configuration of a prior near one, never from its
        uniform share)."""
        configs: List[Dict[str, Any]] = [dict() for _ in range(count)]
        if uniform or local:
            self._sample_into(configs, self.manipulator.prior.view(True) if local else _NO_PRIOR, rng, np_rng)
            return [{n: c[n] for n in self.names} for c in configs]
        for prior, indices in self.manipulator.prior.split(rng, count):
            if indices:
                self._sample_into([configs[i] for i in indices], prior, rng, np_rng)
        return [{n: c[n] for n in self.names} for c in configs]

    def _sample_into(self, configs: List[Dict[str, Any]], prior: Any, rng: random.Random,
                     np_rng: np.random.Generator) -> None:
        """Fill ``configs`` with values drawn from the per-parameter priors ``prior`` (a
        :class:`~.space_prior.SpacePrior` component), feasible for every group."""
        count = len(configs)
        for t in self.trees:
            if t.size == 0:
                raise ConfigurationError(f"constraints on {t.names} admit no configuration; relax them")
            for cfg, row in zip(configs, t.sample_rows(np_rng, count, self._tree_probs(t, prior))):
                t.assign(cfg, row)
        whole = self.manipulator.prior
        fallback = whole.view(False).draw if prior and prior is not whole else None
        for g in self.rejection:
            for cfg in configs:
                g.sample(rng, cfg, draw=prior.draw if prior else None, fallback=fallback)
        for p in self.free:
            name = p.name
            values = ([prior.draw(p, rng) for _ in range(count)] if name in prior
                      else p.sample_values(rng, np_rng, count))
            for cfg, v in zip(configs, values):
                cfg[name] = v

    def _tree_probs(self, tree: TreeGroup, prior: Any) -> Optional[Any]:
        """The leaf probabilities of ``tree`` under the per-parameter priors ``prior`` (None:
        uniform), recomputed when the priors change."""
        key = (id(tree), id(prior))
        cached = self._leaf_probs.get(key)
        if cached is None or cached[0] != prior.version:
            probs = tree.leaf_probabilities([prior.value_log_weights(n, d)
                                             for n, d in zip(tree.names, tree.domains)]) if prior else None
            cached = self._leaf_probs[key] = (prior.version, probs)
        return cached[1]

    def enumerate_all(self, limit: int) -> Optional[List[Dict[str, Any]]]:
        """Every feasible configuration (product of the trees' leaves and the free parameters'
        domains), or None when a group is sampled by rejection, a free parameter is not enumerable
        or there would be more than ``limit`` configurations."""
        if self.rejection or self.size() > limit:
            return None
        free_domains = [p.domain(limit) for p in self.free]
        if any(d is None for d in free_domains):
            return None
        parts: List[List[Dict[str, Any]]] = []
        for t in self.trees:
            rows = []
            for row in t.leaves:
                part: Dict[str, Any] = {}
                t.assign(part, row)
                rows.append(part)
            parts.append(rows)
        for p, dom in zip(self.free, free_domains):
            parts.append([{p.name: v} for v in dom])  # type: ignore[union-attr]
        out = []
        for combo in itertools.product(*parts):
            cfg: Dict[str, Any] = {}
            for part in combo:
                cfg.update(part)
            out.append({n: (list(cfg[n]) if isinstance(cfg[n], list) else cfg[n]) for n in self.names})
        return out

    def alternatives(self, config: Dict[str, Any], name: str) -> Optional[List[Any]]:
        """Feasible replacement values for ``name`` (tree groups), or None when ``name`` is free or
        in a rejection group (then the caller proposes values and checks :meth:`is_feasible`)."""
        group = self.group_of.get(name)
        return None if group is None else group.alternatives(config, name)

    def constrained(self, name: str) -> bool:
        return name in self.group_of

    # ---- rejection sampling (the manipulator's random configurations) ---------------------------
    def random_config(self, rng: random.Random, max_tries: int = 10000) -> Config:
        """A random configuration satisfying every constraint (see ``ConfigurationManipulator.random``):
        a table-constrained group takes a random feasible row, any other group is redrawn up to
        ``max_tries`` times until its constraints hold."""
        m = self.manipulator
        never = [c.name for c in m.constraints if not c.reads and not c.is_satisfied({})]
        if never:
            raise ConfigurationError(f"constraint(s) {never} read no parameter and are always false; "
                                     "the search space is empty")
        parts: Dict[str, Any] = {}
        prior = m.prior.component(rng)
        for group in m.groups():
            members = [p for p in m.parameters if p.name in group]
            checks = m.group_constraints(group)
            rows = m.table_rows(group)
            if rows is not None:
                if not rows:
                    raise ConfigurationError(f"no row of the table constraint on {sorted(group)} satisfies "
                                             "the other constraints; the search space is empty")
                parts.update(m.copy(rows[prior.choose_row(rows, group, rng)]))
                continue
            drawn = prior
            for attempt in range(max(1, max_tries)):
                if attempt == max_tries // 2 and drawn is not m.prior:
                    # the near part of a prior that has (almost) no feasible mass here: the mixture
                    # conditioned on feasibility is its uniform part
                    drawn = m.prior.view(False)
                for p in members:
                    parts[p.name] = drawn.draw(p, rng)
                if all(c.is_satisfied(parts) for c in checks):
                    break
            else:
                raise ConfigurationError(
                    f"no feasible configuration found in {max_tries} random tries for parameters "
                    f"{[p.name for p in members]}; the constraints {[c.name for c in checks]} may be "
                    "unsatisfiable (or very tight: raise max_tries)")
        return {n: parts[n] for n in self.names}

    # ---- exact counting ------------------------------------------------------------------------
    def count(self, max_nodes: int = 3_000_000) -> Optional[int]:
        """Exact count of feasible configurations: backtracking over each constraint group in
        parameter order, checking every constraint as soon as the parameters it reads are set.
        None when a parameter cannot be enumerated or more than ``max_nodes`` partial
        configurations would be visited."""
        return count_feasible(self.manipulator, self.names, max_nodes)
