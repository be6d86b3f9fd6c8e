"""Lazy package exports (PEP 562 module ``__getattr__``).

A package that re-exports many submodules' names writes them as ``from catlass_py.x.y import Name as Name``
statements under ``if TYPE_CHECKING:`` (the explicit re-export form, which ``mypy --strict`` requires), which is
what readers, type checkers and the import-graph test see, and ends with::

    if not TYPE_CHECKING:
        __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

:func:`lazy_exports` reads those statements from the package's own source, so importing the package imports none
of the submodules; the first access to a name (``from catlass_py.kernel import BasicMatmul`` included) imports
its submodule alone and keeps the value in the package's namespace. A name the package does not export raises
the usual ``AttributeError``.

A submodule named like the name it exports (``catlass_py.ops.basic_matmul`` defines ``basic_matmul``) would
otherwise shadow it: the import system binds a loaded submodule as an attribute of its package. The package's
module object therefore gets a class whose ``__setattr__`` binds the exported name instead.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Callable


def _is_type_checking(test: ast.expr) -> bool:
    return getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"


def exported_names(source: str, package: str = "") -> dict[str, str]:
    """Name -> absolute module of every ``from MODULE import NAME [as ALIAS]`` under a top-level
    ``if TYPE_CHECKING:`` of ``source``, the ``__init__.py`` of ``package`` (which resolves relative imports:
    ``from .layout import Layout``)."""
    where: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.body:
                if not isinstance(stmt, ast.ImportFrom):
                    continue
                if stmt.level:
                    base = package.split(".")[:len(package.split(".")) - stmt.level + 1]
                    module = ".".join(base + ([stmt.module] if stmt.module else []))
                else:
                    module = stmt.module or ""
                for alias in stmt.names:
                    where[alias.asname or alias.name] = module
    return where


class _ExportingModule(types.ModuleType):
    """A package whose exported names win over its submodules of the same name."""

    def __setattr__(self, name: str, value: object) -> None:
        where = self.__dict__.get("_lazy_exports", {})
        if isinstance(value, types.ModuleType) and where.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for the package ``package`` whose ``__init__.py`` is ``init_file``."""
    with open(init_file, encoding="utf-8") as f:
        where = exported_names(f.read(), package)
    module = sys.modules[package]
    module.__class__ = _ExportingModule
    module.__dict__["_lazy_exports"] = where

    def __getattr__(name: str) -> object:
        try:
            source = where[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(source), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted((set(vars(module)) - {"_lazy_exports"}) | set(where))

    return __getattr__, __dir__, sorted(where)


__all__ = ["exported_names", "lazy_exports"]
