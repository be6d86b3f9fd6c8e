"""Example scripts: the one loader of the shipped examples (``catlass_py.examples``, the repository's
``examples/``) and of a user's script file, and what a script declares (``NAME``, ``USAGE``, ``SUMMARY``) read
without importing it.

Nothing here imports numpy or the simulator: ``catlass-py list`` and ``--help`` use it as it is, the runner and
the tuner re-export it (:func:`catlass_py.runner.load_script`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pathlib
import pkgutil
import sys
import traceback

from catlass_py.errors import ArgumentError

EXAMPLES_PACKAGE = "catlass_py.examples"  # the shipped example scripts (examples/ in the repository)


def example_names() -> list[str]:
    """Names of the shipped examples, sorted."""
    spec = importlib.util.find_spec(EXAMPLES_PACKAGE)
    assert spec is not None and spec.submodule_search_locations is not None
    return sorted(m.name for m in pkgutil.iter_modules(spec.submodule_search_locations) if not m.name.startswith("_"))


def _example_path(name: str) -> pathlib.Path:
    spec = importlib.util.find_spec(EXAMPLES_PACKAGE)
    assert spec is not None and spec.submodule_search_locations is not None
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / f"{name}.py"


def _resolve(name: str) -> pathlib.Path | str:
    """A user's script path, or the full name of the shipped example ``name`` (a name or a unique prefix)."""
    path = pathlib.Path(name)
    if name.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ArgumentError(f"example: no such file {name!r}")
        return path
    names = example_names()
    matches = [n for n in names if n == name] or [n for n in names if n.startswith(name)]
    if not matches:
        raise ArgumentError(f"example: no example is called {name!r} (or starts with it); expected one of "
                            f"{', '.join(names)}, or a path to an example script")
    if len(matches) > 1:
        raise ArgumentError(f"example: {name!r} is ambiguous: {', '.join(matches)} all start with it; "
                            "give more of the name")
    return matches[0]


def script_info(name: str) -> dict[str, str]:
    """``name``, ``usage``, ``summary`` and ``path`` of an example script (shipped, by name or unique prefix, or
    a user's file), read from its source without importing it."""
    target = _resolve(name)
    path = target if isinstance(target, pathlib.Path) else _example_path(target)
    values = {"NAME": path.stem if isinstance(target, pathlib.Path) else target, "USAGE": "", "SUMMARY": ""}
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in values and isinstance(node.value, ast.Constant):
            values[node.targets[0].id] = str(node.value.value)
    return {"name": values["NAME"], "usage": values["USAGE"], "summary": values["SUMMARY"], "path": str(path)}


def _load_file(path: pathlib.Path):
    # As ``python path/to/file.py`` does, the script's directory goes on sys.path (for its sibling modules).
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = f"catlass_py_script_{abs(hash(str(path.resolve()))):x}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the script's own error (a KeyboardInterrupt goes on as it is)
        del sys.modules[module_name]
        raise ArgumentError(f"example: {path} failed to load: {script_error(exc, path)}") from exc
    except BaseException:
        del sys.modules[module_name]
        raise
    if not callable(getattr(module, "run", None)):
        raise ArgumentError(f"example: {path} defines no run(argv, *, cores, seed, observers, progress, options) "
                            "(see catlass_py.runner for what an example script defines)")
    if not hasattr(module, "NAME"):
        module.NAME = path.stem
    return module


def script_error(exc: BaseException, path) -> str:
    """``exc``, raised by the user's script at ``path``, in one line with where in the script it came from (the
    innermost line of the script in its traceback; a SyntaxError's own line)."""
    target = pathlib.Path(path).resolve()
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if pathlib.Path(f.filename).resolve() == target]
    where = f" (line {lines[-1]})" if lines else ""
    if isinstance(exc, SyntaxError) and exc.lineno is not None:  # where the parser stopped, in its own file
        if exc.filename and pathlib.Path(exc.filename).resolve() != target:
            return f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno}){where.replace('(', '(imported at ')}"
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}{': ' + text if text else ''}{where}"


def load_script(name: str):
    """The example script ``name``: a path to a user's ``.py`` file (``catlass-py run path/to/my_kernel.py``), or
    a shipped example by name or unique prefix (such as ``10``)."""
    target = _resolve(name)
    if isinstance(target, pathlib.Path):
        return _load_file(target)
    return importlib.import_module(f"{EXAMPLES_PACKAGE}.{target}")


__all__ = ["EXAMPLES_PACKAGE", "example_names", "load_script", "script_error", "script_info"]
