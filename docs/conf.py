"""Sphinx configuration of tunerlib's documentation (MyST Markdown sources, autodoc, furo).

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (``pip install -e '.[docs]'``).
The reference pages are generated from the code at build time by ``_ext/tunerlib_reference.py``.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "tunerlib"
author = "tunerlib contributors"
copyright = "tunerlib contributors"
release = version = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "tunerlib_reference",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "snippets", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
# names a docstring mentions that are not documented themselves stay plain text
nitpicky = False
suppress_warnings: list = []

# option names such as --seed stay as typed (no en dashes)
smartquotes = False

html_theme = "furo"
html_title = "tunerlib"
html_static_path = []
