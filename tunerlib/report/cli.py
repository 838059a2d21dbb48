"""The ``tunerlib plot``, ``tunerlib report`` and ``tunerlib export`` commands.

matplotlib is imported only when a figure is drawn, so ``tunerlib --help`` stays fast and works without
the ``[plot]`` extra. Bad input (a path that is
no results database, an unknown label, runs without results, a wrong output name) is one line on
stderr and exit code 2.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

__all__ = ["add_commands"]

from .figures import KINDS


def _database(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("database", metavar="DB", help="results database: file path or SQLAlchemy URL")
    parser.add_argument("--label", nargs="+", default=[], metavar="L",
                        help="only the runs with these labels (default: every run)")


def add_commands(sub: Any) -> None:
    """Add ``plot``, ``report`` and ``export`` to the ``tunerlib`` subcommands."""
    plot = sub.add_parser("plot", help="plot runs of a results database (extra [plot])",
                          description="Best so far vs evaluations and time (median and 20-80 % band "
                                      "per label, failures marked), techniques behind new bests and their "
                                      "allocation, parameters vs objective (parallel coordinates), parameter "
                                      "importance, the objective against each parameter (slice) or over two "
                                      "parameters (contour).")
    _database(plot)
    plot.add_argument("--kind", choices=KINDS, default="history", help="which figure (default history)")
    plot.add_argument("-o", "--output", metavar="FILE",
                      help="FILE.png, FILE.svg or FILE.html (default tunerlib-KIND.png)")
    plot.add_argument("--log", action="store_true", help="logarithmic objective axis")
    plot.add_argument("--params", metavar="A,B", type=lambda text: text.split(","),
                      help="slice: only these parameters; contour: these two (default: the two most important)")
    plot.set_defaults(handler=_guarded(_plot))
    report = sub.add_parser("report", help="HTML or Markdown report of the runs of a results database")
    _database(report)
    report.add_argument("-o", "--output", metavar="FILE", default="report.html",
                        help="report.html (plots inline) or report.md (plots as SVG files beside it)")
    report.add_argument("--log", action="store_true", help="logarithmic objective axes in the plots")
    report.set_defaults(handler=_guarded(_report))
    export = sub.add_parser("export", help="every result with its configuration as CSV, JSON or Parquet")
    _database(export)
    export.add_argument("--format", choices=("csv", "json", "parquet"), default="csv",
                        help="csv (default), json (a list of records) or parquet (needs pyarrow)")
    export.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout; parquet needs one)")
    export.set_defaults(handler=_guarded(_export))


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run ``handler``; a ReportError or DatabaseError becomes one line on stderr and exit code 2."""
    def run(ns: argparse.Namespace) -> int:
        from ..db import DatabaseError
        from .data import ReportError
        try:
            return handler(ns)
        except (ReportError, DatabaseError) as exc:
            print(f"tunerlib {ns.command}: error: {exc}", file=sys.stderr)
            return 2
    return run


def _plot(ns: argparse.Namespace) -> int:
    from .data import load_runs
    from .figures import draw
    from .output import format_of, save_figure
    path = ns.output or f"tunerlib-{ns.kind}.png"
    format_of(path)
    runs = load_runs(ns.database, ns.label)
    save_figure(draw(ns.kind, runs, ns.log, ns.params), path, f"tunerlib {ns.kind}: {os.path.basename(ns.database)}")
    print(f"wrote {path} ({ns.kind} of {len(runs)} runs)")
    return 0


def _report(ns: argparse.Namespace) -> int:
    from .data import load_runs
    from .output import format_of
    from .render import write_report
    format_of(ns.output, ("html", "md"))
    runs = load_runs(ns.database, ns.label, allow_empty=True)
    write_report(runs, ns.output, ns.database, ns.log)
    print(f"wrote {ns.output} ({len(runs)} runs)")
    return 0


def _export(ns: argparse.Namespace) -> int:
    from .data import load_runs
    from .export import write_export
    runs = load_runs(ns.database, ns.label)
    count = write_export(runs, ns.format, ns.output)
    if ns.output not in (None, "-"):
        print(f"wrote {ns.output} ({count} results of {len(runs)} runs)")
    return 0
