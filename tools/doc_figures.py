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
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
#: the files checked by default: the example READMEs and the documentation's pages
DEFAULT_FILES = sorted(str(p.relative_to(REPO)) for p in [*(REPO / "examples").glob("*/README.md"),
                                                          *(REPO / "docs").rglob("*.md")]
                       if "_build" not in p.parts)
KINDS = ("check", "measured")
DEFAULT_TIMEOUT = 120.0
_MARK = re.compile(r"^<!--\s*figure:\s*(?P<spec>[^>]*?)\s*-->\s*$")
_END = re.compile(r"^<!--\s*/figure\s*-->\s*$")
_FENCE = re.compile(r"^(```+|~~~+)(.*)$")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_ELAPSED = re.compile(r"(after \d+ tests in )[0-9.]+( s\b)")
_DB_PATH = re.compile(r"(\(seed [^)]*\) in )\S+$")
#: options whose value is a file the run writes: redirected into the temporary folder when absolute
_WRITTEN = ("--database", "--results-log", "--summary-json", "--final-config", "--json")
WILD = "..."


class FigureError(ValueError):
    """A README figure that cannot be read (no command, unclosed block): one line with its place."""


@dataclass
class Figure:
    """One marked figure of a README."""

    path: str                   #: README path as given
    line: int                   #: 1-based line of the marker comment
    kind: str                   #: "check" or "measured"
    slow: bool
    timeout: float
    commands: List[str]         #: the commands as printed (continuation lines joined), run in order
    expected: List[str]         #: expected output lines (of all commands, one after the other)
    first: int                  #: 0-based index in the file of the first expected line
    end: int                    #: 0-based index one past the last expected line

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def command(self) -> str:
        """The commands on one line (for messages)."""
        return " ; ".join(self.commands)


# ------------------------------------------------------------------------------------------ reading
def _spec(spec: str, where: str) -> Tuple[str, bool, float]:
    words = spec.split()
    if not words or words[0] not in KINDS:
        raise FigureError(f"{where}: figure marker needs a kind ({' or '.join(KINDS)}), got {spec!r}")
    slow, timeout = False, DEFAULT_TIMEOUT
    for word in words[1:]:
        if word == "slow":
            slow = True
        elif word.startswith("timeout="):
            try:
                timeout = float(word.split("=", 1)[1])
            except ValueError:
                raise FigureError(f"{where}: bad {word!r}; write timeout=SECONDS") from None
        else:
            raise FigureError(f"{where}: unknown figure option {word!r} (slow, timeout=SECONDS)")
    return words[0], slow, timeout


def _commands(lines: List[str], where: str) -> Tuple[List[str], int]:
    """(the commands of a block's first lines, how many lines they used): every leading line that starts
    with ``$ ``, with its backslash continuation lines."""
    if not lines or not lines[0].startswith("$ "):
        raise FigureError(f"{where}: the figure's block must start with its command ('$ python ...')")
    commands: List[str] = []
    used, parts = 0, None
    for line in lines:
        if parts is None:
            if not line.startswith("$ "):
                break
            parts, text = [], line[2:]
        else:
            text = line
        used += 1
        if text.rstrip().endswith("\\"):
            parts.append(text.rstrip()[:-1].strip())
            continue
        parts.append(text.strip())
        commands.append(" ".join(p for p in parts if p))
        parts = None
    if parts:
        commands.append(" ".join(p for p in parts if p))
    return commands, used


def read_figures(path: str) -> Tuple[List[str], List[Figure]]:
    """(the file's lines, its marked figures); FigureError for a malformed one."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    figures: List[Figure] = []
    i = 0
    while i < len(lines):
        match = _MARK.match(lines[i])
        if not match:
            i += 1
            continue
        where = f"{path}:{i + 1}"
        kind, slow, timeout = _spec(match.group("spec"), where)
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        fence = _FENCE.match(lines[j]) if j < len(lines) else None
        if not fence:
            raise FigureError(f"{where}: a figure marker must be followed by a fenced block holding its command")
        close = next((k for k in range(j + 1, len(lines)) if lines[k].startswith(fence.group(1))), None)
        if close is None:
            raise FigureError(f"{where}: the figure's block is not closed")
        commands, used = _commands(lines[j + 1:close], where)
        first, end = j + 1 + used, close
        if first == close:            # the command alone: the figure is the Markdown up to <!-- /figure -->
            stop = next((k for k in range(close + 1, len(lines)) if _END.match(lines[k])), None)
            if stop is None:
                raise FigureError(f"{where}: a block holding only the command needs <!-- /figure --> after "
                                  "the figure")
            inner = next((k for k in range(close + 1, stop) if _MARK.match(lines[k])), None)
            if inner is not None:
                raise FigureError(f"{where}: the figure runs into the figure marked at line {inner + 1}; end it "
                                  "with <!-- /figure -->")
            first, end = close + 1, stop
            while first < end and not lines[first].strip():
                first += 1
            while end > first and not lines[end - 1].strip():
                end -= 1
        figures.append(Figure(path, i + 1, kind, slow, timeout, commands, lines[first:end], first, end))
        i = end + 1
    return lines, figures


def _split_env(command: str) -> Tuple[Dict[str, str], List[str]]:
    words = shlex.split(command)
    env = {}
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return env, words


def unmarked_outputs(path: str, lines: Sequence[str], figures: Sequence[Figure]) -> List[str]:
    """Fenced blocks that look like a tuner's printed output (a ``tunerlib: ...`` summary line, a
    ``best ...`` line, a speed-up table) but are not marked as figures: ``file:line`` of each."""
    marked = set()
    for fig in figures:
        marked.update(range(fig.line, fig.end + 2))
    out, i = [], 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        close = next((k for k in range(i + 1, len(lines)) if lines[k].startswith(fence.group(1))), len(lines))
        body = lines[i + 1:close]
        looks = any(line.startswith(("tunerlib: ", "best ")) or "speed-up" in line for line in body)
        if looks and (i + 1) not in marked:
            out.append(f"{path}:{i + 1}")
        i = close + 1
    return out


# ------------------------------------------------------------------------------------------ running
def shared_dir() -> Path:
    """The shared data folder: $TUNERLIB_SHARED_DIR or ../shared beside the repository."""
    return Path(os.environ.get("TUNERLIB_SHARED_DIR") or REPO.parent / "shared").resolve()


def _sandbox(root: Path) -> Path:
    """A temporary repository root: symlinks to the repository's entries (not .git, nor a results
    database in the checkout with its -wal, -shm and -journal files, which a run there may be writing
    and deleting: a command's own default database is made fresh); ``../shared`` the shared folder."""
    work = root / "repo"
    work.mkdir()
    for entry in REPO.iterdir():
        if entry.name != ".git" and not entry.name.startswith("tunerlib.db"):
            (work / entry.name).symlink_to(entry)
    if shared_dir().exists():
        (root / "shared").symlink_to(shared_dir())
    return work


def _argv(words: List[str], folder: Path) -> List[str]:
    argv = list(words)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    for i, word in enumerate(argv[:-1]):
        if word in _WRITTEN and os.path.isabs(argv[i + 1]):
            argv[i + 1] = str(folder / ("out-" + os.path.basename(argv[i + 1])))
    return argv


def run_figure(fig: Figure, timeout: Optional[float] = None) -> Tuple[Optional[List[str]], str]:
    """(the output lines of the figure's commands, one after the other, "") or (None, why one failed)."""
    lines: List[str] = []
    deadline = time.monotonic() + (timeout or fig.timeout)
    for command in fig.commands:
        out, why = _run_command(command, max(1.0, deadline - time.monotonic()))
        if out is None:
            return None, why if len(fig.commands) == 1 else f"`{command}` {why}"
        lines += out
    return lines, ""


def _run_command(command: str, timeout: float) -> Tuple[Optional[List[str]], str]:
    env_words, words = _split_env(command)
    with tempfile.TemporaryDirectory(prefix="readme-figure-") as tmp:
        root = Path(tmp)
        work = _sandbox(root)
        (root / "tmp").mkdir()
        env = dict(os.environ, TUNERLIB_SHARED_DIR=str(root / "shared"), TMPDIR=str(root / "tmp"),
                   TUNERLIB_STORE=str(root / "store.db"), PYTHONHASHSEED="0")
        env.update(env_words)
        if "TUNERLIB_SHARED_DIR" in env_words:
            env["TUNERLIB_SHARED_DIR"] = str((work / env_words["TUNERLIB_SHARED_DIR"]).resolve())
        try:       # its own session, so a timeout stops the processes it started too
            proc = subprocess.Popen(_argv(words, root), cwd=work, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)
        except OSError as exc:
            return None, f"cannot run: {exc}"
        try:
            text, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None, f"timed out after {timeout:g} s (raise timeout= in its marker)"
        if proc.returncode != 0:
            tail = (err.strip().splitlines() or ["no output on stderr"])[-1]
            return None, f"exited with {proc.returncode}: {tail}"
        for prefix in {str(root / "shared"), str(shared_dir()), os.path.realpath(root / "shared")}:
            text = text.replace(prefix, "../shared")
        text = text.replace(str(work) + os.sep, "")
        return [line.rstrip() for line in text.rstrip("\n").split("\n")], ""


# ------------------------------------------------------------------------------------------ comparing
def mask(line: str) -> str:
    """A line with its run-specific parts replaced (see the module docstring)."""
    line = _UUID.sub("<uuid>", line.rstrip())
    line = _ELAPSED.sub(r"\1<s>\2", line)
    return _DB_PATH.sub(r"\1<database>", line)


def _is_wild(line: str) -> bool:
    return line.strip() == WILD


def _prefix(line: str) -> Optional[str]:
    text = line.rstrip()
    if text.endswith(" " + WILD) and text.strip() != WILD:
        return text[:-len(WILD)].rstrip()
    return None


def line_matches(expected: str, actual: str) -> bool:
    """One expected line (a ``prefix ...`` line matches any line starting with the prefix)."""
    exp, act = mask(expected), mask(actual)
    prefix = _prefix(exp)
    return act.startswith(prefix) if prefix is not None else exp == act


def matches(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Whether the whole expected text matches (``...`` lines: any number of lines)."""
    memo: Dict[Tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key not in memo:
            if i == len(expected):
                memo[key] = j == len(actual)
            elif _is_wild(expected[i]):
                memo[key] = any(go(i + 1, k) for k in range(j, len(actual) + 1))
            else:
                memo[key] = j < len(actual) and line_matches(expected[i], actual[j]) and go(i + 1, j + 1)
        return memo[key]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * (len(expected) + len(actual)) + 100))
    return go(0, 0)


def align(expected: Sequence[str], actual: Sequence[str]) -> List[Tuple[int, Optional[str]]]:
    """For each non-wildcard expected line, the actual line it stands for (None: past the output):
    each run of lines between ``...`` lines is placed where most of its lines match (the first run at
    the start and the last at the end unless a ``...`` frees them)."""
    segments: List[List[int]] = [[]]
    for i, line in enumerate(expected):
        if _is_wild(line):
            segments.append([])
        else:
            segments[-1].append(i)
    out: List[Tuple[int, Optional[str]]] = []
    cursor = 0
    for n, seg in enumerate(segments):
        if not seg:
            continue
        if n == 0:
            starts = [0]
        elif n == len(segments) - 1:
            starts = [max(cursor, len(actual) - len(seg))]
        else:
            starts = list(range(cursor, max(cursor, len(actual) - len(seg)) + 1))
        best = max(starts, key=lambda p: (sum(1 for k, i in enumerate(seg) if p + k < len(actual)
                                              and line_matches(expected[i], actual[p + k])), -p))
        for k, i in enumerate(seg):
            out.append((i, actual[best + k] if best + k < len(actual) else None))
        cursor = best + len(seg)
    return out


def differences(fig: Figure, actual: Sequence[str]) -> List[str]:
    """Lines naming each stale expected line: README line, what it says, what the command prints now."""
    out = []
    for i, now in align(fig.expected, actual):
        if now is None or not line_matches(fig.expected[i], now):
            out.append(f"  {fig.path}:{fig.first + i + 1}: README: {fig.expected[i].strip()}")
            out.append(f"  {' ' * len(f'{fig.path}:{fig.first + i + 1}')}  now:    "
                       f"{'(no such line)' if now is None else now.strip()}")
    if not out:
        out.append(f"  the output has {len(actual)} lines; the README's figure ({len(fig.expected)} lines, "
                   "with '...') does not fit it: compare them by hand")
    return out


def updated(fig: Figure, actual: Sequence[str]) -> List[str]:
    """The figure's new expected lines: the output where it has no ``...``, else each line replaced by
    the output line it stands for (a line cut short stays cut at the same length)."""
    if not any(_is_wild(line) or _prefix(line) is not None for line in fig.expected):
        return list(actual)
    new = list(fig.expected)
    for i, now in align(fig.expected, actual):
        if now is None:
            continue
        prefix = _prefix(fig.expected[i])
        new[i] = now if prefix is None else now[:len(prefix)].rstrip() + " " + WILD
    return new


# ------------------------------------------------------------------------------------------ the command
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
