"""Errors a tuner script or the command line reports to the user as one line (exit code 2)."""


class UsageError(ValueError):
    """Bad command-line input or tuner-script option; raise it from a tuner script's ``__init__``
    with a one-line message that names the problem and the fix."""


class TunerScriptError(RuntimeError):
    """The tuner script broke the interface contract (one-line message)."""
