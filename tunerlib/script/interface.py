"""MeasurementInterface: what a tuner script subclasses."""
from __future__ import annotations

import hashlib
import json
import sys
from typing import Any, Dict, List, Optional, Sequence, Type, Union

from .inputs import FixedInputManager, InputManager
from ..objectives import MinimizeTime, Objective
from ..options import TuningOptions
from ..parameters import ConfigurationManipulator
from ..process import NOT_GIVEN, ProgramResult, call_program
from ..result import DesiredResult, Input, Result


class MeasurementInterface:
    """Declares a search space and measures one configuration.

    Override :meth:`manipulator` and either :meth:`run` or the pair
    :meth:`compile` / :meth:`run_precompiled`.  Everything else has a default.
    Subclasses extend the command line by setting ``Options`` to a dataclass that
    inherits from :class:`TuningOptions`.
    """

    Options: Type[TuningOptions] = TuningOptions

    def __init__(self, options: Optional[TuningOptions] = None) -> None:
        self.options = options if options is not None else self.Options()

    # ---- identity --------------------------------------------------------------
    def project_name(self) -> str:
        """Project the program belongs to (default: ``tunerlib``)."""
        return "tunerlib"

    def program_name(self) -> str:
        """Name of the tuned program (default: the class name)."""
        return type(self).__name__

    def program_version(self) -> str:
        """Version of the program; runs of different versions are kept apart."""
        return "0"

    def script_version(self) -> str:
        """Version of this tuner script, stored with each run: ``tunerlib worker`` measures only for runs
        whose script version equals its own, so that every result of a run comes from the same code.
        Default: the first 16 hex digits of the SHA-256 of the file that defines this class (any edit of
        that file is a new version). Override it to declare a version yourself (e.g. ``return "2.1"``)
        when edits that do not change what is measured must not lock workers out."""
        return source_digest(type(self))

    # ---- what the user defines ---------------------------------------------------
    def manipulator(self) -> ConfigurationManipulator:
        """Called once per run: return the search space."""
        raise NotImplementedError(f"{type(self).__name__} must define manipulator()")

    def objective(self) -> Objective:
        """Called once per run: how results are compared (default: minimise ``time``)."""
        return MinimizeTime()

    def input_manager(self) -> InputManager:
        """Called once per run: which input each measurement uses (default: one fixed input)."""
        return FixedInputManager()

    def seed_configurations(self) -> List[Dict[str, Any]]:
        """Configurations measured before any technique proposes (default: none)."""
        return []

    def run(self, desired_result: DesiredResult, input: Input, limit: Optional[float]) -> Result:
        """Measure ``desired_result.configuration.data``; called once per measurement.

        Must return a :class:`Result`.  ``limit`` is a time limit in seconds or None.
        The default compiles then runs the compiled program.
        """
        compiled = self.compile(desired_result.configuration.data, desired_result.id)
        return self.run_precompiled(desired_result, input, limit, compiled, desired_result.id)

    def compile(self, config_data: Dict[str, Any], id: Optional[int]) -> Any:
        """Optional first half of :meth:`run`: build the program for ``config_data``."""
        raise NotImplementedError(f"{type(self).__name__} must define run() or compile()/run_precompiled()")

    def run_precompiled(self, desired_result: DesiredResult, input: Input, limit: Optional[float],
                        compile_result: Any, id: Optional[int]) -> Result:
        """Optional second half of :meth:`run`: measure what :meth:`compile` returned."""
        raise NotImplementedError(f"{type(self).__name__} must define run() or compile()/run_precompiled()")

    def save_final_config(self, config: Dict[str, Any]) -> None:
        """Called once at the end with the best configuration (default: write it to
        ``--final-config PATH`` when given)."""
        path = getattr(self.options, "final_config", None)
        if path:
            with open(path, "w") as fh:
                json.dump(config, fh, indent=2, sort_keys=True)

    def finish_without_best(self) -> None:
        """Called once at the end instead of :meth:`save_final_config` when no configuration
        succeeded (every result failed, or nothing ran); the default does nothing."""

    # ---- helpers -------------------------------------------------------------------
    def call_program(self, cmd: Union[str, Sequence[str]], limit: Optional[float] = NOT_GIVEN,
                     memory_limit: Optional[int] = None, **kw: Any) -> ProgramResult:
        """Run a command in its own process group, killed after ``limit`` seconds; pass the ``limit``
        that ``run()`` received to the measured command (:func:`tunerlib.process.call_program`)."""
        return call_program(cmd, limit=limit, memory_limit=memory_limit, **kw)

    @classmethod
    def main(cls, args: Optional[Sequence[str]] = None) -> int:
        """Parse ``args`` (default ``sys.argv[1:]``), tune, print a summary; returns an exit code."""
        from .main import run_interface_main
        return run_interface_main(cls, args)


def source_digest(cls: type) -> str:
    """SHA-256 (16 hex digits) of the source file of ``cls``'s module; for a class without a readable
    file (defined interactively), of its qualified name."""
    path = getattr(sys.modules.get(cls.__module__), "__file__", None)
    try:
        with open(path, "rb") as fh:  # type: ignore[arg-type]
            data = fh.read()
    except (OSError, TypeError):
        data = f"{cls.__module__}.{cls.__qualname__}".encode()
    return hashlib.sha256(data).hexdigest()[:16]


if __name__ == "__main__":  # pragma: no cover
    sys.exit("tunerlib.script.interface is a library module; run a tuner script instead")
