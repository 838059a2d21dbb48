"""Benchmark and maintenance tools, run from a checkout (``python -m tools.NAME``); not installed."""
import sys
from typing import Callable, NoReturn, Optional


def exit_from(main: Callable[[], Optional[int]]) -> NoReturn:
    """Run a tool's ``main()`` as a program (its ``__main__`` block): exit with the status it returns;
    a ``SystemExit`` with a message (the tools' input errors: a missing folder or file, an unknown
    name) prints that one line on stderr and exits with 2, as every input error of tunerlib does."""
    try:
        status = main()
    except SystemExit as exc:
        if not isinstance(exc.code, str):
            raise
        print(exc.code, file=sys.stderr)
        status = 2
    sys.exit(status)
