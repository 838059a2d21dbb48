"""Documented figures checked against the code: every figure the documentation shows (the example READMEs,
the pages under docs/) is marked with the command that printed it, and --check runs it again.

    python tools/doc_figures.py --list              # every marked figure: file:line, kind, command
    python tools/doc_figures.py --check             # re-run the fast deterministic figures, compare
    python tools/doc_figures.py --check --slow      # ... and the slow ones (minutes to an hour)
    python tools/doc_figures.py --update --only hpvm2fpga_tuner   # rewrite stale ones in place

**Marking a figure.** An HTML comment (invisible on GitHub) right before a fenced block::

    <!-- figure: check -->            re-run by --check and compared (models, replays, seeded searches)
    <!-- figure: check slow -->       the same, only with --slow (tests and CI skip it)
    <!-- figure: measured -->         machine timings: never compared, but must show their command
    (options: ``timeout=SECONDS`` per figure, default 120)

The block starts with the command, one or more lines beginning with ``$ `` (a trailing backslash
continues it; leading ``NAME=value`` words set environment variables), and the rest of the block is
what the command printed.  When the block holds only the command, the figure is the Markdown after the
block, up to ``<!-- /figure -->`` (a table the command prints).  In the expected text a line ``...``
stands for any number of lines, and a line ending in `` ...`` for any line starting with what precedes
it (a line cut short).  Before comparing, both sides get the same masks: run UUIDs, the seconds in
``after N tests in X s``, the database path in ``(seed S) in PATH``, and the shared data folder's
absolute path (written ``../shared``).

**Running.** Each command runs as printed, from a temporary copy of the repository root (symlinks to its
entries, and ``../shared`` to the shared data folder: ``$TUNERLIB_SHARED_DIR`` or ``../shared``), so a
run's ``./tunerlib.db`` or ``--database /tmp/x.db`` never touches a real file twice: absolute
``--database``/``--results-log``/``--summary-json``/``--final-config`` paths are redirected into the
temporary folder too.  ``python`` is this interpreter; ``TUNERLIB_STORE`` and ``TMPDIR`` point into the
temporary folder, which is removed afterwards (a command past its time limit is killed with every process
it started).
``--budget SECONDS`` (default 600) bounds the whole check: a figure that would start after it is a
failure (mark it ``slow`` or raise the budget).

Exit codes: 0 all compared figures match; 1 a figure is stale, unmarked or has no command (each one
named with its README line and the new value); 2 bad usage; 3 the budget ran out.

**Modules.** This file holds the command: its options, the pages it reads, the re-runs within the
budget and the problems it reports.  tools/doc_figure_pages.py reads a page's markers and blocks,
tools/doc_figure_runs.py runs a figure's commands in the sandbox, and tools/doc_figure_match.py
compares the expected text with the output and rewrites it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

if __package__ in (None, ""):  # run as ``python tools/NAME.py``: make the checkout holding tools/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.doc_figure_match import differences, matches, updated
from tools.doc_figure_pages import Figure, FigureError, read_figures, unmarked_outputs
from tools.doc_figure_runs import REPO, run_figure

#: the files checked by default: the example READMEs and the documentation's pages
DEFAULT_FILES = sorted(str(p.relative_to(REPO)) for p in [*(REPO / "examples").glob("*/README.md"),
                                                          *(REPO / "docs").rglob("*.md")]
                       if "_build" not in p.parts)


def _selected(figures: Sequence[Figure], ns: argparse.Namespace) -> List[Figure]:
    out = []
    for fig in figures:
        if ns.only and not any(text in fig.command or text in fig.where for text in ns.only):
            continue
        if fig.kind != "check" or (fig.slow and not ns.slow and not ns.only):
            continue
        out.append(fig)
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tools/doc_figures.py", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="Markdown files (default: examples/*/README.md and docs/**/*.md)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--list", action="store_true", help="list the marked figures")
    mode.add_argument("--check", action="store_true", help="re-run the deterministic figures and compare")
    mode.add_argument("--update", action="store_true", help="re-run them and rewrite the stale ones")
    parser.add_argument("--slow", action="store_true", help="include figures marked slow")
    parser.add_argument("--only", nargs="+", metavar="TEXT", help="only figures whose command or file:line "
                        "contains one of these (slow ones included)")
    parser.add_argument("--budget", type=float, default=600.0, metavar="SECONDS",
                        help="time for all re-runs together (default 600)")
    return parser


def _read_all(files: Sequence[str]) -> Tuple[Dict[str, Tuple[List[str], List[Figure]]], List[str]]:
    """({path: (lines, figures)}, problems: malformed or unmarked figures)."""
    problems: List[str] = []
    parsed: Dict[str, Tuple[List[str], List[Figure]]] = {}
    for path in files:
        try:
            parsed[path] = read_figures(path)
        except (OSError, FigureError) as exc:
            problems.append(f"{exc}")
            continue
        problems += [f"{where}: looks like printed output but is not marked as a figure "
                     "(<!-- figure: check|measured --> and its command)"
                     for where in unmarked_outputs(path, *parsed[path])]
    return parsed, problems


class _Budget(Exception):
    """The --budget ran out before a figure."""


def _rerun(path: str, lines: List[str], figures: List[Figure], ns: argparse.Namespace, start: float,
           problems: List[str]) -> Tuple[int, int]:
    """Re-run the chosen figures of one README (rewriting stale ones with --update); (run, stale)."""
    ran = stale = 0
    chosen = _selected(figures, ns)
    for fig in (list(reversed(chosen)) if ns.update else chosen):   # bottom-up: edits move no later figure
        left = ns.budget - (time.monotonic() - start)
        if left <= 0:
            raise _Budget(f"{fig.where}: not run: the --budget of {ns.budget:g} s is spent (mark it slow or "
                          "raise --budget)")
        t0 = time.monotonic()
        actual, why = run_figure(fig, min(fig.timeout, left))
        ran += 1
        if actual is None:
            problems.append(f"{fig.where}: `{fig.command}` {why}")
        elif matches(fig.expected, actual):
            print(f"{fig.where}: ok ({time.monotonic() - t0:.1f} s) {fig.command}")
        elif ns.update:
            stale += 1
            lines[fig.first:fig.end] = updated(fig, actual)
            Path(path).write_text("\n".join(lines), encoding="utf-8")
            print(f"{fig.where}: updated {fig.command}")
        else:
            stale += 1
            problems.append(f"{fig.where}: stale figure of `{fig.command}`:\n" + "\n".join(differences(fig, actual)))
    return ran, stale


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point (see the module docstring); returns the exit code."""
    ns = _parser().parse_args(argv)
    os.chdir(REPO)
    parsed, problems = _read_all(ns.files or DEFAULT_FILES)
    if ns.list:
        for fig in (fig for _, figures in parsed.values() for fig in figures):
            print(f"{fig.where}\t{fig.kind + (' slow' if fig.slow else '')}\t{fig.command}")
        print("\n".join(problems), file=sys.stderr)
        return 1 if problems else 0
    start, ran, stale = time.monotonic(), 0, 0
    try:
        for path, (lines, figures) in parsed.items():
            r, s = _rerun(path, lines, figures, ns, start, problems)
            ran, stale = ran + r, stale + s
    except _Budget as exc:
        print(str(exc), file=sys.stderr)
        return 3
    if ns.update and stale:
        print("re-run --check to confirm the rewritten figures (a figure whose line count changed inside "
              "'...' may need a hand edit)")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{ran} figures re-run, {stale} stale, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
