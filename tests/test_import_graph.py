"""The package's import graph has no cycle: every `import plan07.x` / `from plan07.x import y`
inside plan07 (at the top of a module or inside a function; `if TYPE_CHECKING:` blocks left out,
they never run) goes one way. Read from the source with ast, nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import plan07
from plan07.engine.graphs import sccs

ROOT = Path(plan07.__file__).parent


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(path: Path, modules: set[str]) -> set[str]:
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text("utf-8"))]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
        todo.extend(ast.iter_child_nodes(node))
    # `from plan07.x import y` where y is a module counts as an import of plan07.x.y
    return {m for m in out if m in modules and m != me} - {"plan07"}


def graph() -> dict[str, set[str]]:
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    return {m: _imports(p, set(files)) for m, p in files.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (plan07's own Tarjan)."""
    comps = sccs(sorted(g), {v: sorted(w for w in g[v] if w in g) for v in g})
    return sorted(sorted(c) for c in comps if len(c) > 1)


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_plan07_has_no_import_cycle() -> None:
    g = graph()
    assert "plan07.api" in g
    assert "plan07.plan.artifact" in g["plan07.api"]
    assert cycles(g) == []
