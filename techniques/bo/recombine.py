"""Candidates of MultiObjectiveBO made by recombining good configurations (``recombine``).

The acquisition's local search changes one parameter per step from its starts, at most
``max_local_steps`` times.  Where a good design takes many parameters set well together (on the
HPVM2FPGA model, every node of the pipeline buffered and unrolled far: the latency is the sum of
the nodes' cycles, so one slow node keeps the whole design slow), the front's members often each
have some of the parts right, and no short chain of single changes, each worth its own expected
improvement, joins them.  Crossover of two members does: each candidate takes one parent and
replaces a block of consecutive parameters (a space usually lists the parameters of one part
together) or every parameter with probability 1/2 by the other parent's values.

:func:`recombinants` is called once per model-based proposal on a space too large to be scored
whole; its feasible candidates join the local search's random pool (:class:`.acquisition.LocalSearch`),
scored by the same acquisition, so a recombinant is proposed only when the model rates it above the
random samples and their neighbours.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Dict, List, Sequence

import numpy as np

from ..pareto import non_dominated_sort

Config = Dict[str, Any]

#: recombinants drawn per proposal
RECOMBINANTS = 256
#: parents: the best non-dominated layers of the training rows until at least this many
MIN_PARENTS = 8


def parents_by_layers(vectors: np.ndarray, configs: Sequence[Config], least: int = MIN_PARENTS) -> List[Config]:
    """The configurations of the best non-dominated layers of ``vectors`` (rows of ``configs``), layer
    by layer until at least ``least`` (every row when there are fewer)."""
    out: List[Config] = []
    for layer in non_dominated_sort([tuple(v) for v in vectors]):
        out.extend(configs[i] for i in sorted(layer))
        if len(out) >= least:
            break
    return out


def recombinants(parents: Sequence[Config], names: Sequence[str], rng: random.Random,
                 feasible: Callable[[Config], bool], count: int = RECOMBINANTS) -> List[Config]:
    """Up to ``count`` feasible children of pairs of distinct ``parents`` (none with fewer than two
    parents or parameters): half with a random block of consecutive parameters (in ``names``'
    order) from the second parent, half with each parameter from it with probability 1/2.  A child
    equal to a parent is dropped."""
    if len(parents) < 2 or len(names) < 2:
        return []
    out: List[Config] = []
    for _ in range(count):
        a, b = rng.sample(range(len(parents)), 2)
        first, second = parents[a], parents[b]
        if rng.random() < 0.5:
            i, j = sorted(rng.sample(range(len(names) + 1), 2))
            chosen: Sequence[str] = names[i:j]
        else:
            chosen = [n for n in names if rng.random() < 0.5]
        child = dict(first)
        for n in chosen:
            child[n] = second[n]
        if child != first and child != second and feasible(child):
            out.append(child)
    return out
