"""BLAS thread limits for the model-based techniques.

numpy's BLAS (OpenBLAS here) runs products above a size threshold on several threads.  For the
vectors and small matrices a technique works with, waking those threads costs far more than the
product: on a busy 2-core machine a dot product of 15,000 numbers took 15 ms with 2 BLAS threads
and 5 us with one, and StructuralSurrogate's suggestion on a 100-city tour 6.7 ms instead of 2.5 ms.
A threaded sum also depends on the thread count, so a model's floating-point results (and with them
the run) would differ between machines with different core counts.  A technique therefore does its
linear algebra under :func:`single_thread_blas`; measurements (which may use BLAS themselves) are
never limited.
"""
from __future__ import annotations

from typing import Any, Optional

from threadpoolctl import ThreadpoolController

_CONTROLLER: Optional[ThreadpoolController] = None


def single_thread_blas() -> Any:
    """Called around a technique's model fit or proposal: a context manager that limits BLAS to one
    thread inside it and restores the previous limits on exit (about 30 us per use)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")
