"""docs/tla.md stays true: its Python blocks run."""

import pathlib
import re

DOC = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "tla.md").read_text()


def test_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
    assert len(blocks) >= 4
    for block in blocks:
        exec(compile(block, "docs/tla.md", "exec"), {})
