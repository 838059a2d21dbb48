"""Algorithm selectors (OpenTuner's ``SelectorParameter``, used by PetaBricks-style tuners).

A value is ``{"order": [...], "cutoffs": [...]}``: ``order`` is a permutation of ``choices`` and
``cutoffs`` a non-decreasing list of ``len(choices) - 1`` ints in ``[0, max_cutoff]``;
:meth:`SelectorParameter.select` gives the choice used for an input size. ``op4_set_linear`` (from
:class:`.categorical.CategoricalParameter`) moves a selector to a random value.
"""
from __future__ import annotations

import bisect
import math
import random
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from .base import Config, ParameterError
from .categorical import CategoricalParameter
from .scaled_numeric import LogIntegerParameter
from .operators import operator
from .option_lists import _check_int, _check_options, _Index


class SelectorParameter(CategoricalParameter):
    """Which of ``choices`` to use for each input size: an order and ``len(choices) - 1`` cutoffs.

    ``select(value, n)`` returns ``order[i]`` where ``i`` is the number of cutoffs ``<= n``: the first
    choice below ``cutoffs[0]``, the last one from ``cutoffs[-1]`` on.  Seed value: the choices in the
    given order with every cutoff at ``max_cutoff``.  Random cutoffs are log-uniform (as OpenTuner's
    ``LogIntegerParameter`` offsets), sorted.
    """

    kind = "selector"
    encoding = "selector"

    def __init__(self, name: str, choices: Sequence[Any], max_cutoff: int) -> None:
        super().__init__(name)
        self.choices = _check_options(name, "choices", choices)
        self.max_cutoff = _check_int(name, "max_cutoff", max_cutoff, 0)
        self._index = _Index(self.choices)
        self._cutoff = LogIntegerParameter(f"{name}/cutoff", 0, self.max_cutoff)

    def select(self, value: Mapping[str, Any], n: float) -> Any:
        """The choice used for input size ``n`` under selector value ``value``."""
        return value["order"][bisect.bisect_right(value["cutoffs"], n)]

    def copy_value(self, value: Any) -> Any:
        """A deep copy (the value is a dict of lists)."""
        if isinstance(value, Mapping):
            return {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in value.items()}
        return value

    def seed_value(self) -> Dict[str, List[Any]]:
        return {"order": list(self.choices), "cutoffs": [self.max_cutoff] * (len(self.choices) - 1)}

    def random_value(self, rng: random.Random) -> Dict[str, List[Any]]:
        order = list(self.choices)
        rng.shuffle(order)
        cutoffs = sorted(self._cutoff.random_value(rng) for _ in range(len(self.choices) - 1))
        return {"order": order, "cutoffs": cutoffs}

    def is_valid(self, value: Any) -> bool:
        if not isinstance(value, dict) or set(value) != {"order", "cutoffs"}:
            return False
        order, cuts = value["order"], value["cutoffs"]
        if not isinstance(order, list) or not isinstance(cuts, list):
            return False
        if len(order) != len(self.choices) or len(cuts) != len(self.choices) - 1:
            return False
        idx = {self._index.find(x, strict=True) for x in order}
        if None in idx or len(idx) != len(self.choices):
            return False
        if any(type(x) is not int or not 0 <= x <= self.max_cutoff for x in cuts):
            return False
        return all(x <= y for x, y in zip(cuts, cuts[1:]))

    def normalize_value(self, value: Any) -> Dict[str, List[Any]]:
        """Match the order's entries to the choices and clip, round and sort the cutoffs; else raise."""
        if not isinstance(value, Mapping) or set(value) != {"order", "cutoffs"}:
            raise ParameterError(f"parameter {self.name!r}: expected {{'order': [...], 'cutoffs': "
                                 f"[...]}}, got {value!r}")
        order, cuts = value["order"], value["cutoffs"]
        if not isinstance(order, (list, tuple)) or not isinstance(cuts, (list, tuple)):
            raise ParameterError(f"parameter {self.name!r}: order and cutoffs must be lists, got {value!r}")
        found = [i for i in (self._index.find(x, strict=False) for x in order) if i is not None]
        if len(found) < len(order) or sorted(found) != list(range(len(self.choices))):
            raise ParameterError(f"parameter {self.name!r}: order {list(order)!r} is not a permutation "
                                 f"of the choices {self.choices!r}")
        if len(cuts) != len(self.choices) - 1:
            raise ParameterError(f"parameter {self.name!r}: need {len(self.choices) - 1} cutoffs, "
                                 f"got {len(cuts)}")
        try:
            fixed = sorted(self._cutoff.normalize_value(x) for x in cuts)
        except ParameterError:
            raise ParameterError(f"parameter {self.name!r}: cutoffs must be numbers, got {list(cuts)!r}") \
                from None
        return {"order": [self.choices[i] for i in found], "cutoffs": fixed}

    def search_space_size(self) -> int:
        """Orders times non-decreasing cutoff lists: ``k! * C(max_cutoff + k - 1, k - 1)``."""
        k = len(self.choices)
        return math.factorial(k) * math.comb(self.max_cutoff + k - 1, k - 1)

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "choices": list(self.choices),
                "max_cutoff": self.max_cutoff}

    def describe(self) -> str:
        return f"selector {self.choices!r} cutoffs <= {self.max_cutoff}"

    def structure(self) -> List[Tuple[str, int]]:
        """Its cutoffs: ``len(choices) - 1`` log-integer sub-parameters."""
        return [(type(self._cutoff).__name__, len(self.choices) - 1)]

    @operator(3)
    def op3_swarm(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  c: float = 1.0, c1: float = 0.5, c2: float = 0.5, velocity: Any = 0.0) -> Any:
        """Keep, or cross with p1 or p2 (odds ``c : c1 : c2``): take its order with probability 1/2
        and each of its cutoffs with probability 1/2 (then sorted).  Returns ``velocity`` unchanged."""
        weights = [max(float(w), 0.0) for w in (c, c1, c2)]
        if sum(weights) <= 0:
            return velocity
        pick = rng.choices((None, p1, p2), weights=weights, k=1)[0]
        if pick is None:
            return velocity
        mine = self.normalize_value(self.get_value(child))
        donor = self.normalize_value(self.get_value(pick))
        order = donor["order"] if rng.random() < 0.5 else mine["order"]
        cuts = sorted(d if rng.random() < 0.5 else m for m, d in zip(mine["cutoffs"], donor["cutoffs"]))
        self.set_value(child, {"order": list(order), "cutoffs": cuts})
        return velocity
