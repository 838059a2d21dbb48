"""The RISE kernels as benchmark problems for ``tools/compare.py`` (real OpenCL runs).

    import sys; sys.path.insert(0, "examples/rise")
    from rise_bench import make_problem
    p = make_problem("mm")                      # default size (spaces.KERNELS["mm"].default_size)
    m = p["manipulator"]()                      # a fresh ConfigurationManipulator
    seconds = p["evaluate"](m.random(rng))      # min-of-k kernel seconds, or None on failure
    p["expert"], p["default"], p["budget"]      # paper configurations (None: outside the space), 120

``evaluate`` builds, launches, checks and times one configuration on the OpenCL device
(``device=``; PoCL's CPU device when there is no GPU) and returns None for INFEASIBLE, ERROR and
TIMEOUT results.  Measurements run in a child process (:class:`rise_worker.IsolatedRunner`, one
per calling process, device, kernel and size, started on the first evaluation, so building the dict
needs no OpenCL): a configuration that crashes the OpenCL driver is a failure, not the end of the
benchmark.  Needs pyopencl (``pip install -e '.[opencl]'``) when ``evaluate`` is first called.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rise_opencl as opencl_backend  # noqa: E402  (sibling modules)
import rise_spaces as spaces  # noqa: E402
import rise_worker  # noqa: E402

_RUNNERS: Dict[Tuple[int, str, str, int], rise_worker.IsolatedRunner] = {}


def runner(kernel: str, size: int, device: str = "auto") -> rise_worker.IsolatedRunner:
    """This process's measuring child for (device, kernel, size); a forked caller gets its own."""
    key = (os.getpid(), device, kernel, size)
    if key not in _RUNNERS:
        _RUNNERS[key] = rise_worker.IsolatedRunner(device, kernel, size)
    return _RUNNERS[key]


def make_evaluate(kernel: str, size: int, device: str = "auto",
                  policy: opencl_backend.TimingPolicy = opencl_backend.DEFAULT_POLICY
                  ) -> Callable[[Mapping[str, Any]], Optional[float]]:
    """``evaluate(cfg) -> seconds or None`` for ``kernel`` at ``size``."""
    def evaluate(cfg: Mapping[str, Any]) -> Optional[float]:
        result = runner(kernel, size, device).evaluate(cfg, policy)
        return result.time if result.state == "OK" else None
    return evaluate


def make_problem(kernel: str, size: Optional[int] = None, device: str = "auto") -> Dict[str, Any]:
    """The benchmark problem of ``kernel`` (``mm``, ``asum``, ``scal``, ``kmeans``, ``harris``,
    ``stencil``) at ``size`` (None: the kernel's default size).

    Keys: ``manipulator`` (callable -> fresh ConfigurationManipulator), ``evaluate`` (cfg ->
    seconds or None on failure), ``expert`` and ``default`` (the paper's configurations mapped to
    the size, None when outside the scaled space or undocumented), ``budget`` (the paper's total
    evaluations), ``name`` (``rise_<kernel>``), ``size``.  ValueError for a bad kernel or size.
    """
    if kernel not in spaces.KERNELS:
        raise ValueError(f"unknown RISE kernel {kernel!r}; use one of {', '.join(spaces.kernel_names())}")
    n = spaces.resolve_size(kernel, size)
    return {
        "name": f"rise_{kernel}",
        "size": n,
        "manipulator": lambda: spaces.build_space(kernel, n),
        "evaluate": make_evaluate(kernel, n, device),
        "expert": spaces.paper_config(kernel, "expert", n),
        "default": spaces.paper_config(kernel, "default", n),
        "budget": spaces.KERNELS[kernel].budget,
    }
