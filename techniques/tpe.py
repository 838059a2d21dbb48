"""Tree-structured Parzen estimator (TPE, Bergstra et al. 2011; Optuna's multivariate form).

Call pattern (see :mod:`tunerlib.techniques.base`): ``observe`` records every result of the run,
whoever requested it (inside a bandit TPE learns from all arms); ``desired_configuration`` returns
uniformly random feasible configurations until ``startup`` results are in -- or, with ``defer`` and
bound inside a meta-technique, None, so that its sibling arms start the search -- and afterwards
one proposal per call:

1. the OK results are split by value into the best ``gamma`` share L (at least 2, at most
   ``max_good``) and the rest G; failed results (error, timeout, infeasible) belong to G;
2. ``candidates`` configurations are drawn from the density l(x) of L: a good configuration taken
   at random (or, with weight ``prior_weight``, a uniformly random feasible one), each modelled
   parameter moved by its kernel (below), the others copied from it;
3. the proposal is the candidate with the largest log l(x) - log g(x) (g the same density over G,
   on at most ``max_bad`` of its members) that satisfies the known constraints and was not measured
   or proposed before; when none qualifies, a random feasible configuration not seen before.

Kernels are multivariate products over the modelled parameters, normalised over each parameter's
values: an enum keeps its value with probability ``1 / (1 + beta (k - 1))`` (beta = 0.2) and takes
each other value with ``beta`` times that; an ordered parameter with at most 2,000 values (an
ordinal, an integer range, a power of two) moves over its value positions by a discrete Gaussian
whose width (in positions) shrinks with the set's size as ``n ** (-1 / (d + 4))``; a float moves by
a Gaussian truncated to its unit interval.  Permutations of more than 256 orders, arrays and other
structured parameters are not modelled (smaller permutations are one enum): they are copied from
the chosen good configuration and each moved to a neighbouring value
(:meth:`~tunerlib.parameters.base.Parameter.neighbours`) with probability one over the number of
parameters (at least one of them moves when nothing is modelled).  A deferring TPE inside a
meta-technique proposes nothing on a space where it models nothing.

The cost per proposal is ``O(candidates * (|L| + |G|) * d)`` in array operations over all parameters
of a kind at once: 1.5-2.5 ms per evaluation on the recorded Kernel Tuner spaces, 3.1 ms on the
40-parameter HPVM2FPGA space (``tools/compare.py``'s CPU column), so it can be an arm of a bandit.
It does not grow with the run: the best ``max_good`` OK results are kept in a sorted list updated as
each result comes in (``O(log max_good)``), and once the bad set holds more than ``max_bad``
configurations its uniform random subset is drawn by position (Floyd's sampling) and mapped to rows
around the good ones, so a proposal reads at most ``max_good + max_bad`` rows of codes whether the
run holds a thousand results or a million.  (While the bad set fits in ``max_bad`` it is read whole,
in value order.)
"""
from __future__ import annotations

import bisect
import math
import random
from typing import Any, List, Optional, Set, Tuple

import numpy as np
from scipy.special import ndtr

from ..parameters import ConfigurationError, ConfigurationManipulator
from .base import Config, Feedback, Technique, TechniqueError
from .options import Option, configure
from .tpe_codes import CodedParameter, CodeRows

#: enum kernel: weight of each other value relative to the kept one
BETA = 0.2


class TPE(Technique):
    """Multivariate tree-structured Parzen estimator (see the module docstring)."""

    description = "tree-structured Parzen estimator (multivariate kernels; learns from every result)"

    OPTIONS = (Option("startup", int, 10, 1, 1000000, 5, 20, "results before the first proposal"),
               Option("gamma", float, 0.15, 0.01, 0.5, 0.05, 0.3, "share of OK results in the good set"),
               Option("max_good", int, 25, 2, 100000, 10, 50, "most configurations in the good set"),
               Option("max_bad", int, 300, 10, 1000000, 100, 1000, "most configurations in the bad set"),
               Option("candidates", int, 48, 1, 100000, 16, 128, "candidates drawn per proposal"),
               Option("prior_weight", float, 1.0, 0.0, 1000.0, 0.5, 2.0,
                      "weight of the uniform prior in each density (in configurations)"),
               Option("bandwidth", float, 0.5, 0.01, 10.0, 0.2, 1.0,
                      "kernel width scale (share of a parameter's range at one configuration)"),
               Option("defer", bool, False,
                      doc="inside a meta-technique: propose nothing before ``startup`` results (the "
                          "sibling arms start the search) and nothing on a space without modelled parameters"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    startup: int
    gamma: float
    max_good: int
    max_bad: int
    candidates: int
    prior_weight: float
    bandwidth: float
    defer: bool

    def __init__(self, name: Optional[str] = None, **options: Any) -> None:
        super().__init__(name)
        configure(self, options)

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random, path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self.coded: List[CodedParameter] = []
        self.unmodelled: List[Any] = []
        for p in manipulator.parameters:
            try:
                self.coded.append(CodedParameter(p))
            except (ValueError, TypeError, NotImplementedError):
                self.unmodelled.append(p)
        self.move_rate = 1.0 / len(manipulator.parameters)
        self._index_kinds()
        # deferring is for arms of a meta-technique (bound under its path); alone, TPE must propose
        self.waits = self.defer and "/" in self.path
        self.np_rng = np.random.default_rng(rng.getrandbits(63))
        self.ok = CodeRows(len(self.coded))       # OK results: codes and values
        self.ok_configs: List[Config] = []
        self.top: List[Tuple[float, int]] = []    # (value, OK row) of the best max_good OK results, sorted
        self.failed = CodeRows(len(self.coded))   # failed results: codes
        self.seen: Set[str] = set()
        self.results = 0

    def _index_kinds(self) -> None:
        """Column indices of each kind among the modelled parameters, their numbers of values, the
        ordered ones grouped by that number (they share a width and a normaliser table), and the enum
        kernel's weights (called once by :meth:`bind`)."""
        kinds = np.array([c.kind for c in self.coded], dtype=object)
        self._enum, self._ordered, self._float = (np.flatnonzero(kinds == kind)
                                                  for kind in ("enum", "ordered", "float"))
        self._k = np.array([max(c.k, 1) for c in self.coded], dtype=np.int64)
        k_ordered = self._k[self._ordered]
        self._ordered_groups = [(int(k), np.flatnonzero(k_ordered == k)) for k in np.unique(k_ordered)]
        self._keep = 1.0 / (1.0 + BETA * (self._k[self._enum] - 1))
        self._log_keep, self._log_other = np.log(self._keep), np.log(BETA * self._keep)

    def check_space(self, manipulator: ConfigurationManipulator) -> None:
        if not manipulator.parameters:
            raise TechniqueError("TPE: the space has no parameters")

    def observe(self, feedback: Feedback) -> None:
        """Record one result (anyone's): OK results by value, failures as bad configurations."""
        super().observe(feedback)
        if feedback.duplicate:
            return
        self.seen.add(feedback.key)
        self.results += 1
        try:
            codes = np.array([c.code(feedback.config) for c in self.coded])
        except (KeyError, TypeError, ValueError):
            return
        if feedback.ok and math.isfinite(feedback.value):
            entry = (feedback.value, self.ok.n)
            if len(self.top) < self.max_good or entry < self.top[-1]:
                bisect.insort(self.top, entry)
                del self.top[self.max_good:]
            self.ok.add(codes, feedback.value)
            self.ok_configs.append(feedback.config)
        else:
            self.failed.add(codes, math.inf)

    def desired_configuration(self) -> Optional[Config]:
        """Before ``startup`` results (and two OK ones): a new random feasible configuration, or None
        for a deferring arm; then the best candidate by l/g that is feasible and new, else a new random
        feasible configuration."""
        if self.waits and not self.coded:
            return None
        if self.results < self.startup or self.ok.n < 2:
            return None if self.waits else self._random_new()
        good, bad = self._split()
        centre_of, codes = self._draw(good[1])
        scores = self._log_density(codes, good[1]) - self._log_density(codes, bad)
        assert self.manipulator is not None
        for i in np.argsort(-scores, kind="stable"):
            cfg = self._decode(good[0], int(centre_of[i]), codes[i])
            if cfg is None:
                continue
            key = self.manipulator.hash_config(cfg)
            if key not in self.seen and self.manipulator.is_feasible(cfg):
                self.seen.add(key)
                return cfg
        return self._random_new()

    # ---- the densities ------------------------------------------------------------------------
    def _split(self) -> Tuple[Tuple[List[Config], np.ndarray], np.ndarray]:
        """((the good configurations, their codes), the bad set's codes, at most ``max_bad`` of them:
        the other OK results and the failures, a random subset when there are more)."""
        n_ok = self.ok.n
        n_good = min(self.max_good, max(2, math.ceil(self.gamma * n_ok)))
        good = np.array([row for _, row in self.top[:n_good]], dtype=np.int64)
        n_other = n_ok - n_good
        if n_other + self.failed.n <= self.max_bad:  # at most max_good + max_bad OK rows to sort
            order = np.argsort(self.ok.values, kind="stable")
            bad = np.concatenate([self.ok.codes[order[n_good:]], self.failed.codes])
        else:
            picked = np.sort(self.np_rng.choice(n_other + self.failed.n, self.max_bad, replace=False))
            rows = picked[picked < n_other]
            for row in np.sort(good):  # the k-th OK row that is not a good one
                rows = rows + (rows >= row)
            bad = np.concatenate([self.ok.codes[rows], self.failed.codes[picked[picked >= n_other] - n_other]])
        return ([self.ok_configs[i] for i in good], self.ok.codes[good]), bad

    def _widths(self, n: int) -> np.ndarray:
        """Kernel width per modelled parameter for a set of ``n`` configurations (positions for
        ordered parameters, unit interval for floats)."""
        shrink = self.bandwidth * max(n, 1) ** (-1.0 / (len(self.coded) + 4))
        return np.array([max(0.5, shrink * (c.k - 1)) if c.kind == "ordered" else
                         max(0.02, shrink) for c in self.coded])

    def _log_density(self, x: np.ndarray, centres: np.ndarray) -> np.ndarray:
        """log of the kernel mixture over ``centres`` plus the uniform prior, at each row of ``x``
        (every parameter kind in one array operation)."""
        n = centres.shape[0]
        log_prior = -float(np.log(self._k[self._enum]).sum() + np.log(self._k[self._ordered]).sum())
        if n == 0:
            return np.full(x.shape[0], log_prior)
        widths = self._widths(n)
        log_k = np.zeros((x.shape[0], n))
        e, o, f = self._enum, self._ordered, self._float
        if e.size:
            same = x[:, None, e] == centres[None, :, e]
            log_k += np.where(same, self._log_keep, self._log_other).sum(axis=2)
        for cols, norm in ((o, self._ordered_norm), (f, self._float_norm)):
            if cols.size:
                d = (x[:, None, cols] - centres[None, :, cols]) / widths[cols]
                log_k -= 0.5 * (d * d).sum(axis=2) + norm(centres[:, cols], widths[cols])[None, :]
        w = self.prior_weight
        if w <= 0:
            top = log_k.max(axis=1, keepdims=True)
            return top[:, 0] + np.log(np.exp(log_k - top).sum(axis=1)) - math.log(n)
        stacked = np.concatenate([log_k, np.full((x.shape[0], 1), log_prior + math.log(w))], axis=1)
        top = stacked.max(axis=1, keepdims=True)
        return top[:, 0] + np.log(np.exp(stacked - top).sum(axis=1)) - math.log(n + w)

    def _ordered_norm(self, centres: np.ndarray, widths: np.ndarray) -> np.ndarray:
        """Sum over the ordered parameters of the log normalising constant of the discrete Gaussian
        around each centre: exact for up to 256 values (one table per number of values, whose
        parameters share a width), the Gaussian's mass over the positions' range beyond."""
        total = np.zeros(centres.shape[0])
        for k, cols in self._ordered_groups:
            w, c = widths[cols], centres[:, cols]
            if k <= 256:
                grid = np.arange(k, dtype=float)
                table = np.log(np.exp(-0.5 * ((grid[:, None] - grid[None, :]) / w[0]) ** 2).sum(axis=0))
                total += table[c.astype(int)].sum(axis=1)
            else:
                mass = ndtr((k - 0.5 - c) / w) - ndtr((-0.5 - c) / w)
                total += np.log(w * math.sqrt(2 * math.pi) * np.maximum(mass, 1e-12)).sum(axis=1)
        return total

    @staticmethod
    def _float_norm(centres: np.ndarray, widths: np.ndarray) -> np.ndarray:
        """Sum over the floats of the log normalising constant of the Gaussian truncated to [0, 1]."""
        mass = ndtr((1.0 - centres) / widths) - ndtr(-centres / widths)
        return np.log(widths * math.sqrt(2 * math.pi) * np.maximum(mass, 1e-12)).sum(axis=1)

    def _draw(self, centres: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``candidates`` draws from l(x), in codes: (the good configuration each was drawn around, -1
        for a draw from the uniform prior; the codes).  Only the chosen candidate is decoded."""
        n, m = centres.shape[0], self.candidates
        w = self.prior_weight
        centre_of = self.np_rng.integers(0, n, m)
        if w > 0:
            centre_of[self.np_rng.random(m) < w / (n + w)] = -1
        codes = centres[np.maximum(centre_of, 0)].copy()
        widths = self._widths(n)
        e = self._enum
        if e.size:
            k = self._k[e]
            other = self.np_rng.integers(0, k - 1, (m, e.size))
            other = other + (other >= codes[:, e])
            codes[:, e] = np.where(self.np_rng.random((m, e.size)) < self._keep, codes[:, e], other)
        for cols, lo, hi in ((self._ordered, -0.5, self._k[self._ordered] - 0.5), (self._float, 0.0, 1.0)):
            if cols.size:
                codes[:, cols] = self._truncated(codes[:, cols], widths[cols], lo, hi)
        o = self._ordered
        codes[:, o] = np.clip(np.rint(codes[:, o]), 0, self._k[o] - 1)
        prior = np.flatnonzero(centre_of < 0)
        if prior.size:
            discrete = np.concatenate([e, o])
            codes[np.ix_(prior, discrete)] = self.np_rng.integers(0, self._k[discrete], (prior.size, discrete.size))
            codes[np.ix_(prior, self._float)] = self.np_rng.random((prior.size, self._float.size))
        return centre_of, codes

    def _truncated(self, centre: np.ndarray, width: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
        """Gaussian draws around ``centre`` (columns: parameters), redrawn where they fall outside
        [lo, hi] (up to 8 times, then clipped)."""
        x = centre + width * self.np_rng.standard_normal(centre.shape)
        for _ in range(8):
            out = (x < lo) | (x > hi)
            if not out.any():
                break
            x = np.where(out, centre + width * self.np_rng.standard_normal(centre.shape), x)
        return np.clip(x, lo, hi)

    def _decode(self, configs: List[Config], centre: int, codes: np.ndarray) -> Optional[Config]:
        """The configuration of one candidate: the unmodelled parameters from its good configuration
        (a random feasible configuration for a prior draw), the modelled ones from ``codes``."""
        assert self.manipulator is not None
        try:
            cfg = self.manipulator.random(self.rng) if centre < 0 else self.manipulator.copy(configs[centre])
        except ConfigurationError:
            return None
        for j, c in enumerate(self.coded):
            c.decode(cfg, codes[j])
        if centre >= 0 and self.unmodelled:
            moving = [p for p in self.unmodelled if self.rng.random() < self.move_rate]
            if not moving and not self.coded:
                moving = [self.rng.choice(self.unmodelled)]
            for p in moving:
                near = p.neighbours(cfg[p.name], self.rng, 1)
                if near:
                    cfg[p.name] = near[0]
        return cfg

    def _random_new(self) -> Optional[Config]:
        assert self.manipulator is not None
        for _ in range(50):
            try:
                cfg = self.manipulator.random(self.rng)
            except ConfigurationError:
                return None
            key = self.manipulator.hash_config(cfg)
            if key not in self.seen:
                self.seen.add(key)
                return cfg
        return None
