"""Acquisition: expected improvement times P(feasible), optimised by multi-start local search.

EI is computed for the noise-free latent function (BaCO §3.3) and in log space so that it never
underflows far from the incumbent: ``log EI = log sigma + log h(z)``, ``h(z) = phi(z) + z Phi(z)``,
``z = (y_best - mu) / sigma`` (minimisation), with the asymptotic expansion of ``h`` for
``z < -5``.  With a feasibility model the score is ``log EI + log P(feasible)``; candidates whose
P(feasible) is below the iteration's threshold ``eps_f`` score ``-inf`` (dropped).  With user priors
(πBO) ``exponent * log weight(x)`` is added (:meth:`Acquisition.weigh_by_prior`).

Optimisation (BaCO §3.3): ``n_random`` uniformly random feasible configurations from the chain of
trees are scored; the best ``n_starts`` of them plus the best evaluated configuration start a
best-improvement local search over feasible single-parameter neighbours, each step moving every
start to its best neighbour until none improves or ``max_steps`` is reached.  Evaluated and pending
configurations are never returned (they may be starting points).  A finite space with at most
``exhaustive_limit`` feasible configurations is instead scored whole (encoded once), so the
acquisition's maximiser is exact.
"""
from __future__ import annotations

import itertools
import math
import random
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Set, Tuple

import numpy as np
from scipy.special import log_ndtr

from ...parameters import FeasibleSpace
from .distances import ConfigKey, SpaceEncoder
from .feasibility import FeasibilityModel, FeatureEncoder
from .gp import GaussianProcess
from .neighbours import NeighbourGenerator

Config = Dict[str, Any]
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: a local-search step must raise log EI by this much (0.1 % of EI), so continuous drift stops
MIN_GAIN = 1e-3


def log_h(z: np.ndarray) -> np.ndarray:
    """``log(phi(z) + z * Phi(z))``, accurate for very negative ``z``."""
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    big = z > -5.0
    zb = z[big]
    pdf = np.exp(-0.5 * zb * zb) / math.sqrt(2.0 * math.pi)
    cdf = np.exp(log_ndtr(zb))
    out[big] = np.log(np.maximum(pdf + zb * cdf, 1e-300))
    zs = z[~big]
    z2 = zs * zs
    out[~big] = -0.5 * z2 - LOG_SQRT_2PI - np.log(z2) + np.log1p(-3.0 / z2 + 15.0 / (z2 * z2))
    return out


def log_expected_improvement(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """log EI of a minimisation problem at points with posterior ``mean`` and ``std``."""
    std = np.maximum(std, 1e-9)
    return np.log(std) + log_h((best - mean) / std)


class Acquisition:
    """Scores configurations with the fitted GP (and feasibility model) for one iteration."""

    def __init__(self, encoder: SpaceEncoder, gp: GaussianProcess, train: List[np.ndarray], y_best: float,
                 feasibility: Optional[FeasibilityModel] = None, eps_f: float = 0.0,
                 feature_encoder: Optional[FeatureEncoder] = None) -> None:
        self.encoder = encoder
        self.gp = gp
        self.train = train
        self.y_best = y_best
        self.feasibility = feasibility if feasibility is not None and feasibility.trained else None
        #: the classifier's feature encoder (lets a whole small space be featurised once)
        self.feature_encoder = feature_encoder or (feasibility.features if feasibility is not None else None)
        self.eps_f = eps_f
        self.prior: Optional[Any] = None
        self.prior_exponent = 0.0

    def weigh_by_prior(self, prior: Any, exponent: float) -> None:
        """πBO (Hvarfner et al. 2022): multiply the acquisition by ``prior(x) ** exponent``, where
        ``prior`` has the ``log_weights`` of a :class:`~tunerlib.parameters.SpacePrior` (BO passes
        its region weight, :class:`.prior_use.PriorRegion`)."""
        self.prior, self.prior_exponent = prior, exponent

    def score(self, configs: Sequence[Config], strict: bool = True) -> np.ndarray:
        """log EI (+ log P(feasible)); ``-inf`` below ``eps_f`` when ``strict``."""
        if not configs:
            return np.zeros(0)
        return self.score_encoded(self.encoder.encode(configs), configs, strict)

    def score_encoded(self, enc: List[np.ndarray], configs: Sequence[Config], strict: bool = True,
                      features: Optional[np.ndarray] = None) -> np.ndarray:
        """:meth:`score` for configurations already encoded by the space encoder (``features``: their
        classifier feature rows, when already computed)."""
        mean, std = self.gp.predict(self.encoder.sqdists(enc, self.train))
        return self.weighted(log_expected_improvement(mean, std, self.y_best), configs, strict, features)

    def weighted(self, s: np.ndarray, configs: Sequence[Config], strict: bool,
                 features: Optional[np.ndarray] = None) -> np.ndarray:
        """The log acquisition ``s`` of ``configs`` plus log P(feasible) (``-inf`` below ``eps_f`` when
        ``strict``) and the prior's πBO weight; called by every :meth:`score_encoded`."""
        if self.feasibility is not None:
            p = (self.feasibility.probability(configs) if features is None
                 else self.feasibility.probability_features(features))
            s = s + np.log(np.maximum(p, 1e-12))
            if strict:
                s[p < self.eps_f] = -np.inf
        if self.prior is not None:
            s = s + self.prior_exponent * self.prior.log_weights(configs)
        return s


def _value_codes(keys: Sequence[Tuple[Hashable, ...]]) -> Tuple[np.ndarray, List[Dict[Hashable, int]]]:
    """Integer codes of configuration keys: ``(matrix n x P, per-column value -> code maps)``."""
    width = len(keys[0]) if keys else 0
    maps: List[Dict[Hashable, int]] = [{} for _ in range(width)]
    mat = np.empty((len(keys), width), dtype=np.int64)
    for i, k in enumerate(keys):
        for j, v in enumerate(k):
            mat[i, j] = maps[j].setdefault(v, len(maps[j]))
    return mat, maps


class _Point:
    """A configuration in the local search with its key, encoded row and score."""

    __slots__ = ("config", "key", "enc", "score")

    def __init__(self, config: Config, key: Tuple[Hashable, ...], enc: List[np.ndarray], score: float) -> None:
        self.config, self.key, self.enc, self.score = config, key, enc, score


class LocalSearch:
    """Multi-start acquisition optimiser; :meth:`run` returns the best new configuration or None."""

    def __init__(self, key: ConfigKey, cot: FeasibleSpace, neighbours: NeighbourGenerator,
                 n_random: int = 2000, n_starts: int = 10, max_steps: int = 10,
                 exhaustive_limit: int = 0) -> None:
        self.key = key
        self.cot = cot
        self.neighbours = neighbours
        self.n_random = n_random
        self.n_starts = n_starts
        self.max_steps = max_steps
        self.exhaustive_limit = exhaustive_limit
        self._space: Optional[tuple] = None      # (configs, keys, encoded, features) of a small space
        self._space_tried = False

    def _whole_space(self, acq: Acquisition) -> Optional[tuple]:
        """Every feasible configuration, keyed and encoded once, when the space has at most
        ``exhaustive_limit`` of them (then the acquisition is maximised exactly); else None."""
        if not self._space_tried:
            self._space_tried = True
            configs = self.cot.enumerate_all(self.exhaustive_limit) if self.exhaustive_limit > 0 else None
            if configs:
                feats = acq.feature_encoder.features(configs) if acq.feature_encoder is not None else None
                keys = [self.key(c) for c in configs]
                self._space = (configs, keys, acq.encoder.encode(configs), feats, _value_codes(keys))
        return self._space

    def _run_exhaustive(self, acq: Acquisition, space: tuple, excluded: Set[Hashable],
                        centres: Sequence[Config] = (), radius: int = 0) -> Optional[Config]:
        """Exact maximisation of the acquisition over every feasible, not excluded configuration
        (only those differing from one of ``centres`` in at most ``radius`` parameters, when given)."""
        configs, keys, enc, feats, codes = space
        allowed = None
        for centre in (centres if radius > 0 else ()):
            row = np.array([codes[1][j].get(v, -1) for j, v in enumerate(self.key(centre))], dtype=np.int64)
            near = np.count_nonzero(codes[0] != row[None, :], axis=1) <= radius
            allowed = near if allowed is None else allowed | near
        rows = np.fromiter((i for i, k in enumerate(keys) if k not in excluded
                            and (allowed is None or allowed[i])), dtype=np.intp)
        if rows.size == 0 and allowed is not None:
            return self._run_exhaustive(acq, space, excluded)
        if rows.size == 0:
            return None
        cand = [configs[i] for i in rows]
        sub = SpaceEncoder.take(enc, rows)
        fsub = None if feats is None else feats[rows]
        scores = acq.score_encoded(sub, cand, features=fsub)
        if not np.isfinite(scores).any():
            scores = acq.score_encoded(sub, cand, strict=False, features=fsub)
        return dict(cand[int(np.argmax(scores))])

    @property
    def scored_whole(self) -> bool:
        """Whether the acquisition is maximised by scoring every configuration (known after the
        first :meth:`run`)."""
        return self._space_tried and self._space is not None

    def run(self, acq: Acquisition, rng: random.Random, np_rng: np.random.Generator,
            excluded: Set[Hashable], incumbents: Sequence[Config], radius: int = 0,
            extra: Optional[Callable[[], Sequence[Config]]] = None,
            centres: Sequence[Config] = (), random_pool: bool = True) -> Optional[Config]:
        """Best-scoring feasible configuration whose key is not in ``excluded`` (None if none found).

        ``extra``, called only on a space too large to be scored whole, gives candidates that join
        the random pool (MultiObjectiveBO's recombinants); with ``random_pool`` false they replace it
        (a trust region: the candidates and the local search from them and from the incumbents).

        ``radius > 0`` asks for a trust-region step: on a small finite space (scored whole) only
        configurations differing in at most ``radius`` parameters from one of ``centres`` (default:
        the first incumbent) are candidates (all of them when none is left); elsewhere the local
        search from the incumbents already works locally and ``radius`` and ``centres`` are ignored."""
        space = self._whole_space(acq)
        if space is not None:
            return self._run_exhaustive(acq, space, excluded, list(centres) or list(incumbents[:1]), radius)
        pool, keys = [], []
        fresh: Set[Hashable] = set()
        drawn = self.cot.sample(rng, np_rng, self.n_random) if random_pool or extra is None else ()
        for c in itertools.chain(drawn, extra() if extra else ()):
            k = self.key(c)
            if k not in excluded and k not in fresh:
                fresh.add(k)
                pool.append(c)
                keys.append(k)
        inc = [c for c in incumbents if self.key(c) not in fresh]
        if not pool and not inc:
            return None
        everything = pool + inc
        enc = acq.encoder.encode(everything)
        scores = acq.score_encoded(enc, everything)
        seen: Set[Hashable] = set(keys)
        order = [int(i) for i in np.argsort(-scores[: len(pool)], kind="stable")[: self.n_starts]
                 if np.isfinite(scores[i])]
        point = lambda i: _Point(everything[i], self.key(everything[i]),  # noqa: E731
                                 [a[i:i + 1] for a in enc], float(scores[i]))
        starts = [point(i) for i in order + list(range(len(pool), len(everything)))]
        best = point(int(np.argmax(scores[: len(pool)]))) if pool else None
        best = self._climb(acq, rng, starts, excluded, seen, best)
        if best is None:
            return None
        if not math.isfinite(best.score) and pool:
            # every candidate was dropped by the feasibility threshold: rank without it
            relaxed = acq.score_encoded(SpaceEncoder.take(enc, slice(0, len(pool))), pool, strict=False)
            return pool[int(np.argmax(relaxed))]
        return best.config

    def _climb(self, acq: Acquisition, rng: random.Random, active: List[_Point], excluded: Set[Hashable],
               seen: Set[Hashable], best: Optional[_Point]) -> Optional[_Point]:
        """Best-improvement steps from every start at once; returns the best non-excluded point."""
        for _ in range(self.max_steps):
            if not active:
                break
            batch = self._expand(active, rng, excluded, seen)
            if not batch:
                break
            owners, changed, values, configs, keys = zip(*batch)
            enc = self._encode(acq.encoder, active, owners, changed, values)
            scores = acq.score_encoded(enc, configs)
            top: Dict[int, int] = {}
            for j, (o, s) in enumerate(zip(owners, scores)):
                if o not in top or s > scores[top[o]]:
                    top[o] = j
            nxt = []
            for o, j in top.items():
                s = float(scores[j])
                if s > active[o].score + MIN_GAIN:
                    point = _Point(configs[j], keys[j], [a[j:j + 1] for a in enc], s)
                    nxt.append(point)
                    if best is None or s > best.score:
                        best = point
            active = nxt
        return best

    def _expand(self, active: List[_Point], rng: random.Random, excluded: Set[Hashable],
                seen: Set[Hashable]) -> List[tuple]:
        """New neighbours of every active point: (owner, parameter index, value, config, key)."""
        out = []
        part = self.key.part
        for o, point in enumerate(active):
            base = point.key
            for i, v, cfg in self.neighbours.neighbours(point.config, rng):
                k = base[:i] + (part(i, v),) + base[i + 1:]
                if k in excluded or k in seen:
                    continue
                seen.add(k)
                out.append((o, i, v, cfg, k))
        return out

    @staticmethod
    def _encode(encoder: SpaceEncoder, active: List[_Point], owners: Sequence[int], changed: Sequence[int],
                values: Sequence[Any]) -> List[np.ndarray]:
        """Encode a neighbour batch from the parents' rows, re-encoding only the changed values."""
        own = np.asarray(owners)
        ch = np.asarray(changed)
        out = []
        for i, (e, pi) in enumerate(zip(encoder.encoders, encoder.param_index)):
            parent = np.vstack([p.enc[i] for p in active])
            rows = parent[own]
            mask = np.flatnonzero(ch == pi)
            if mask.size:
                rows[mask] = e.encode([values[j] for j in mask.tolist()])
            out.append(rows)
        return out
