"""The fit state of one of BayesianOptimization's surrogates (a GP on one family of target transforms).

BO keeps one :class:`FitState` per surrogate: the power transforms (the default: log or identity by
marginal likelihood) and, with the option ``copula_every``, a second one trained on the Gaussian
copula of the values.  Each holds its own hyperparameters, its own schedule of hyperparameter
searches and its own fitted model; :func:`surrogate_turn` says which one a BO proposal uses, and
:func:`fit_gp` fits a surrogate's GP: a hyperparameter search on its schedule, comparing the transforms
:func:`transform_choices` gives, or the last search's hyperparameters on the current data in between.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .gp import GaussianProcess, Hyper
from .options import BOOptions
from .transforms import TransformKey, exponents, log_jacobian, transform


@dataclass
class FitState:
    """One surrogate's fit: read and updated by the technique's model fitting.

    ``copula``: this surrogate models the copula of the values (else the power transforms);
    ``hyper`` / ``transform``: the last searched hyperparameters and the transform they go with;
    ``searched_at``: OK results at the last hyperparameter search; ``fits``: searches so far (every
    ``hp_full_every``-th is a full one); ``model`` / ``model_at``: the fitted model and the number of
    results it was fitted on (stale once more results arrived); ``alternatives``: further hyperparameter
    settings (distinct local optima of the last search, :mod:`.marginal`) for transform
    ``alternatives_for``, refined again as extra starts by the next search of that transform.
    """

    copula: bool = False
    hyper: Optional[Hyper] = None
    transform: Optional[TransformKey] = None
    searched_at: int = 0
    fits: int = 0
    model: Optional[tuple] = None
    model_at: int = -1
    alternatives: List[Hyper] = field(default_factory=list)
    alternatives_for: Optional[TransformKey] = None

    def to_state(self) -> Dict[str, Any]:
        """The JSON-compatible hyperparameters ({} before the first fit), for ``state_dict``."""
        h = self.hyper
        if h is None:
            return {}
        state: Dict[str, Any] = {"lengthscales": [float(x) for x in h.lengthscales], "outputscale": h.outputscale,
                                 "noise": h.noise, "transform": self.transform}
        if self.alternatives:
            state["alternatives"] = [[[float(x) for x in a.lengthscales], a.outputscale, a.noise]
                                     for a in self.alternatives]
        return state

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
        self.alternatives = [Hyper(np.array(ls, dtype=float), float(s), float(n))
                             for ls, s, n in state.get("alternatives", ())]
        self.alternatives_for = key if self.alternatives else None
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


def fit_gp(fs: FitState, hypers: Dict[TransformKey, Hyper], D2: np.ndarray, raw: np.ndarray, o: BOOptions,
           n_ok: int, np_rng: np.random.Generator, ridge_channels: int) -> Tuple[GaussianProcess, np.ndarray]:
    """Fit surrogate ``fs``'s GP to the transformed targets ``raw`` (squared distances ``D2``, ``n_ok`` OK
    results, ``ridge_channels`` ridge lengthscales); returns ``(gp, standardised targets)``.  Called by
    BayesianOptimization (and MultiObjectiveBO, per objective) whenever its model is refitted; ``hypers``
    (the last searched hyperparameters per transform, the warm starts) is updated.

    With positive values and more than one candidate transform (``log_transform=None``: the
    Box-Cox exponents of ``power_transforms``), full fits compare them by their marginal
    posterior including the transform's Jacobian, and warm fits keep the last choice.
    """
    positive = bool(np.all(raw > 0))
    if fs.hyper is not None and fs.transform is not None and len(fs.hyper.lengthscales) == len(D2) \
            and (positive or fs.transform in (1.0, "copula")) \
            and n_ok - fs.searched_at < max(1.0, o.hp_refit_growth * fs.searched_at):
        return refactorise(fs, D2, raw, o.noise_prior)     # (a power transform of a value <= 0: search again)
    fs.searched_at = n_ok
    full = fs.hyper is None or fs.fits % max(o.hp_full_every, 1) == 0
    choices = transform_choices(fs, o.log_transform, o.power_transforms, positive, full)
    starts = o.hp_starts if full else min(o.hp_warm_starts, o.hp_starts)
    samples = o.hp_samples if full else max(1, o.hp_samples // 6)
    if len(choices) > 1:          # comparing transforms: split the full fit's starts between them
        starts = max(1, starts // len(choices))
    best: Optional[tuple] = None
    for key in choices:
        t = transform(raw, key)
        std = float(np.std(t)) or 1.0
        y = (t - float(np.mean(t))) / std
        gp = GaussianProcess(D2, y, o.noise_prior, ridge_channels)
        extra = fs.alternatives if key == fs.alternatives_for else ()
        hyper = gp.fit(np_rng, samples, starts, hypers.get(key), o.hp_maxiter, extra)
        score = gp.log_posterior - len(raw) * math.log(std) + log_jacobian(raw, key)
        hypers[key] = hyper
        if best is None or score > best[0]:
            best = (score, gp, y, key, hyper)
    _, gp, y, fs.transform, fs.hyper = best  # type: ignore[misc]
    fs.fits += 1
    return gp, y


def refactorise(fs: FitState, D2: np.ndarray, raw: np.ndarray, noise_prior: bool) -> Tuple[GaussianProcess, np.ndarray]:
    """The GP on the current data under ``fs``'s last searched hyperparameters and transform."""
    t = transform(raw, fs.transform)  # type: ignore[arg-type]
    y = (t - float(np.mean(t))) / (float(np.std(t)) or 1.0)
    gp = GaussianProcess(D2, y, noise_prior)
    gp.set_hyper(fs.hyper)  # type: ignore[arg-type]
    return gp, y
