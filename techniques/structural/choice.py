"""Whether StructuralSurrogate's model weighs the pairwise products of the numbers: chosen by prediction.

A run time often depends on two numbers together (a loop's chunk size and the OpenMP chunk size set
the work of one thread's chunk together, so the best of one moves with the other), which an additive
model cannot express; on other spaces the products explain nothing and only add unknowns.  On a space
with at least two numbers, :class:`ProductChoice` fits two models to the same results over the same
feature layout (the numbers' products included): one weighs the products under their group's prior,
the other holds them at zero (a prior variance of :data:`HELD`, so that its posterior is the
additive model's).  Before each result from the ``initial``-th on is added, both posterior means
predict it; the search samples the model whose predictions of the last ``window`` results rank them
better (Spearman's rho, from :data:`MIN_RECORDS` results on; the additive one until then and on ties).

Called by :class:`~.technique.StructuralSurrogate` for every finite result (:meth:`ProductChoice.add`);
it reads :attr:`ProductChoice.model` and :attr:`ProductChoice.products` before each proposal.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Deque, Dict, Optional, Tuple

from ...parameters.features import Active
from .model import SparseBayesLinear, rank_correlation
from .transform import ValueModels

#: the prior variance that holds the products' weights of the additive model at zero
HELD = 1e-12

#: predicted results each model needs before the products can be chosen
MIN_RECORDS = 10


def hold(model: SparseBayesLinear, kind: str) -> SparseBayesLinear:
    """``model`` with the weights of the feature groups of ``kind`` held at zero by their prior."""
    for g in model.groups:
        if g.kind == kind:
            model.prior[g.start:g.stop] = HELD
    return model


class ProductChoice:
    """The additive model and the model with the numbers' products, each behind its own
    :class:`~.transform.ValueModels`; :attr:`model` is the one whose recent predictions rank better."""

    def __init__(self, make: Callable[[], SparseBayesLinear], kind: str, log_values: Optional[bool],
                 raw: bool, window: int) -> None:
        self.options: Dict[bool, ValueModels] = {
            False: ValueModels(lambda: hold(make(), kind), log_values, raw),
            True: ValueModels(make, log_values, raw)}
        self.records: Dict[bool, Deque[Tuple[float, float]]] = {k: deque(maxlen=max(window, MIN_RECORDS))
                                                                for k in self.options}
        self.products = False

    @property
    def model(self) -> SparseBayesLinear:
        """The model the search samples (called before each proposal)."""
        return self.options[self.products].model

    def add(self, active: Active, value: float, predict: bool) -> None:
        """Record one finite result in both models; when ``predict``, first note how each posterior
        mean predicted it, and choose the model for the next proposals."""
        if predict:
            for products, values in self.options.items():
                model = values.model
                model.refresh()
                self.records[products].append((model.predict(active, model.mean), value))
        for values in self.options.values():
            values.add(active, value)
        if predict and len(self.records[True]) >= MIN_RECORDS:
            self.products = self.rho(True) > self.rho(False)

    def rho(self, products: bool) -> float:
        """The rank correlation of one model's recorded predictions with the values."""
        predicted, values = zip(*self.records[products])
        return rank_correlation(predicted, values)
