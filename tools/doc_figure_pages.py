"""The marked figures of a documentation page (tools/doc_figures.py): reading the markers and blocks.

:func:`read_figures` is called once per page: it returns the page's lines and a :class:`Figure` for
each ``<!-- figure: KIND [slow] [timeout=S] -->`` marker (its commands, its expected lines and where
they lie in the page), or raises :class:`FigureError` naming the first malformed one.
:func:`unmarked_outputs` then names the fenced blocks that look like a tuner's output but carry no
marker.  The marker syntax is described in tools/doc_figures.py's docstring.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Set, Tuple

KINDS = ("check", "measured")
DEFAULT_TIMEOUT = 120.0
_MARK = re.compile(r"^<!--\s*figure:\s*(?P<spec>[^>]*?)\s*-->\s*$")
_END = re.compile(r"^<!--\s*/figure\s*-->\s*$")
_FENCE = re.compile(r"^(```+|~~~+)(.*)$")


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
    used = 0
    parts: Optional[List[str]] = None
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


def unmarked_outputs(path: str, lines: Sequence[str], figures: Sequence[Figure]) -> List[str]:
    """Fenced blocks that look like a tuner's printed output (a ``tunerlib: ...`` summary line, a
    ``best ...`` line, a speed-up table) but are not marked as figures: ``file:line`` of each."""
    marked: Set[int] = set()
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
