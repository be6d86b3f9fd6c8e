"""The documentation site - the markdown guides and the API reference generated from the docstrings - builds
with Sphinx with every warning an error (the 'docs' extra; CI installs it)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"),
                          str(tmp_path / "html")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-4000:]
    html = (tmp_path / "html" / "api" / "ops.html").read_text(encoding="utf-8")
    assert "grouped_matmul_slice_m_per_token_dequant" in html and "return_report" in html
    assert (tmp_path / "html" / "architecture.html").exists()


def test_every_operator_is_in_the_api_reference():
    import catlass_py.ops

    page = (ROOT / "docs" / "api" / "ops.rst").read_text()
    assert {name for name in catlass_py.ops.__all__ if f"autofunction:: catlass_py.ops.{name}\n" in page} == \
        set(catlass_py.ops.__all__)
