"""``tunerlib report``: the report of a results database as HTML (plots inline as SVG) or Markdown
(plots written as SVG files next to it)."""
from __future__ import annotations

import html
import json
import math
import os
from typing import Any, Callable, List, Optional, Sequence

from .data import ReportError, RunData
from .output import Figures, format_of, html_page, report_figures
from .summary import RunSummary, compare_rows, iso, summarize

__all__ = ["write_report"]


def _num(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.6g}"


def _band(cell: tuple) -> str:
    median, low, high = cell
    return "-" if median is None else f"{median:.5g} [{low:.5g}, {high:.5g}]"


def compare_table(runs: Sequence[RunData]) -> tuple[List[str], List[List[str]]]:
    """(header, rows) of the compare table: per label the median [20th, 80th percentile] of the best
    value within each budget, the best of all runs, failures and time.  The value columns name the
    objective's unit when every run recorded the same one (``best of all runs (s)``; nothing when
    unitless, ``(unit not recorded)`` for runs from before units were recorded); when the runs differ,
    a ``unit`` column gives each row's instead."""
    budgets, rows = compare_rows(runs)
    texts = list(dict.fromkeys(u for r in rows for u in r.units))
    shared = texts[0] if len(texts) == 1 else None
    suffix = "" if shared in (None, "unitless") else f" ({_unit_name(shared)})"
    per_row = shared is None and bool(rows)
    header = (["label", "runs"] + (["unit"] if per_row else []) + ["evaluations (median)"]
              + [f"best @{b} median [p20, p80]{suffix}" for b in budgets]
              + [f"best of all runs{suffix}", "failed results", "seconds (median)"])
    body = [[r.label, f"{r.runs} ({r.resumed} resumed)" if r.resumed else str(r.runs)] + ([_unit_cell(r.units)] if per_row else []) + [f"{r.evaluations:g}"]
            + [_band(r.at_budgets[b]) for b in budgets]
            + [_num(r.best), f"{100 * r.failure_share:.1f} %", f"{r.median_seconds:.3g}"] for r in rows]
    return header, body


def compare_caption(runs: Sequence[RunData]) -> str:
    """What the compare table's columns mean: its budgets, and why a label is split or a run marked."""
    budgets, rows = compare_rows(runs)
    text = (f"best @N: the best value each run had found after its first N evaluations, as the median across "
            f"the label's runs with the 20th and 80th percentiles in brackets; the budgets "
            f"{', '.join(f'@{b}' for b in budgets)} are a quarter, half and all of the shortest run's "
            f"{budgets[-1]} evaluations, so every run counts at each.")
    if any("[" in r.label and r.label.endswith("]") and "version" in r.label for r in rows):
        text += (" Runs of one label measured by different tuner script or program versions are not pooled: "
                 "each version has its own row.")
    if any(r.resumed for r in rows):
        text += " Resumed runs were stopped and continued with --resume (see each run's facts)."
    return text


def _unit_cell(units: Sequence[str]) -> str:
    """A row's ``unit`` cell: ``s``, ``unitless``, ``unit not recorded``, or ``mixed: s, unitless``."""
    shown = [_unit_name(u) for u in units]
    return shown[0] if len(shown) == 1 else "mixed: " + ", ".join(shown)


def _unit_name(text: str) -> str:
    """A run's ``unit_text`` without its ``in `` (``in s`` -> ``s``; ``unitless`` stays)."""
    return text[3:] if text.startswith("in ") else text


def _facts(s: RunSummary) -> List[tuple]:
    run = s.run
    size = ("unknown" if s.log10_size is None else "infinitely many (continuous parameters)"
            if math.isinf(s.log10_size) else f"10^{s.log10_size:.2f}")
    if s.baseline is None:
        improvement = "no successful result"
    elif s.improvement is None:
        improvement = f"{s.baseline_kind} {_num(s.baseline.value)} -> best {_num(s.best.value if s.best else None)}"
    else:
        improvement = f"{s.improvement:.4g}x better than the {s.baseline_kind} ({_num(s.baseline.value)})"
    best = "none (no successful result)" if s.best is None else \
        f"{_num(s.best.value)} at evaluation {s.best.index} (proposed by {s.best.technique})"
    if s.best is not None and run.retimed_value is not None:
        best = (f"{_num(run.retimed_value)} re-timed at the end ({(run.final_best or {}).get('how', '')}); recorded "
                f"{_num(s.best.value)} at evaluation {s.best.index} (proposed by {s.best.technique})")
    failures = ", ".join(f"{k} {v}" for k, v in sorted(s.failures.items())) or "none"
    return [("program", f"{run.project}/{run.program} version {run.version}"),
            ("state", f"{run.state}, seed {run.seed}, started {iso(run.start_date)}, "
                      f"{len(run.points)} results in {s.duration:.3g} s"),
            ("objective", f"{run.objective} ({run.unit_text})"),
            ("search space", f"{size} configurations; {len(s.parameters)} parameters: {', '.join(s.parameters)}"),
            ("machine class", run.machine_class or "-"), ("technique", s.technique)] + _resumes(run) + _decisions(run) + _swaps(run) + [
            ("best", best), ("improvement", improvement), ("failures", failures)]


def _resumes(run: RunData) -> List[tuple]:
    """One fact per ``--resume`` of the run: after how many results, when, and a script version change."""
    out = []
    for mark in run.resumes:
        before, now = mark.get("previous_script_version"), mark.get("script_version")
        change = f"; tuner script version {before} -> {now}" if before and now and before != now else ""
        out.append(("resumed", f"after {mark.get('after_tests')} results, at {iso(mark.get('date'))}{change}"))
    return out


def _swaps(run: RunData) -> List[tuple]:
    """One fact per technique swap of a recommendation bandit: when, what left (with its affinity),
    what came in and who recommended it."""
    out = []
    for swap in run.swaps:
        similar = f" for {', '.join(swap['representations'])}" if swap.get("representations") else ""
        affinity = swap.get("removed_affinity")
        shown = f" (affinity {affinity:.3g})" if isinstance(affinity, (int, float)) else ""
        out.append(("technique swap", f"at request {swap.get('request')}: {swap.get('removed')}{shown} -> "
                                      f"{swap.get('added')}, recommended by {swap.get('source')}{similar}"))
    return out


def _decisions(run: RunData) -> List[tuple]:
    """One fact per recorded technique decision (``auto``'s): at which evaluation, what and why."""
    return [("technique decision", f"at evaluation {d.get('evaluation')}: {d.get('technique')} -- {d.get('reason')}")
            for d in run.decisions]


def _allocation_rows(s: RunSummary) -> List[List[str]]:
    total = max(1, sum(v[0] for v in s.allocation.values()))
    return [[name, str(req), f"{100 * req / total:.1f} %", str(res), str(bests)]
            for name, (req, res, bests) in s.allocation.items()]


_ALLOCATION_HEADER = ["technique", "requests", "share", "results", "new bests"]


# ---------------------------------------------------------------------------------------------- HTML
def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _html_run(s: RunSummary) -> str:
    run = s.run
    facts = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in _facts(s))
    parts = [f'<section class="run" id="run-{run.uuid}"><h3>{html.escape(run.shown_label)} &mdash; run '
             f"{run.uuid}</h3>", f'<table class="facts">{facts}</table>',
             "<h4>Techniques and their allocation</h4>",
             _html_table(_ALLOCATION_HEADER, _allocation_rows(s), "allocation")]
    if s.best is not None:
        parts += ["<h4>Best configuration (JSON)</h4>",
                  f'<pre class="best-json">{html.escape(json.dumps(s.best.config, sort_keys=True, indent=1))}</pre>',
                  "<h4>Best configuration as the tuner reported it (save_final_config)</h4>",
                  f'<pre class="final-form">{html.escape(run.final_form)}</pre>' if run.final_form else
                  '<p class="note">not recorded: the run has no output of save_final_config '
                  "(tune_function and ask/tell runs, and tuners that print nothing there)</p>"]
    if s.first_errors:
        rows = [[state, str(s.failures.get(state, 0)), text] for state, text in sorted(s.first_errors.items())]
        parts += ["<h4>Failures</h4>", _html_table(["state", "results", "first error"], rows, "failures")]
    return "\n".join(parts) + "</section>"


def _html_figures(figures: Figures) -> str:
    out = []
    for title, svg, why in figures:
        out.append(f"<h3>{html.escape(title)}</h3>")
        out.append(f'<figure class="plot">{svg}</figure>' if svg else f'<p class="note">{html.escape(why)}</p>')
    return "\n".join(out)


def html_report(runs: Sequence[RunData], figures: Figures, source: str) -> str:
    """The whole report as one HTML page."""
    header, rows = compare_table(runs)
    body = [f'<p class="note">{len(runs)} runs from {html.escape(source)}</p>',
            "<h2>Compare</h2>", _html_table(header, rows, "compare"),
            f'<p class="note caption">{html.escape(compare_caption(runs))}</p>',

            "<h2>Plots</h2>", _html_figures(figures), "<h2>Runs</h2>"]
    body += [_html_run(summarize(run)) for run in runs]
    return html_page(f"tunerlib report: {os.path.basename(source)}", "\n".join(body))


# ------------------------------------------------------------------------------------------ Markdown
#: characters that can start Markdown syntax or raw HTML anywhere in a line (CommonMark lets any
#: ASCII punctuation be escaped with a backslash, which shows it as itself)
_MD_SPECIAL = set("\\`*_[]<>|~&#!")


def _md_text(text: str) -> str:
    """``text`` (a name, a label, an error message) as literal Markdown inline text: special
    characters backslash-escaped, so that neither Markdown nor raw HTML in it takes effect, and
    line breaks turned into spaces, so that it stays in its table cell or list item."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in " ".join(str(text).splitlines()))


def _md_code(text: str, info: str = "") -> List[str]:
    """A fenced code block holding ``text`` verbatim: the fence is longer than any run of backticks in it."""
    runs = "".join(c if c == "`" else " " for c in text).split()
    fence = "`" * max(3, max(map(len, runs), default=0) + 1)
    return [fence + info, text, fence]


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_md_text(h) for h in header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(_md_text(c) for c in row) + " |" for row in rows])


def _md_run(s: RunSummary) -> str:
    run = s.run
    parts = [f"### {_md_text(run.shown_label)} — run {_md_text(run.uuid)}", "",
             "\n".join(f"- **{k}**: {_md_text(v)}" for k, v in _facts(s)), "", "Techniques and their allocation:",
             "", _md_table(_ALLOCATION_HEADER, _allocation_rows(s)), ""]
    if s.best is not None:
        parts += ["Best configuration (JSON):", "", *_md_code(json.dumps(s.best.config, sort_keys=True), "json"), ""]
        parts += (["As the tuner reported it (save_final_config):", "", *_md_code(run.final_form.rstrip()), ""]
                  if run.final_form else ["_The tuner's own form was not recorded for this run._", ""])
    if s.first_errors:
        rows = [[state, str(s.failures.get(state, 0)), text] for state, text in sorted(s.first_errors.items())]
        parts += ["Failures:", "", _md_table(["state", "results", "first error"], rows), ""]
    return "\n".join(parts)


def _md_figures(figures: Figures, path: str) -> str:
    folder = os.path.splitext(path)[0] + "_files"
    out = []
    for i, (title, svg, why) in enumerate(figures):
        if svg is None:
            out += [f"**{_md_text(title)}**: {_md_text(why)}", ""]
            continue
        os.makedirs(folder, exist_ok=True)
        name = os.path.join(folder, f"figure{i + 1}.svg")
        with open(name, "w", encoding="utf-8") as fh:
            fh.write(svg)
        out += [f"![{_md_text(title)}]({os.path.relpath(name, os.path.dirname(path) or '.')})", ""]
    return "\n".join(out)


def markdown_report(runs: Sequence[RunData], figures: Figures, source: str, path: str) -> str:
    """The whole report as Markdown; the figures go to SVG files in ``<name>_files/`` next to it."""
    header, rows = compare_table(runs)
    parts = [f"# tunerlib report: {_md_text(os.path.basename(source))}", "",
             f"{len(runs)} runs from {_md_text(source)}", "",
             "## Compare", "", _md_table(header, rows), "", _md_text(compare_caption(runs)), "", "## Plots", "", _md_figures(figures, path),
             "## Runs", ""]
    return "\n".join(parts + [_md_run(summarize(run)) for run in runs])


def write_report(runs: Sequence[RunData], path: str, source: str, log: bool = False,
                 figures: Optional[Callable[..., Any]] = None) -> None:
    """Write the report of ``runs`` to ``path`` (``.html`` or ``.md``)."""
    kind = format_of(path, ("html", "md"))
    drawn = (figures or report_figures)(runs, log)
    try:
        text = html_report(runs, drawn, source) if kind == "html" else markdown_report(runs, drawn, source, path)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None
