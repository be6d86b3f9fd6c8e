"""mypy --strict on a user's script finds the public API's types (py.typed, typed operator signatures with
overloads on return_report / return_launch): the script in this folder asserts them with assert_type, and a
misuse (an attribute of the tuple that return_report=True gives) is an error. Slow: a cold mypy run analyses
numpy's stubs and the package (~1-2 min on a loaded 2-core machine); needs the 'typing' extra."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent

pytestmark = pytest.mark.slow


def _mypy(path: pathlib.Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")
    # MYPYPATH: an editable install maps catlass_py through an import hook, which mypy cannot follow;
    # --follow-imports=silent checks the user's file only, with the package's types
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--cache-dir",
                           str(ROOT / ".mypy_cache"), str(path)], capture_output=True, text=True,
                          env={"MYPYPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, cwd=ROOT)


def test_the_user_script_type_checks_strictly():
    out = _mypy(HERE / "user_script.py")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success: no issues found in 1 source file" in out.stdout


def test_a_misuse_is_found(tmp_path):
    bad = tmp_path / "misuse.py"
    bad.write_text("import numpy as np\nfrom catlass_py import ops\n\n"
                   "a = np.ones((8, 8), np.float16)\n"
                   "print(ops.basic_matmul(a, a, return_report=True).shape)\n")
    out = _mypy(bad)
    assert out.returncode == 1
    assert '"tuple[ndarray[tuple[Any, ...], dtype[Any]], WorkloadReport]" has no attribute "shape"' in out.stdout
