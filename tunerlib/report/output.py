"""Writing figures: PNG, SVG, or an HTML page that holds the SVG (opens without a server)."""
from __future__ import annotations

import html
import io
import os
from typing import Any, List, Optional, Sequence, Tuple

from .data import ReportError, RunData
from .figures import draw
from .pareto import is_multi_objective

__all__ = ["FORMATS", "Figures", "html_page", "report_figures", "save_figure", "svg_text"]

FORMATS = ("png", "svg", "html")
#: (title, SVG text or None, why there is no figure)
Figures = List[Tuple[str, Optional[str], str]]


def format_of(path: str, formats: Sequence[str] = FORMATS) -> str:
    """The output format named by ``path``'s extension; ReportError for another one."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in formats:
        raise ReportError(f"-o {path}: the file name must end in " + ", ".join(f".{f}" for f in formats))
    return ext


def svg_text(fig: Any) -> str:
    """The figure as SVG markup (without the XML prolog, ready to inline in HTML)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def html_page(title: str, body: str) -> str:
    """A self-contained HTML page (inline style, no script, no external resource)."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n"
            f"<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


_STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}"
          "table{border-collapse:collapse;margin:0.5em 0 1em}td,th{border:1px solid #ccc;padding:3px 8px;"
          "text-align:left;vertical-align:top}th{background:#f3f3f3}pre{background:#f7f7f7;padding:0.6em;"
          "overflow-x:auto;max-height:30em}figure{margin:1em 0}svg{max-width:100%;height:auto}"
          ".note{color:#666}section.run{border-top:2px solid #ddd;margin-top:2em}")


def save_figure(fig: Any, path: str, title: str) -> None:
    """Write ``fig`` to ``path`` as PNG, SVG or an HTML page with the SVG inline (by extension)."""
    kind = format_of(path)
    try:
        if kind == "html":
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(html_page(title, f"<figure>{svg_text(fig)}</figure>"))
        else:
            fig.savefig(path, format=kind, dpi=100)
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None


def _groups(runs: Sequence[RunData]) -> List[List[RunData]]:
    """Runs by (program, search space), in order of first appearance."""
    groups: dict = {}
    for run in runs:
        groups.setdefault((run.program, run.parameter_info), []).append(run)
    return list(groups.values())


def _one(kind: str, runs: Sequence[RunData], log: bool) -> Tuple[Optional[str], str]:
    try:
        return svg_text(draw(kind, runs, log)), ""
    except ReportError as exc:
        return None, str(exc)


def report_figures(runs: Sequence[RunData], log: bool = False) -> Figures:
    """The report's figures as SVG: history and techniques of all runs, then the parameter view and
    the importance of each program; a figure that cannot be drawn comes with the reason."""
    try:
        import matplotlib  # noqa: F401  (only to say early that plots are off)
    except ImportError:
        return [("plots", None, "no plots: matplotlib is not installed (pip install 'tunerlib[plot]')")]
    runs = [r for r in runs if r.points]
    found: Figures = []
    for kind, title in (("history", "Best so far"), ("techniques", "Techniques: new bests and allocation")):
        found.append((title, *_one(kind, runs, log)))
    if any(is_multi_objective(r) for r in runs):
        found.append(("Pareto front and hypervolume", *_one("front", runs, log)))
    for group in _groups(runs):
        found.append((f"{group[0].program}: parameters vs objective", *_one("params", group, log)))
        found.append((f"{group[0].program}: parameter importance", *_one("importance", group, log)))
    return found
