"""The groups of a feasible space (see :mod:`.feasible`): an enumerated constraint group
(:class:`TreeGroup`, one tree of the chain of trees), a group sampled by rejection
(:class:`RejectionGroup`).

A tree's leaves are rows of domain indices plus a mixed-radix integer code kept in a ``set``, so
membership is one hash lookup.  The enumeration orders the parameters greedily so that each
constraint is checked as soon as all the names it reads are assigned (``Constraint.reads``),
pruning whole subtrees.
"""
from __future__ import annotations

import random
from array import array
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Set

import numpy as np

from .base import ConfigurationError, Parameter
from .value_keys import value_key as vkey
from .constraints import Constraint

#: default bounds of one group's enumeration: feasible leaves kept, and nodes visited (every value tried
#: at every depth, pruned or not).  A bound counted in work, not time, so that whether a group is
#: enumerated or sampled by rejection depends on the space alone, never on the machine's speed or load.
#: Enumerations visit 0.25-0.8 million nodes per CPU second on a 2-core machine of 2026 (an expression
#: or a callable constraint checked at the leaves), so the bound is reached in 6-20 s; the largest group
#: of the shipped example and benchmark spaces visits about 400,000 nodes.
MAX_LEAVES = 1_000_000
MAX_NODES = 5_000_000


class TooLarge(Exception):
    """Raised inside the enumeration when a bound is exceeded."""


class TreeGroup:
    """An enumerated group: leaves as domain-index rows, codes in a hash set."""

    def __init__(self, params: List[Parameter], domains: List[List[Any]],
                 constraints: Optional[List[Constraint]] = None, max_leaves: int = MAX_LEAVES,
                 max_nodes: int = MAX_NODES, rows: Optional[List[Dict[str, Any]]] = None) -> None:
        """Enumerate the feasible leaves under ``constraints``, or take ``rows`` (partial
        configurations of ``params``, e.g. a table constraint's) as the leaves; then ``domains``
        is ignored and each parameter's domain is the values the rows use.  Raises :class:`TooLarge`
        past ``max_leaves`` leaves or ``max_nodes`` visited nodes; :attr:`nodes` counts the visits."""
        self.params = params
        self.nodes = 0
        self.names = [p.name for p in params]
        if rows is not None:
            domains = [list({vkey(r[n]): r[n] for r in rows}.values()) for n in self.names]
        self.domains = domains
        self.index: List[Dict[Hashable, int]] = [{vkey(v): i for i, v in enumerate(d)} for d in domains]
        self.radix: List[int] = []
        r = 1
        for d in domains:
            self.radix.append(r)
            r *= len(d)
        if rows is not None:
            self._from_rows(rows)
        else:
            self._enumerate(constraints or [], max_leaves, max_nodes)

    def _from_rows(self, rows: List[Dict[str, Any]]) -> None:
        idx = [[index[vkey(r[n])] for n, index in zip(self.names, self.index)] for r in rows]
        self.leaves = np.array(idx, dtype=np.int32).reshape(len(rows), len(self.names))
        self.codes = {sum(a * b for a, b in zip(row, self.radix)) for row in idx}

    # ---- enumeration ------------------------------------------------------------------------
    def _order(self, constraints: List[Constraint]) -> List[int]:
        """Parameter order: next the one completing most constraints, then the smallest domain."""
        left, order = list(range(len(self.params))), []
        done: Set[str] = set()
        pending = [set(c.reads) for c in constraints]
        while left:
            def score(i: int) -> tuple:
                names = done | {self.names[i]}
                complete = sum(1 for reads in pending if reads <= names and not reads <= done)
                touched = sum(1 for reads in pending if self.names[i] in reads)
                return (-complete, -touched, len(self.domains[i]), i)
            best = min(left, key=score)
            left.remove(best)
            order.append(best)
            done.add(self.names[best])
        return order

    def _enumerate(self, constraints: List[Constraint], max_leaves: int, max_nodes: int) -> None:
        order = self._order(constraints)
        assigned: Set[str] = set()
        checks: List[List[Constraint]] = []
        for i in order:
            before = set(assigned)
            assigned.add(self.names[i])
            checks.append([c for c in constraints if set(c.reads) <= assigned and not set(c.reads) <= before])
        k = len(order)
        flat = array("i")
        codes: Set[int] = set()
        partial: Dict[str, Any] = {}
        idx = [0] * len(self.params)
        counter = [0]

        def visit(depth: int) -> None:
            p = order[depth]
            name, dom, tests = self.names[p], self.domains[p], checks[depth]
            for j, v in enumerate(dom):
                partial[name] = v
                counter[0] += 1
                if counter[0] > max_nodes:
                    raise TooLarge(f"enumeration visited more than {max_nodes} nodes")
                if tests and not all(c.is_satisfied(partial) for c in tests):
                    continue
                idx[p] = j
                if depth + 1 < k:
                    visit(depth + 1)
                else:
                    if len(codes) >= max_leaves:
                        raise TooLarge(f"more than {max_leaves} feasible partial configurations")
                    flat.extend(idx)
                    codes.add(sum(a * b for a, b in zip(idx, self.radix)))
            partial.pop(name, None)

        if k:
            visit(0)
        self.nodes = counter[0]
        self.codes = codes
        self.leaves = np.frombuffer(flat, dtype=np.int32).reshape(-1, len(self.params)) if flat else \
            np.zeros((0, len(self.params)), dtype=np.int32)

    # ---- queries ----------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self.codes)

    def code(self, config: Dict[str, Any]) -> Optional[int]:
        """The leaf code of ``config``'s values for this group, or None for a value off the domain."""
        total = 0
        for name, index, r in zip(self.names, self.index, self.radix):
            try:
                i = index.get(vkey(config[name]))
            except TypeError:
                return None
            if i is None:
                return None
            total += i * r
        return total

    def contains(self, config: Dict[str, Any]) -> bool:
        c = self.code(config)
        return c is not None and c in self.codes

    def sample_rows(self, np_rng: np.random.Generator, count: int,
                    probs: Optional[np.ndarray] = None) -> np.ndarray:
        """``count`` leaves drawn uniformly, or with probabilities ``probs`` (one per leaf)."""
        if probs is None:
            return self.leaves[np_rng.integers(0, len(self.leaves), size=count)]
        return self.leaves[np_rng.choice(len(self.leaves), size=count, p=probs)]

    def leaf_probabilities(self, log_weights: List[Optional[np.ndarray]]) -> Optional[np.ndarray]:
        """Each leaf's probability when it is weighted by the product of its values' prior weights
        (``log_weights[j]``: log weights over ``domains[j]``, None for a parameter without a prior);
        None when no parameter has a prior."""
        if all(w is None for w in log_weights):
            return None
        total = np.zeros(len(self.leaves))
        for j, w in enumerate(log_weights):
            if w is not None:
                total += w[self.leaves[:, j]]
        p = np.exp(total - total.max())
        return p / p.sum()

    def assign(self, config: Dict[str, Any], row: Sequence[int] | np.ndarray) -> None:
        for name, dom, j in zip(self.names, self.domains, row):
            v = dom[int(j)]
            config[name] = list(v) if isinstance(v, list) else v

    def alternatives(self, config: Dict[str, Any], name: str) -> List[Any]:
        """Values of ``name`` (other than the current one) keeping the group feasible."""
        base = self.code(config)
        if base is None:
            return []
        p = self.names.index(name)
        cur = self.index[p].get(vkey(config[name]))
        r = self.radix[p]
        base -= cur * r  # type: ignore[operator]
        return [v for j, v in enumerate(self.domains[p]) if j != cur and base + j * r in self.codes]


class RejectionGroup:
    """A constrained group that is not enumerated: rejection sampling, predicate membership."""

    def __init__(self, params: List[Parameter], constraints: List[Constraint]) -> None:
        self.params = params
        self.nodes = 0
        self.names = [p.name for p in params]
        self.constraints = constraints

    def contains(self, config: Dict[str, Any]) -> bool:
        return all(c.is_satisfied(config) for c in self.constraints)

    def alternatives(self, config: Dict[str, Any], name: str) -> None:
        """Not listed: the caller proposes values and checks :meth:`contains`."""
        return None

    def sample(self, rng: random.Random, config: Dict[str, Any], max_tries: int = 10000,
               draw: Optional[Callable[[Parameter, random.Random], Any]] = None,
               fallback: Optional[Callable[[Parameter, random.Random], Any]] = None) -> None:
        """Redraw the group's values in ``config`` (each by ``draw``, default ``random_value``)
        until its constraints hold; after half the tries by ``fallback`` when given (the uniform part
        of a prior whose near part has almost no feasible mass in this group)."""
        for attempt in range(max_tries):
            if fallback is not None and attempt == max_tries // 2:
                draw = fallback
            for p in self.params:
                config[p.name] = p.random_value(rng) if draw is None else draw(p, rng)
            if self.contains(config):
                return
        raise ConfigurationError(f"no feasible values found in {max_tries} random tries for parameters "
                                 f"{self.names}; the constraints {[c.name for c in self.constraints]} "
                                 "may be unsatisfiable")

    def size(self) -> float:
        total = 1.0
        for p in self.params:
            total *= p.search_space_size()
        return total
