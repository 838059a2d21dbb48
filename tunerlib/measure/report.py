"""The best-vs-baselines table printed at the end of a tuning run.

Each row is a :class:`Row`: a name (the tuner's best is the row named ``best``), its re-timed
seconds (None when it could not be timed, with ``why``) and an optional description of the
configuration.  Times are printed in seconds (the header says ``time (s)``, as every tunerlib table
and the results database), with as many decimals as the fastest row needs for 4 significant digits.
Speed-up of the best = that row's time / the best row's time, so a baseline twice as slow as the
best shows ``2.00x``.  A baseline that names a machine resource (threads, work-groups) is shown as
given and mapped to this machine (rows ``"expert"`` and ``"expert, 2 threads"``), and
:func:`format_stronger` states the speed-up over the stronger of the two.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Tuple, Union

#: the row name of the tuner's best configuration
BEST = "tunerlib best"


@dataclass(frozen=True)
class Row:
    """One line of the table (built by the tuner script after re-timing, see :func:`format_table`)."""

    name: str
    seconds: Optional[float]
    why: Optional[str] = None
    description: str = ""


RowLike = Union[Row, Tuple]


def _row(row: RowLike) -> Row:
    return row if isinstance(row, Row) else Row(*row)


def speedup(seconds: Optional[float], best_seconds: Optional[float]) -> str:
    """``"2.00x"`` (``seconds / best_seconds``), or ``"-"`` when either is missing or zero."""
    if not seconds or not best_seconds:
        return "-"
    return f"{seconds / best_seconds:.2f}x"


def seconds_decimals(values: Iterable[Optional[float]], significant: int = 4) -> int:
    """Decimals that show the smallest positive of ``values`` (seconds) with ``significant`` digits:
    ``0.000302 -> 7`` (``0.0003020``), ``1.5 -> 3``; at least 3, and 3 when there is none."""
    smallest = min((v for v in values if v is not None and v > 0 and math.isfinite(v)), default=None)
    if smallest is None:
        return 3
    return max(3, significant - 1 - math.floor(math.log10(smallest)))


def format_table(title: str, rows: Iterable[RowLike], best: str = BEST, name_header: str = "schedule",
                 significant: int = 4, speedup_header: str = "speed-up of best",
                 description_header: str = "configuration") -> str:
    """The table: ``title``, a header line (times in seconds: ``time (s)``), then one line per row in
    the order given.

    Called once at the end of a tuning run with the re-timed rows (tuples ``(name, seconds, why,
    description)`` are accepted too).  Returns the text to print (no trailing newline).  Every time
    has the decimals the fastest row needs for ``significant`` digits (:func:`seconds_decimals`).  A
    row without a time shows ``-`` and ``not available: <why>``.
    """
    table = [_row(r) for r in rows]
    ours = next((r.seconds for r in table if r.name == best), None)
    width = max([15] + [len(r.name) + 1 for r in table])
    digits = seconds_decimals((r.seconds for r in table), significant)
    t_width = max([12] + [len(f"{r.seconds:.{digits}f}") + 2 for r in table if r.seconds is not None])
    sp_width = len(speedup_header) + 2
    described = any(r.description for r in table)
    lines = [title, f"  {name_header:<{width}}{'time (s)':>{t_width}}{speedup_header:>{sp_width}}"
                    + (f"  {description_header}" if described else "")]
    for r in table:
        desc = f"  {r.description}" if r.description else ""
        if r.seconds is None:
            lines.append(f"  {r.name:<{width}}{'-':>{t_width}}{'-':>{sp_width}}{desc}  "
                         f"[not available: {r.why or 'not timed'}]")
        else:
            lines.append(f"  {r.name:<{width}}{r.seconds:>{t_width}.{digits}f}"
                         f"{speedup(r.seconds, ours):>{sp_width}}{desc}")
    return "\n".join(lines)


def rows_from_timings(names: Sequence[str], seconds: dict, failures: dict,
                      descriptions: Optional[dict] = None) -> list:
    """Rows in ``names`` order: ``seconds[name]`` when timed, else ``failures[name]`` as why not.

    Convenience for a tuner script that re-timed a dict of callables with
    :func:`~tunerlib.measure.time_interleaved` and kept the reasons some could not be built.
    """
    descriptions = descriptions or {}
    return [Row(n, seconds.get(n), None if n in seconds else failures.get(n, "not timed"),
                descriptions.get(n, "")) for n in names]


def stronger(times: Mapping[str, Optional[float]], baseline: str) -> Optional[Tuple[str, float]]:
    """(row name, seconds) of the faster form of ``baseline`` among the timed ``times``: as given
    (the row named ``baseline``) or mapped to this machine (rows named ``"<baseline>, <how>"``, e.g.
    ``"expert, 2 threads"``); None when neither was timed.  Called once per baseline at the end."""
    forms = [(name, t) for name, t in times.items()
             if t is not None and (name == baseline or name.startswith(f"{baseline}, "))]
    return min(forms, key=lambda nt: nt[1]) if forms else None


def format_stronger(times: Mapping[str, Optional[float]], machine: str,
                    baselines: Sequence[str] = ("default", "expert"), best: str = BEST) -> str:
    """One line: the best's speed-up over the stronger form of each baseline (:func:`stronger`),
    the fair comparison when a baseline names a machine resource (threads, work-groups) that this
    machine (``machine``, e.g. ``"2 threads on this machine"``) does not have::

        tunerlib best vs the stronger form of each baseline (2 threads on this machine): default 3.10x (as given), expert 1.61x (2 threads)
    """
    ours = times.get(best)
    parts = []
    for baseline in baselines:
        found = stronger(times, baseline)
        if found is None or not ours:
            parts.append(f"{baseline} -")
            continue
        name, seconds = found
        form = "as given" if name == baseline else name.split(", ", 1)[1]
        parts.append(f"{baseline} {seconds / ours:.2f}x ({form})")
    return f"  {best} vs the stronger form of each baseline ({machine}): " + ", ".join(parts)
