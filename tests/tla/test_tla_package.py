"""catlass_py.tla stays independent of the simulator, and every public function names its sources."""

import ast
import pathlib
import subprocess
import sys

import catlass_py.tla as tla

PKG = pathlib.Path(tla.__file__).parent
ALLOWED = {"catlass_py.errors", "catlass_py.numerics", "catlass_py.lazy"}  # lazy: the package's exports


def test_imports_only_errors_numerics_and_lazy_from_catlass_py():
    for path in sorted(PKG.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            for m in mods:
                if m.startswith("catlass_py"):
                    assert m in ALLOWED, f"{path.name} imports {m}"


def test_importing_tla_does_not_load_the_simulator():
    code = "import sys, catlass_py.tla; print(sorted(m for m in sys.modules if m.startswith('catlass_py.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = {m.split(".")[1] for m in eval(out)}
    assert loaded <= {"errors", "numerics", "lazy", "tla"}, loaded


def test_every_public_name_has_a_docstring_naming_its_counterpart():
    for name in tla.__all__:
        obj = getattr(tla, name)
        if not callable(obj):
            continue
        doc = obj.__doc__ or ""
        assert doc.strip(), name
        assert any(key in doc for key in ("TLA", "CuTe", "pycute", "CATLASS")), name
