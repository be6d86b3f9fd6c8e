"""catlass_py.lazy: the packages with lazy exports (kernel, ops, tile, analysis, tla) import a module only when one of its names is
used, export exactly the names their TYPE_CHECKING imports list, and the exported function wins over the
submodule of the same name however the submodule got imported."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from catlass_py.lazy import exported_names

LAZY_PACKAGES = ("catlass_py.kernel", "catlass_py.ops", "catlass_py.tile", "catlass_py.analysis", "catlass_py.tla")


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_importing_the_package_imports_none_of_its_modules():
    out = _fresh("import sys, catlass_py.ops, catlass_py.kernel\n"
                 "print(sorted(m for m in sys.modules if m.startswith(('catlass_py.ops.', 'catlass_py.kernel.'))))")
    assert out == "[]"


def test_a_name_imports_its_module_and_what_that_needs_only():
    out = _fresh("import sys\nfrom catlass_py.ops import basic_matmul\n"
                 "print(basic_matmul.__module__, 'catlass_py.ops.mla' in sys.modules, "
                 "'catlass_py.kernel.fa_infer' in sys.modules)")
    assert out == "catlass_py.ops.basic_matmul False False"


def test_the_exported_function_wins_over_its_submodule():
    # importing the submodule first binds it on the package; the package must still give the function
    out = _fresh("import catlass_py.ops.quant_matmul\nimport catlass_py.ops as ops\nimport types\n"
                 "print(isinstance(ops.quant_matmul, types.FunctionType), ops.quant_matmul.__name__)")
    assert out == "True quant_matmul"


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_exported_name_is_its_modules_object(package):
    pkg = importlib.import_module(package)
    with open(pkg.__file__, encoding="utf-8") as f:
        where = exported_names(f.read(), package)
    assert sorted(pkg.__all__) == sorted(where) and len(where) >= 10
    for name, module in where.items():
        assert getattr(pkg, name) is getattr(importlib.import_module(module), name), name
    assert set(where) <= set(dir(pkg))


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_name_is_an_explicit_re_export(package):
    # ``from m import X as X``: mypy --strict (no implicit re-export) sees the package export X
    import ast

    pkg = importlib.import_module(package)
    with open(pkg.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING")
    aliases = [a for stmt in block.body for a in stmt.names]
    assert aliases and all(a.asname == a.name for a in aliases), [a.name for a in aliases if a.asname != a.name]


def test_an_unknown_name_is_an_attribute_error():
    import catlass_py.kernel as kernel

    with pytest.raises(AttributeError, match="module 'catlass_py.kernel' has no attribute 'NoSuchKernel'"):
        kernel.NoSuchKernel  # noqa: B018
    with pytest.raises(ImportError, match="cannot import name 'no_such_op'"):
        from catlass_py.ops import no_such_op  # noqa: F401


def test_exported_names_reads_only_the_type_checking_block():
    src = ("from typing import TYPE_CHECKING\nfrom a.b import Outside\nif TYPE_CHECKING:\n"
           "    from x.y import One, Two as Three\n    import z\n")
    assert exported_names(src) == {"One": "x.y", "Three": "x.y"}
    assert exported_names("if TYPE_CHECKING:\n    from .sub import A\n    from ..up import B\n", "p.q") == {
        "A": "p.q.sub", "B": "p.up"}


def test_the_attention_kernels_are_exported_alike():
    out = _fresh("import sys\nfrom catlass_py.kernel import FAInferKernel, MLAKernel\n"
                 "print(MLAKernel.__module__, FAInferKernel.__module__)")
    assert out == "catlass_py.kernel.mla catlass_py.kernel.fa_infer"
