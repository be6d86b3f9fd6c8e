"""The package list in pyproject.toml must name every package of the source tree (it is explicit because
examples/ installs as catlass_py.examples)."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_pyproject_lists_every_package():
    text = (ROOT / "pyproject.toml").read_text()
    listed = set(re.findall(r'^\s+"(catlass_py[\w.]*)",\s*$', text, flags=re.M))
    found = {"catlass_py.examples"}
    for init in (ROOT / "catlass_py").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        found.add(".".join(rel.parts))
    assert listed == found
    assert (ROOT / "examples" / "__init__.py").exists()
