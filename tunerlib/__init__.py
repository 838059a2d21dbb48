"""tunerlib: an extensible program-autotuning framework.

A tuner script subclasses :class:`MeasurementInterface`, declares a search space with
:mod:`tunerlib.parameters` and measures one configuration per call of ``run``.

Names are imported lazily (PEP 562) so that ``import tunerlib.parameters`` stays light.
"""
from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "TuningRunManager": "api", "tune_function": "api", "FunctionRun": "api",
    "FixedInputManager": "inputs", "InputManager": "inputs",
    "MeasurementInterface": "interface",
    "MaximizeAccuracy": "objectives", "MaximizeAttribute": "objectives",
    "MinimizeAttribute": "objectives", "MinimizeTime": "objectives", "Objective": "objectives",
    "TuningOptions": "options",
    "Configuration": "result", "DesiredResult": "result", "Input": "result", "Result": "result",
    "TuningRun": "tuningrun",
    "call_program": "process", "captured_stderr": "process",
    "UsageError": "errors",
    "RetimedBest": "finalform",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tunerlib' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return __all__
