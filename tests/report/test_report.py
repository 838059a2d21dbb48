"""``tunerlib report``: per-run facts and the compare table checked against the results database, the
tuner's own form of the best configuration (save_final_config's output), Markdown with SVG files
beside it, and the HTML page rendered by a real headless browser."""
import html
import json
import re
import sys
from html.parser import HTMLParser

import numpy as np
import pytest

from tunerlib import MeasurementInterface, MinimizeAttribute, TuningOptions
from tunerlib.cli import main
from tunerlib.db import ResultsDB
from tunerlib.report.summary import budgets_of
from tunerlib.report.data import load_runs
from tunerlib.engine.run import TuningRun

from browser import dump_dom, screenshot
from reportkit import SEED_CONFIG, best_so_far, db_values, measure, objective, space


class Tables(HTMLParser):
    """Every <table> of a page: (class, id of the enclosing section, rows of cell texts)."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.section, self.cell = [], None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.section = attrs.get("id")
        elif tag == "table":
            self.tables.append((attrs.get("class"), self.section, []))
        elif tag == "tr" and self.tables:
            self.tables[-1][2].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][2][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)

    def find(self, cls, section=None):
        return [rows for c, s, rows in self.tables if c == cls and (section is None or s == section)]


@pytest.fixture(scope="module")
def report(results_db, tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "report.html"
    assert main(["report", results_db, "-o", str(path)]) == 0
    return path


def _infos(path):
    with ResultsDB(path) as db:
        return db.list_runs()


def test_compare_table_matches_the_database(results_db, report):
    [rows] = Tables(report.read_text()).find("compare")
    header, body = rows[0], {r[0]: r for r in rows[1:]}
    budgets = budgets_of(load_runs(results_db))
    assert header[3:3 + len(budgets)] == [f"best @{b} median [p20, p80]" for b in budgets]
    for label in ("bandit", "random"):
        curves = [best_so_far(db_values(results_db, i["id"])) for i in _infos(results_db) if i["label"] == label]
        assert body[label][1] == str(len(curves))
        for k, b in enumerate(budgets):
            at = [c[b - 1] for c in curves]
            assert body[label][3 + k] == (f"{np.median(at):.5g} [{np.percentile(at, 20):.5g}, "
                                          f"{np.percentile(at, 80):.5g}]")
        assert body[label][3 + len(budgets)] == f"{min(c[-1] for c in curves):.6g}"


def test_each_run_has_its_facts(results_db, report):
    text = report.read_text()
    tables = Tables(text)
    with ResultsDB(results_db) as db:
        for info in db.list_runs():
            rows = db.run_results(info["id"])
            section = f"run-{info['uuid']}"
            facts = dict(r for r in tables.find("facts", section)[0])
            ok = [r for r in rows if r.state == "OK"]
            best = min(ok, key=lambda r: r.extra["value"])
            assert facts["best"].startswith(f"{best.extra['value']:.6g} at evaluation {rows.index(best) + 1}")
            assert "10^" not in facts["search space"] and "3 parameters: mode, x, y" in facts["search space"]
            assert facts["objective"] == "minimize value (unitless)"
            assert f'<pre class="best-json">{html.escape(json.dumps(best.config_data, sort_keys=True, indent=1))}' in text
            states = {}
            for r in rows:
                if r.state != "OK":
                    states[r.state] = states.get(r.state, 0) + 1
            failures = tables.find("failures", section)
            assert {row[0]: int(row[1]) for row in (failures[0][1:] if failures else [])} == states
            errors = [r for r in rows if r.state == "ERROR"]
            if errors:
                first = {row[0]: row[2] for row in failures[0][1:]}["ERROR"]
                assert first == f"result {errors[0].id}: {errors[0].extra['error']}"
            allocation = tables.find("allocation", section)[0]
            assert sum(int(row[1]) for row in allocation[1:]) == len(db.desired_results(info["id"]))
            if info["label"] == "bandit":
                seed_value = objective(SEED_CONFIG)
                assert facts["improvement"] == f"{seed_value / best.extra['value']:.4g}x better than the seed " \
                                               f"({seed_value:.6g})"


def test_the_tuners_own_form_of_the_best_is_kept_and_reported(tmp_path, capsys):
    class FormTuner(MeasurementInterface):
        def manipulator(self):
            return space()

        def objective(self):
            return MinimizeAttribute("value")

        def program_name(self):
            return "toy"

        def run(self, desired_result, input, limit):
            return measure(desired_result.configuration.data)

        def save_final_config(self, config):
            print(f"best as the tuner sees it: x={config['x']} <mode {config['mode']}>")

    db = str(tmp_path / "form.db")
    opts = TuningOptions(database=db, test_limit=15, seed=3, quiet=True, label="script")
    summary = TuningRun(FormTuner(opts), opts).run()
    printed = capsys.readouterr().out
    line = f"best as the tuner sees it: x={summary.best_configuration['x']} <mode {summary.best_configuration['mode']}>"
    assert line in printed                                  # still printed for the user
    out = tmp_path / "r.html"
    assert main(["report", db, "-o", str(out)]) == 0
    assert f'<pre class="final-form">{html.escape(line)}\n</pre>' in out.read_text()
    md = tmp_path / "r.md"
    assert main(["report", db, "-o", str(md)]) == 0
    assert f"```\n{line}\n```" in md.read_text()


def test_markdown_report_writes_its_figures_beside_it(results_db, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.md"
    assert main(["report", results_db, "-o", str(out), "--label", "random"]) == 0
    text = out.read_text()
    figures = re.findall(r"!\[[^\]]*\]\((report_files/figure\d+\.svg)\)", text)
    assert len(figures) == 4 and all((tmp_path / f).read_text().startswith("<svg") for f in figures)
    assert "| random | 3 |" in text and "| bandit |" not in text
    assert text.count("### random") == 3


def test_report_without_matplotlib_says_so(results_db, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "r.html"
    assert main(["report", results_db, "-o", str(out)]) == 0
    text = out.read_text()
    assert "<svg" not in text and "pip install &#x27;tunerlib[plot]&#x27;" in text
    assert 'class="compare"' in text


def test_report_rejects_other_output_names(results_db, tmp_path, capsys):
    assert main(["report", results_db, "-o", str(tmp_path / "r.pdf")]) == 2
    assert "must end in .html, .md" in capsys.readouterr().err


def test_html_report_renders_in_a_headless_browser(results_db, report, tmp_path):
    pytest.importorskip("matplotlib")
    dom = dump_dom(report)                      # skips where no browser is installed
    assert dom.count("<svg") == 4               # history, techniques, parameters, importance
    assert len(re.findall(r"<path\b", dom)) > 100
    tables = Tables(dom)
    assert len(tables.find("compare")[0]) == 3  # header + 2 labels
    assert len(tables.find("facts")) == len(_infos(results_db))
    png = screenshot(report, tmp_path / "shot.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000


def test_a_run_without_results_is_listed_next_to_the_others(tmp_path):
    from reportkit import tune
    from tunerlib import TuningRunManager
    db = str(tmp_path / "mixed.db")
    tune(db, "ok", ["PureRandom"], 1, evaluations=12)
    TuningRunManager.for_space(space(), MinimizeAttribute("value"), program_name="toy", database=db,
                               test_limit=3, quiet=True, label="nothing").finish()
    out = tmp_path / "r.html"
    assert main(["report", db, "-o", str(out)]) == 0
    tables = Tables(out.read_text())
    assert [row[0] for row in tables.find("compare")[0][1:]] == ["ok"]
    facts = [dict(rows) for rows in tables.find("facts")]
    assert len(facts) == 2 and facts[1]["best"] == "none (no successful result)"
    assert facts[1]["improvement"] == "no successful result"


HOSTILE = "<script>alert(1)</script> a|b *c* _d_ [e](f) `g` &amp; #h\nsecond line"


def _unescaped(text, char):
    """How often ``char`` occurs in Markdown ``text`` other than backslash-escaped."""
    count, i = 0, 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        count += text[i] == char
        i += 1
    return count


def test_markdown_report_shows_names_and_error_text_literally(tmp_path):
    """Labels, program names, error texts and the tuner's own form reach Markdown as literal text: no
    raw HTML, no emphasis or links, no extra table columns, no line breaks, no end to a code fence."""
    from tunerlib import Result, TuningRunManager
    db = str(tmp_path / "hostile.db")
    manager = TuningRunManager.for_space(space(), MinimizeAttribute("value"), program_name=HOSTILE, label=HOSTILE,
                                         database=db, seed=1, test_limit=3, quiet=True)
    while (desired := manager.get_next_desired_result()) is not None:
        manager.report_result(desired, Result(state="ERROR", extra={"error": HOSTILE}))
    manager.finish()
    out = tmp_path / "r.md"
    assert main(["report", db, "-o", str(out)]) == 0
    text = out.read_text()
    assert "<script>" not in text and "\\<script\\>alert(1)\\</script\\>" in text
    [row] = [line for line in text.splitlines() if line.startswith("| ERROR |")]
    assert _unescaped(row, "|") == 4 and row.endswith("second line |")       # state | results | error
    [heading] = [line for line in text.splitlines() if line.startswith("### ")]
    [program] = [line for line in text.splitlines() if line.startswith("- **program**: ")]
    for line in (row, heading[len("### "):], program[len("- **program**: "):]):
        assert "second line" in line and not any(_unescaped(line, c) for c in "<>*_[]`&#"), line


@pytest.mark.parametrize("text", ["plain", "a ``` b", "````\nx\n`````", "`"])
def test_markdown_code_blocks_hold_backtick_fences_verbatim(text):
    from tunerlib.report.render import _md_code
    opening, body, closing = _md_code(text, "json")
    assert opening == closing + "json" and body == text and len(closing) >= 3 and closing not in text
