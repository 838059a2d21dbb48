"""tunerlib: an extensible program-autotuning framework.

A tuner script subclasses :class:`MeasurementInterface`, declares a search space with
:mod:`tunerlib.parameters` and measures one configuration per call of ``run``.

Names are imported lazily (PEP 562) so that ``import tunerlib.parameters`` stays light.
"""
from .lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "TuningRunManager": "script.api", "tune_function": "script.api", "FunctionRun": "script.api",
    "FixedInputManager": "script.inputs", "InputManager": "script.inputs",
    "MeasurementInterface": "script.interface",
    "MaximizeAccuracy": "objectives", "MaximizeAttribute": "objectives",
    "MinimizeAttribute": "objectives", "MinimizeTime": "objectives", "Objective": "objectives",
    "MultiObjective": "multiobjective", "parse_objectives": "multiobjective",
    "TuningOptions": "options",
    "Configuration": "result", "DesiredResult": "result", "Input": "result", "Result": "result",
    "TuningRun": "engine.run",
    "call_program": "process", "captured_stderr": "process",
    "UsageError": "errors",
    "RetimedBest": "engine.final_config",
    "load_results": "analysis", "load_store_records": "analysis",
}

__all__ = sorted([*_EXPORTS, "lazy_exports"]) + ["__version__"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
