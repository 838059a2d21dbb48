"""Baseline schedules to compare tunerlib's best against: Halide's default and its autoschedulers.

* ``default``       -- no scheduling directive at all: every Func inline except the output (and
  Funcs with update definitions, which Halide computes where they are used), serial, scalar.
* ``Mullapudi2016`` -- Mullapudi et al., "Automatically scheduling Halide image processing
  pipelines" (SIGGRAPH 2016): greedy grouping and tiling with a cost model.
* ``Adams2019``     -- Adams et al., "Learning to optimize Halide with tree search and random
  programs" (SIGGRAPH 2019): beam search guided by a learned cost model (the weights shipped in
  the ``halide`` wheel).
* ``Li2018``        -- Li et al., "Differentiable programming for image processing and deep
  learning in Halide" (SIGGRAPH 2018): a conservative compute_root + tiling/vectorising scheduler.

The autoschedulers are plugins shipped in the ``halide`` wheel
(``<package>/lib64/libautoschedule_<name>.so``), loaded once per process with ``hl.load_plugin``.
They need estimates of the output's extent (``Func.set_estimates``); the inputs are concrete
buffers, whose sizes they read directly.  ``parallelism`` is set to the number of Halide threads.
A baseline that cannot be built (plugin missing, autoscheduler error) raises :class:`BaselineError`
with the reason, so callers can print it and go on.
"""
from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Optional, Tuple

from pipelines import Compiled, Instance, compile_algorithm, jit_target

#: autoscheduler names (as Halide spells them) → plugin library stem
AUTOSCHEDULERS: Dict[str, str] = {"Mullapudi2016": "mullapudi2016", "Adams2019": "adams2019",
                                  "Li2018": "li2018"}
#: every baseline name, default first
BASELINES: Tuple[str, ...] = ("default",) + tuple(AUTOSCHEDULERS)

_loaded: Dict[str, Optional[str]] = {}   # plugin stem → None when loaded, else the error text


class BaselineError(RuntimeError):
    """A baseline could not be built; the message says why (one line)."""


def plugin_path(stem: str) -> str:
    """Path of ``libautoschedule_<stem>.so`` inside the installed ``halide`` package."""
    import halide
    base = os.path.dirname(os.path.abspath(halide.__file__))
    for sub in ("lib64", "lib"):
        path = os.path.join(base, sub, f"libautoschedule_{stem}.so")
        if os.path.exists(path):
            return path
    return os.path.join(base, "lib64", f"libautoschedule_{stem}.so")


def load_autoscheduler(name: str) -> None:
    """Load the plugin of autoscheduler ``name`` (once per process); raises BaselineError."""
    import halide as hl
    stem = AUTOSCHEDULERS.get(name)
    if stem is None:
        raise BaselineError(f"unknown autoscheduler {name!r}; choose from {', '.join(AUTOSCHEDULERS)}")
    if stem not in _loaded:
        path = plugin_path(stem)
        if not os.path.exists(path):
            _loaded[stem] = f"plugin {path} is not installed with this halide package"
        else:
            try:
                hl.load_plugin(path)
                _loaded[stem] = None
            except Exception as exc:   # HalideError or OSError from dlopen
                _loaded[stem] = f"cannot load plugin {path}: {_first_line(exc)}"
    if _loaded[stem] is not None:
        raise BaselineError(_loaded[stem])


def autoscheduler_params(name: str, threads: int) -> Dict[str, str]:
    """Parameters passed to autoscheduler ``name`` (all strings, as Halide expects)."""
    params = {"parallelism": str(max(1, threads))}
    if name == "Mullapudi2016":
        params["last_level_cache_size"] = str(16 * 1024 * 1024)
    return params


def build_baseline(inst: Instance, name: str, threads: int) -> Tuple[Compiled, Dict[str, Any]]:
    """Define, schedule with baseline ``name`` and JIT-compile; returns the compiled pipeline and
    info (``schedule_s``: autoscheduler time, ``compile_s``).  Raises BaselineError."""
    import halide as hl
    if name not in BASELINES:
        raise BaselineError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")
    alg = inst.define()
    info: Dict[str, Any] = {"schedule_s": 0.0}
    try:
        if name != "default":
            load_autoscheduler(name)
            alg.output.set_estimates([hl.Range(0, inst.width), hl.Range(0, inst.height)])
            start = time.perf_counter()
            params = hl.AutoschedulerParams(name, autoscheduler_params(name, threads))
            hl.Pipeline(alg.output).apply_autoscheduler(jit_target(), params)
            info["schedule_s"] = time.perf_counter() - start
        compiled = compile_algorithm(inst, alg)
    except hl.HalideError as exc:
        raise BaselineError(f"{name} failed: {_first_line(exc)}") from None
    info["compile_s"] = compiled.compile_s
    return compiled, info


def baseline_choices() -> List[str]:
    """Values accepted by ``--baselines`` (plus ``none``)."""
    return list(BASELINES) + ["none"]


def _first_line(exc: BaseException) -> str:
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()[:300]
    return type(exc).__name__
