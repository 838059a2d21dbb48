"""A figure's expected text against its commands' output (tools/doc_figures.py).

:func:`matches` is called on each re-run figure: whether the output fits the expected lines, after
:func:`mask` has replaced the run-specific parts of both sides (``...`` lines stand for any number of
lines, a line ending in `` ...`` for any line with that start).  For a figure that does not fit,
:func:`differences` names each stale line with what the command prints now (``--check``), and
:func:`updated` gives the figure's new expected lines (``--update``), both placing the expected lines
on the output with :func:`align`.
"""
from __future__ import annotations

import re
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from tools.doc_figure_pages import Figure

_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_ELAPSED = re.compile(r"(after \d+ tests in )[0-9.]+( s\b)")
_DB_PATH = re.compile(r"(\(seed [^)]*\) in )\S+$")
WILD = "..."


def mask(line: str) -> str:
    """A line with its run-specific parts replaced (the masks listed in tools/doc_figures.py's docstring)."""
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
