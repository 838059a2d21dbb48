"""The fit state of one of BayesianOptimization's surrogates (a GP on one family of target transforms).

BO keeps one :class:`FitState` per surrogate: the power transforms (the default: log or identity by
marginal likelihood) and, with the option ``copula_every``, a second one trained on the Gaussian
copula of the values.  Each holds its own hyperparameters, its own schedule of hyperparameter
searches and its own fitted model; :func:`surrogate_turn` says which one a BO proposal uses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import numpy as np

from .gp import Hyper
from .transforms import TransformKey, exponents


@dataclass
class FitState:
    """One surrogate's fit: read and updated by the technique's model fitting.

    ``copula``: this surrogate models the copula of the values (else the power transforms);
    ``hyper`` / ``transform``: the last searched hyperparameters and the transform they go with;
    ``searched_at``: OK results at the last hyperparameter search; ``fits``: searches so far (every
    ``hp_full_every``-th is a full one); ``model`` / ``model_at``: the fitted model and the number of
    results it was fitted on (stale once more results arrived).
    """

    copula: bool = False
    hyper: Optional[Hyper] = None
    transform: Optional[TransformKey] = None
    searched_at: int = 0
    fits: int = 0
    model: Optional[tuple] = None
    model_at: int = -1

    def to_state(self) -> Dict[str, Any]:
        """The JSON-compatible hyperparameters ({} before the first fit), for ``state_dict``."""
        h = self.hyper
        if h is None:
            return {}
        return {"lengthscales": [float(x) for x in h.lengthscales], "outputscale": h.outputscale,
                "noise": h.noise, "transform": self.transform}

    def load_state(self, state: Dict[str, Any]) -> Optional[TransformKey]:
        """Restore :meth:`to_state`'s hyperparameters (also the older ``"log"`` flag) as the warm start
        of the next search; returns their transform key, or None when ``state`` holds none.  The
        transform itself is chosen again by that search (a full one)."""
        if not state.get("lengthscales"):
            return None
        key = state.get("transform", 0.0 if state.get("log") else 1.0)   # "log": before exponents
        key = key if key == "copula" else float(key)
        self.hyper = Hyper(np.array(state["lengthscales"], dtype=float), float(state["outputscale"]),
                           float(state["noise"]))
        return key


def surrogate_turn(turn: int, copula_every: int) -> int:
    """Which surrogate BO proposal number ``turn`` (1, 2, ...) uses: 1 (the copula) on every
    ``copula_every``-th turn, 0 (the power transforms) otherwise and when ``copula_every`` is 0."""
    return 1 if copula_every > 0 and turn % copula_every == 0 else 0


def transform_choices(fs: FitState, log_transform: Optional[bool], power_transforms: str, positive: bool,
                      full: bool) -> List[TransformKey]:
    """The transforms a hyperparameter search of surrogate ``fs`` compares: the copula for a copula
    surrogate, the identity unless every value is ``positive``, the one ``log_transform`` names, all of
    ``power_transforms`` in a ``full`` search (or before any choice), else the last choice alone."""
    if fs.copula:
        return ["copula"]
    if not positive:
        return [1.0]
    if log_transform is not None:
        return [0.0 if log_transform else 1.0]
    if full or fs.transform is None:
        return list(exponents(power_transforms))
    return [fs.transform]
