"""Measuring one configuration with a code generator: the ``builtin`` and ``taco`` backends.

:class:`Evaluator` turns a configuration into C source (``taco_codegen.generate`` or the TACO CLI),
compiles and loads it (:class:`taco_harness.Compiler`, cached by source hash), then checks and times
it (:func:`taco_harness.measure`).  Outcomes, as :class:`tunerlib.Result`:

* ``OK`` -- ``time`` = min-of-k seconds; ``extra``: ``compile_s``, ``first_run_s``, ``runs``,
  ``median_s``;
* ``INFEASIBLE`` -- the schedule could not be built: ``extra["phase"]`` is ``generate`` (a loop
  order the built-in generator cannot lower), ``taco`` (TACO rejected it, crashed or timed out)
  or ``compile`` (the C compiler failed); ``extra["error"]`` is the one-line reason;
* ``ERROR`` -- it ran but gave a wrong output (``extra["error"]``: ``wrong output: max abs error``)
  or, with the taco backend, crashed (``kernel crashed (SIGSEGV)``, ``extra["crashed"]``);
* ``TIMEOUT`` -- the run passed ``run_timeout_s`` (built-in kernels stop themselves between
  parallel regions) or the driver's limit.  TACO's kernels have no deadline check: they are
  measured in a worker process (``taco_isolate.IsolatedMeasurer``) killed after twice the run
  timeout plus the timing budget and :data:`ISOLATION_SLACK_S`, counted once the worker has
  started (its start-up has a limit of its own, ``taco_isolate.STARTUP_TIMEOUT_S``).

The states follow the measurement kit's rule (:mod:`tunerlib.measure.states`).

Nothing here raises for a bad configuration; the replay backend (``taco_replay.py``) uses
``tunerlib.replay``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Tuple

import taco_codegen
from taco_harness import DEFAULT_POLICY, CompiledKernel, CompileError, Compiler, TimingPolicy, measure
from taco_loopnest import IllegalOrder
from taco_problem import Problem
from taco_cli import TacoCli, TacoFailure
from taco_isolate import IsolatedMeasurer
from tunerlib import Result
from tunerlib.measure import rejected

#: seconds added to an isolated TACO measurement's deadline for loading, binding and checking
#: (the worker's start-up is not counted: see ``taco_isolate.STARTUP_TIMEOUT_S``)
ISOLATION_SLACK_S = 10.0


@dataclass
class Counts:
    """What an evaluator did (printed at the end of a run)."""

    generated: int = 0
    illegal: int = 0
    taco_failed: int = 0
    compile_failed: int = 0
    wrong: int = 0
    timeouts: int = 0


class Evaluator:
    """Measures configurations of one kernel on one problem with one backend."""

    def __init__(self, kernel: str, problem: Problem, backend: str = "builtin",
                 compiler: Optional[Compiler] = None, policy: Optional[TimingPolicy] = None,
                 run_timeout_s: float = 2.0, taco: Optional[TacoCli] = None) -> None:
        if backend not in ("builtin", "taco"):
            raise ValueError(f"unknown code-generating backend {backend!r}; use builtin or taco")
        if backend == "taco" and taco is None:
            raise ValueError("the taco backend needs a TacoCli (--taco PATH)")
        self.kernel, self.problem, self.backend = kernel, problem, backend
        self.compiler = compiler or Compiler()
        self.policy = policy or DEFAULT_POLICY
        self.run_timeout_s, self.taco = run_timeout_s, taco
        self.counts = Counts()
        self._isolated: Optional[IsolatedMeasurer] = None

    def source(self, cfg: Mapping[str, Any]) -> str:
        """C source of ``cfg``; raises IllegalOrder (builtin) or TacoFailure (taco)."""
        if self.backend == "taco":
            return self.taco.generate(self.kernel, cfg)
        return taco_codegen.generate(self.kernel, cfg)

    def build(self, cfg: Mapping[str, Any]) -> Tuple[Optional[CompiledKernel], Optional[Result]]:
        """``(kernel, None)`` or ``(None, INFEASIBLE result)``; never raises for a bad schedule."""
        try:
            source = self.source(cfg)
        except IllegalOrder as exc:
            self.counts.illegal += 1
            return None, _infeasible("generate", str(exc))
        except TacoFailure as exc:
            self.counts.taco_failed += 1
            return None, _infeasible("taco", str(exc))
        self.counts.generated += 1
        try:
            kernel = self.compiler.build(source)
        except CompileError as exc:
            self.counts.compile_failed += 1
            return None, _infeasible("compile", exc.first_line, compile_s=round(exc.seconds, 4))
        kernel.set_omp(*omp_settings(cfg))
        return kernel, None

    def evaluate(self, cfg: Mapping[str, Any], limit: Optional[float] = None) -> Result:
        """Build, check and time ``cfg`` (see the module docstring for the outcomes)."""
        kernel, failure = self.build(cfg)
        if failure is not None:
            return failure
        if self.backend == "taco":     # TACO's code has no deadline check: a worker killed on overrun
            if self._isolated is None:
                self._isolated = IsolatedMeasurer(self.problem, self.backend, self.policy, ISOLATION_SLACK_S)
            result = self._isolated.measure(kernel, omp_settings(cfg), self.run_timeout_s, limit)
        else:
            result = measure(kernel, self.problem, self.backend, self.policy, self.run_timeout_s, limit)
        if result.state == "ERROR":
            self.counts.wrong += 1
        elif result.state == "TIMEOUT":
            self.counts.timeouts += 1
        return result

    def close(self) -> None:
        """Stop the measuring worker of the taco backend, if one runs (called at the end of a run)."""
        if self._isolated is not None:
            self._isolated.close()
            self._isolated = None

    def seconds(self, cfg: Mapping[str, Any]) -> Optional[float]:
        """Measured seconds of ``cfg``, or None when it is not OK (for benchmark tools)."""
        result = self.evaluate(cfg)
        return result.time if result.state == "OK" else None


def omp_settings(cfg: Mapping[str, Any]) -> Tuple[int, int, int]:
    """(dynamic, chunk, threads) of ``cfg`` for ``CompiledKernel.set_omp``."""
    return int(cfg["omp_scheduling_type"] == "dynamic"), int(cfg["omp_chunk_size"]), int(cfg["omp_num_threads"])


def _infeasible(phase: str, error: str, **extra: Any) -> Result:
    return rejected(error, phase, **extra)
