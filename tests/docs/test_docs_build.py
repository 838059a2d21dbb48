"""The documentation site builds with warnings as errors (``sphinx-build -W``, docs/conf.py), and its
generated reference covers the code: every registered technique, every public parameter class, every
command-line option and command.

Skipped, with the reason, where the ``[docs]`` extra (sphinx, myst-parser, furo) is not installed."""
import argparse
import html
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MISSING = [m for m in ("sphinx", "myst_parser", "furo") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"the [docs] extra is not installed (no {', '.join(MISSING)}): "
                                                      "pip install -e '.[docs]' to build the documentation")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site's folder (one build per test module)."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(out / "doctrees"), str(REPO / "docs"), str(out / "html")],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stderr[-6000:]}"
    return out / "html"


def _text(path: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def test_the_technique_catalogue_lists_every_registered_name_with_its_options(site):
    page = (site / "reference" / "techniques.html").read_text(encoding="utf-8")
    cells = set(re.findall(r"<td><p><code[^>]*><span class=\"pre\">([^<]+)</span></code></p></td>", page))
    # the registry of a fresh process, as the docs build sees it (tests register names of their own)
    names = subprocess.run([sys.executable, "-c", "from tunerlib.techniques import registry\n"
                            "print('\\n'.join(registry()))"], capture_output=True, text=True,
                           check=True, timeout=600).stdout.splitlines()
    assert len(names) > 30
    assert not [n for n in names if n not in cells], "names missing from the catalogue page"
    text = _text(site / "reference" / "techniques.html")
    assert "n_starts (int) = 10 in [1, inf]" in text   # BayesianOptimization's options, generated


def test_every_public_parameter_class_is_in_the_api_and_parameter_reference(site):
    import tunerlib.parameters as P
    public = [n for n in P.__all__ if inspect.isclass(getattr(P, n)) and issubclass(getattr(P, n), P.Parameter)]
    api = (site / "reference" / "api.html").read_text(encoding="utf-8")
    missing = [n for n in public if f'id="tunerlib.parameters.{n}"' not in api]
    assert not missing, f"add these to docs/reference/api.md: {missing}"
    table = _text(site / "reference" / "parameters.html")
    concrete = [n for n in public if getattr(P, n).kind]
    assert len(concrete) >= 15 and not [n for n in concrete if f"{n}(" not in table]


def test_the_cli_reference_has_every_option_and_command(site):
    from tunerlib.cli import build_parser
    from tunerlib.options import TuningOptions
    text = _text(site / "reference" / "cli.html")
    options = [s for a in TuningOptions.parser()._actions for s in a.option_strings if s.startswith("--")]
    assert "--test-limit" in options and not [o for o in options if o not in text]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert not [c for c in sub.choices if f"tunerlib {c}" not in text]


def test_the_home_page_links_every_section(site):
    text = _text(site / "index.html")
    for title in ("Getting started", "Tutorial", "Search spaces", "What survives what", "Technique catalogue",
                  "Benchmarks and methods", "Contributing"):
        assert title in text
