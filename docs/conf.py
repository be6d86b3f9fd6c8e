"""Sphinx configuration: the API reference (autodoc of the public modules) next to the markdown guides
(myst-parser). Built with warnings as errors by tests/test_docs.py:

    sphinx-build -W --keep-going -b html docs docs/_build/html
"""

import catlass_py

project = "catlass_py"
release = version = catlass_py.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
root_doc = "index"
autodoc_mock_imports = ["torch"]  # catlass_py.torch documents without the optional torch extra
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
myst_heading_anchors = 3
# The guides link to files of the repository (README, source files) that are not pages of this site.
suppress_warnings = ["myst.xref_missing"]
html_theme = "alabaster"
html_title = f"catlass_py {release}"
