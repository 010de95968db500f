"""Sphinx configuration of the documentation site (`bash scripts/build_docs.sh`).

Why Sphinx with MyST: the pages stay Markdown (the README's blocks move over as they are, and
docs/python-api.md is still run by its test), while Sphinx gives what a site that cannot
drift needs and MkDocs does not in one piece: autodoc of the Python API from the code itself,
a build that fails on any broken cross-reference or page left out of the navigation
(``-W --keep-going`` with ``nitpicky``), graphviz diagrams rendered at build time from text in
the pages, and a client-side search that works from the files alone (no server, no network).
The theme is furo: readable on a phone and in print, light and dark, and its search page is
Sphinx's own. The reference pages of the commands, the models, the spec keys and the results
file are written from the code at the start of every build (`_ext/campaign_docs.py`).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "campaign"
author = "the campaign authors"
copyright = "the campaign authors"  # noqa: A001 (Sphinx's name)

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.graphviz",
    "numpydoc",
    "campaign_docs",
]

root_doc = "index"
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# reference/_generated: the parts written from the code, included by the reference pages
exclude_patterns = ["_build", "_ext", "reference/_generated", "Thumbs.db", ".DS_Store"]

# Every warning fails the build (scripts/build_docs.sh runs with -W): a reference to nothing,
# a page out of the navigation, a missing include. Names of other projects are not checked
# (no inventory of theirs is fetched: the build is offline).
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(xarray|xr|pandas|pd|numpy|np|matplotlib|pathlib|os|collections|typing)\..*"),
    (r"py:.*", r"(Path|Dataset|DataFrame|Figure|Mapping|Sequence|Iterable|Callable|Any)"),
    (r"py:.*", r"(optional|default|array_like|os\.PathLike|PathLike|None)"),
]
smartquotes = False  # `--where 'load<0.5'` stays as typed, not with curly quotes and dashes

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links to headings, checked
suppress_warnings = []

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
numpydoc_show_class_members = False
numpydoc_validation_checks: set[str] = set()

graphviz_output_format = "svg"

html_theme = "furo"
html_title = "campaign"
html_static_path = ["_static"]
html_css_files = ["campaign.css"]
html_show_sourcelink = False
html_copy_source = False
