"""The import graph of catlass_py (its modules and the example scripts installed as catlass_py.examples), built
with ``ast`` from every import statement - module level and inside functions - has no cycle, and no import goes
against the layer table of docs/architecture.md. Imports under ``if TYPE_CHECKING:`` (annotations only, never
executed) must respect the layers too but cannot form a cycle."""

from __future__ import annotations

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = "catlass_py"


def _modules() -> dict[str, pathlib.Path]:
    mods = {}
    for path in (ROOT / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    for path in (ROOT / "examples").glob("*.py"):
        mods[f"{PACKAGE}.examples" + ("" if path.stem == "__init__" else f".{path.stem}")] = path
    return mods


MODULES = _modules()


def _owner(name: str) -> str:
    """The module a dotted import target lives in (``catlass_py.gemm.GemmCoord`` -> ``catlass_py.gemm``)."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines of the bodies of ``if TYPE_CHECKING:`` blocks."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            for stmt in node.body:
                lines.update(range(stmt.lineno, stmt.end_lineno + 1))
    return lines


def imports_of(module: str, *, executed_only: bool = False) -> list[tuple[str, str, int]]:
    """``(target module, explicit target, line)`` for every import of a catlass_py module in ``module``
    (``executed_only``: not those under ``if TYPE_CHECKING:``). Importing a submodule also runs its parent
    packages, so each explicit target brings its packages along (except the importer's own ancestors, which are
    initialised already)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    type_only = _type_checking_lines(tree) if executed_only else set()
    found = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in type_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            explicit = _owner(target)
            found.append((explicit, explicit, node.lineno))
            parts = explicit.split(".")
            for i in range(2, len(parts)):
                parent = ".".join(parts[:i])
                if not (module == parent or module.startswith(parent + ".")):
                    found.append((parent, explicit, node.lineno))
    return found


def graph() -> dict[str, set[str]]:
    """Module -> the modules its executed imports import."""
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for target, _, _ in imports_of(module, executed_only=True):
            if target != module:
                edges[module].add(target)
    return edges


def layer_table() -> tuple[dict[str, str], dict[str, set[str]]]:
    """(module prefix -> layer, layer -> layers it may import) from docs/architecture.md."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    prefixes, allowed = {}, {}
    for row in re.findall(r"^\| `(\w+)` \| (.*?) \| (.*?) \|$", text, flags=re.M):
        layer, modules, may = row
        allowed[layer] = set(re.findall(r"`(\w+)`", may))
        for prefix in re.findall(r"`([\w.]+)`", modules):
            prefixes[prefix] = layer
    return prefixes, allowed


PREFIXES, MAY_IMPORT = layer_table()


def layer_of(module: str) -> str | None:
    if module == PACKAGE:
        return PREFIXES.get(PACKAGE)
    best = max((p for p in PREFIXES if p != PACKAGE and (module == p or module.startswith(p + "."))), key=len,
               default=None)
    return PREFIXES[best] if best else None


def test_the_layer_table_is_complete():
    assert len(MAY_IMPORT) >= 15 and set().union(*MAY_IMPORT.values()) <= set(MAY_IMPORT)
    unassigned = sorted(m for m in MODULES if layer_of(m) is None)
    assert not unassigned, f"modules in no layer of docs/architecture.md: {unassigned}"


def test_no_import_goes_against_the_layers():
    bad = []
    for module in sorted(MODULES):
        src = layer_of(module)
        for target, _, line in imports_of(module):
            dst = layer_of(target)
            if dst == src or dst in MAY_IMPORT[src]:
                continue
            bad.append(f"{MODULES[module].relative_to(ROOT)}:{line}: {module} ({src}) imports {target} ({dst})")
    assert not bad, "imports against docs/architecture.md:\n" + "\n".join(dict.fromkeys(bad))


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def test_no_import_cycles():
    cycles = _cycles(graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_checker_sees_function_level_imports_and_cycles():
    assert "catlass_py.analysis" in {t for t, _, _ in imports_of("catlass_py.cli")}  # inside _analyse()
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    type_only = {t for t, _, _ in imports_of("catlass_py.arch.context")} - {
        t for t, _, _ in imports_of("catlass_py.arch.context", executed_only=True)}
    assert type_only == {"catlass_py.arch.launch"}
    assert layer_of("catlass_py.gemm.block.swizzle") == "block" and layer_of("catlass_py.gemm.coord") == "gemm"


def test_no_test_imports_a_private_module():
    """Tests use the package's public modules (no ``catlass_py.x._name``)."""
    bad = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            for name in names:
                if name.startswith(PACKAGE) and any(part.startswith("_") for part in name.split(".")):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    assert not bad, "tests importing private modules:\n" + "\n".join(bad)
