"""recon's fast walks give what the plain ones give: `import_statements` is a plain recursive walk
filtered to the imports (same order: the order decides which of two imports of one name binds
it), and `type_chains` is the `ast.iter_child_nodes` recursion it replaced, on real code (the
standard library modules below and plan07's own sources) and on tricky shapes."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

import plan07
from plan07.evidence.facts import Chain
from plan07.evidence.syntax import (
    _string_annotation,
    chain_of,
    import_lines,
    import_statements,
    type_chains,
)

SOURCES = [Path(m.__file__) for m in (ast, dataclasses, inspect, typing)] + [
    p for pkg in (plan07,) for p in sorted(Path(pkg.__file__).parent.rglob("*.py"))]

TRICKY = '''
import a
try:
    import b as x
except ImportError:
    import c as x
except OSError:
    from d import x
else:
    from e import x
finally:
    import f
if y:
    from g import x
elif z:
    import h.i
else:
    import h.j
with ctx() as w:
    import k
def fn():
    import l
    class C:
        from m import x
    for i in range(3):
        import n
    else:
        import o
    while True:
        import p
match q:
    case 1:
        import r
    case _:
        import s
async def co():
    async with t:
        import u
    async for v in w:
        import x
'''


def _trees() -> Iterator[ast.Module]:
    yield ast.parse(TRICKY)
    for p in SOURCES:
        yield ast.parse(p.read_text("utf-8"))


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The reference walk (the order recon has always read imports in): a statement, then its
    blocks last first, each in order."""
    for st in body:
        yield st
        blocks = [getattr(st, f) for f in ("body", "orelse", "finalbody") if f in st._fields]
        blocks += [h.body for f in ("handlers", "cases") if f in st._fields
                   for h in getattr(st, f)]
        for block in reversed(blocks):
            yield from _statements(block)


def test_import_statements_are_statements_filtered_in_order() -> None:
    seen = 0
    for tree in _trees():
        want = [s for s in _statements(tree.body) if isinstance(s, ast.Import | ast.ImportFrom)]
        assert import_statements(tree.body) == want
        seen += len(want)
    assert seen > 300


LINES_TRICKY = TRICKY + """
def late():
    from q \\
        import r
    s = "import nothing"
class D:
    def m(self):
        x = 1
    def n(self):
        import t
"""


def test_import_statements_skip_only_blocks_with_no_import_line() -> None:
    sources = [TRICKY, LINES_TRICKY] + [p.read_text("utf-8") for p in SOURCES[:12]]
    seen = 0
    for source in sources:
        tree = ast.parse(source)
        lines = import_lines(source)
        assert lines is not None
        assert import_statements(tree.body, lines) == import_statements(tree.body)
        seen += len(lines)
    assert seen > 100, seen
    assert import_lines("import a\r\ndef f():\r\n    import b\r\n") is None
    assert import_lines("x = 1\n\nimport a  # import\nfrom b import (\n c)\n") == [3, 4]


def _reference(ann: ast.expr | None) -> list[Chain]:
    """type_chains before it read nodes by exact class (isinstance, ast.iter_child_nodes)."""
    if ann is None:
        return []
    if isinstance(ann, ast.Name | ast.Attribute):
        c = chain_of(ann)
        if c is not None:
            return [c]
    if isinstance(ann, ast.Constant):
        return _string_annotation(ann.value, _reference) or []
    if isinstance(ann, ast.Subscript) and (c := chain_of(ann.value)) and c[-1] == "Literal":
        return [c]
    return [c for child in ast.iter_child_nodes(ann) for c in _reference(child)]  # type: ignore[arg-type]


def _annotations(tree: ast.AST) -> Iterator[ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
                if p.annotation is not None:
                    yield p.annotation
            if node.returns is not None:
                yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def test_type_chains_match_the_recursion_it_replaced() -> None:
    seen = 0
    for tree in _trees():
        for ann in _annotations(tree):
            assert type_chains(ann) == _reference(ann), ast.unparse(ann)
            seen += 1
    assert seen > 1000


@pytest.mark.parametrize("text", [
    "dict[str, list[int | None]]", "'pkg.Mod' | None", "Callable[[A, b.C], D]", "f().x",
    "A(...).m", "Literal['a', b.c]", "typing.Literal[X]", "x[1:2, ...]", "{'k': V}",
    "lambda q: q.r", "(a, b.c)", "'A[\"B\"]'", "'not valid ('", "Unpack[Ts]",
])
def test_type_chains_on_shapes(text: str) -> None:
    ann = ast.parse(text, mode="eval").body
    assert type_chains(ann) == _reference(ann)
