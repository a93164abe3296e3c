"""What an applied edit observably changed, read from the file before and after it. Pure.

The §3.6 revision trigger acts on an edit's *observed* effect. The harness's stand-in for 06's
impact feedback (plan07.ab.planned) reads the task's impact edges; on a real repository those
are every potential consumer recon found (each caller, importer and test of an entity), not
the ones this edit reaches. `reaches(edge, changes)` keeps an edge only when the edit did what
its cause needs: a `sig_change` or `consumer_rebind` edge when the source's signature changed
or the source is gone, any other cause when the source's definition text changed; a
`test_anchor` edge never (a test of a changed entity validates it: a broken one is seen by the
tests that fail, not predicted).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Change:
    """One file's text before and after an edit (repo-relative posix path)."""

    file: str
    before: str
    after: str


def module_of(path: str) -> str:
    """`src/pkg/core.py` -> `pkg.core` (a src/ or lib/ prefix dropped; `__init__` dropped)."""
    parts = list(PurePosixPath(path.removesuffix(".py")).parts)
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _tree(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _find(tree: ast.Module, path: Sequence[str]) -> tuple[ast.AST | None, bool]:
    """The deepest definition along `path` (class/def names from the module down) and whether
    the whole path was found (a parameter-level entity stops at its function)."""
    node: ast.AST = tree
    found: ast.AST | None = None
    for name in path:
        body = getattr(node, "body", [])
        nxt: ast.AST | None = next((n for n in body if isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name), None)
        if nxt is None:
            nxt = next((n for n in body if isinstance(n, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == name
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))), None)
        if nxt is None:
            return found, False
        node = found = nxt
    return found, True


def _signature(node: ast.AST) -> str:
    """A definition's interface: a function's arguments, a class's bases and __init__'s."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ast.dump(node.args)
    if isinstance(node, ast.ClassDef):
        init = next((n for n in node.body if isinstance(n, ast.FunctionDef)
                     and n.name == "__init__"), None)
        return ast.dump(ast.Tuple(elts=node.bases, ctx=ast.Load())) + (
            ast.dump(init.args) if init is not None else "")
    return ast.dump(node)


def _located(entity: str, changes: Iterable[Change]) -> tuple[Change, list[str]] | None:
    """The change whose module holds `entity`, and the entity's path inside that module."""
    best: tuple[Change, list[str]] | None = None
    for c in changes:
        mod = module_of(c.file)
        if mod and (entity == mod or entity.startswith(mod + ".")):
            rest = entity[len(mod):].lstrip(".")
            path = rest.split(".") if rest else []
            if best is None or len(path) < len(best[1]):
                best = (c, path)
    return best


def changed(entity: str, changes: Sequence[Change], *, interface: bool) -> bool:
    """Did the edit change `entity` (its signature only, when `interface`), or remove it?"""
    hit = _located(entity, changes)
    if hit is None:
        return False
    c, path = hit
    old, new = _tree(c.before), _tree(c.after)
    if old is None or new is None:
        return c.before != c.after
    if not path:  # the module itself: its top-level names
        def names(t: ast.Module) -> set[str]:
            return {n.name for n in t.body if isinstance(n, (ast.FunctionDef,
                                                             ast.AsyncFunctionDef, ast.ClassDef))}
        return names(old) != names(new) if interface else c.before != c.after
    a, whole_a = _find(old, path)
    b, whole_b = _find(new, path)
    if a is None or b is None or whole_a != whole_b:
        return (a is None) != (b is None) or whole_a != whole_b
    if interface:
        return _signature(a) != _signature(b)
    return ast.dump(a) != ast.dump(b)


def reaches(src: str, dst: str, cause: str, changes: Sequence[Change]) -> bool:
    """Does the 06 impact edge src -> dst (its `cause`) follow from these changes? Not when the
    same changes rewrote the consumer `dst` too (the edit already covers it)."""
    if cause == "test_anchor":
        return False
    if changed(dst, changes, interface=False):
        return False
    return changed(src, changes, interface=cause in ("sig_change", "consumer_rebind"))
