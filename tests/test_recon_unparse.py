"""render.unparse renders what ast.unparse renders: its quick path (dotted names, literals,
`X[...]`, `A | B`, displays, calls) is checked against ast.unparse on every annotation, default
and base of real code (the standard library modules below, pydantic's and typer's sources,
plan07's own), and on the shapes where the two spellings could part (quotes, escapes, one-element
tuples, nesting)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from collections.abc import Iterator
from pathlib import Path

import pydantic
import pytest
import typer

import plan07
from plan07.evidence.render import _quick, unparse

SOURCES = [Path(m.__file__) for m in (ast, dataclasses, inspect, typing)] + [
    p for pkg in (pydantic, typer, plan07) for p in sorted(Path(pkg.__file__).parent.rglob("*.py"))]


def _items(tree: ast.AST) -> Iterator[ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]
            yield from (p.annotation for p in params if p.annotation)
            yield from (d for d in a.defaults + a.kw_defaults if d is not None)
            if node.returns:
                yield node.returns
        elif isinstance(node, ast.ClassDef):
            yield from node.bases
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation
            if node.value:
                yield node.value


def test_quick_path_matches_ast_unparse_on_real_code() -> None:
    seen = quick = 0
    for path in SOURCES:
        for item in _items(ast.parse(path.read_text(encoding="utf-8"))):
            seen += 1
            text = _quick(item)
            if text is not None:
                quick += 1
                assert text == ast.unparse(item), f"{path}:{item.lineno}"
    assert quick > 0.8 * seen > 1000  # the quick path is the common one, not a rare branch


@pytest.mark.parametrize("src", [
    "x", "a.b.c", "None", "True", "...", "0", "10**100", "'plain text'", "'it''s'",
    '"say \\"hi\\""', "'tab\\there'", "'é'", "u'x'", "b'x'", "1.5", "-1", "(1,)", "()", "X[a]",
    "X[a, b]", "X[a,]",
    "X[()]", "X[(a, b), c]", "X[*Ts]", "a.b[c.d, 'e']", "Optional[a | None]", "a | b | c",
    "a | (b | c)", "(a + b) | c", "a + b | c", "x[0][1]", "f()", "Callable[[int], str]",
    "Literal['a', 'b']", "Dict[str, List[int]]", "int | 'Foo'", "x.y[z] | None", "lambda: 0",
    "1e999", "-1e999", "1j", "-2.5", "-x", "b'\\x00'", "u'\\n'", "[]", "{}", "[(1, 2), [3]]",
    "{1, (2,)}", "{'a': (1,), 2: []}", "{**d}", "{'a': 1, **d}", "f(a, b=1)", "f(*a)", "f(**k)",
    "a.b(c)(d)", "f(x)[0]", "f(x for x in y)", "Callable[[], None]", "X[-1]", "X[[a], b]",
    "dict(a=-1, **{'b': ()})",
])
def test_unparse_equals_ast_unparse(src: str) -> None:
    node = ast.parse(src, mode="eval").body
    assert unparse(node) == ast.unparse(node)
