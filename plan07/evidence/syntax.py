"""Syntax helpers over `ast` nodes: dotted names, annotation types, fast walks, a docstring's
first line. Pure (signature lines: plan07.evidence.signatures).
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from plan07.caps import FIELD_MAX_CHARS
from plan07.evidence.facts import Chain

Scope = ast.FunctionDef | ast.AsyncFunctionDef
T = TypeVar("T")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def clip(text: str) -> str:
    """Whitespace runs as one space, at most FIELD_MAX_CHARS."""
    if not (text.isprintable() and "  " not in text and text[:1] != " " != text[-1:]):
        text = " ".join(text.split())  # (printable: a space is its only whitespace)
    return text if len(text) <= FIELD_MAX_CHARS else text[: FIELD_MAX_CHARS - 1] + "…"


_NAME, _ATTRIBUTE, _EXPR, _CONSTANT = ast.Name, ast.Attribute, ast.Expr, ast.Constant


def chain_of(expr: ast.expr) -> Chain | None:
    """`a.b.c` -> ("a", "b", "c"); `super().m` -> ("super", "m"); `A(...).m` -> ("A", "m")."""
    e: Any = expr  # read by exact class (the parser never subclasses; mypy cannot narrow on it)
    cls = type(e)
    if cls is _NAME:  # most chains are one name
        return (e.id,)
    parts: list[str] = []
    while cls is _ATTRIBUTE:
        parts.append(e.attr)
        e = e.value
        cls = type(e)
    if cls is _NAME:
        parts.append(e.id)
    elif cls is ast.Call and parts:
        if isinstance(e.func, ast.Name) and e.func.id == "super":
            parts.append("super")
        else:  # `A(...).m`: resolution keeps it only when A is a class that has m
            inner = chain_of(e.func)
            if inner is None:
                return None
            parts.extend(reversed(inner))
    else:
        return None
    return tuple(reversed(parts))


def type_chains(ann: ast.expr | None) -> list[Chain]:
    """Every dotted name inside an annotation, string annotations included (not the values of a
    `Literal[...]`, which are data)."""
    if ann is None:
        return []
    a: Any = ann  # read by exact class, as chain_of
    cls = type(a)
    if cls is _NAME:
        return [(a.id,)]
    if cls is _ATTRIBUTE:
        c = chain_of(a)
        if c is not None:
            return [c]
    elif cls is ast.Constant:
        return _string_annotation(a.value, type_chains) or []
    elif cls is ast.Subscript and (c := chain_of(a.value)) and c[-1] == "Literal":
        return [c]
    out: list[Chain] = []  # ast.iter_child_nodes' order (what children() leaves out holds none)
    for f in CHILDREN.get(cls) or children(cls):
        v = getattr(a, f)
        if type(v) is list:
            for x in v:
                if x is not None:
                    out += type_chains(x)
        elif v is not None:
            out += type_chains(v)
    return out


def _string_annotation(value: object, then: Callable[[ast.expr], T]) -> T | None:
    """A forward reference `"Foo"` / `"pkg.Foo | None"` read as the expression it spells; a
    plain dotted name skips the parser (most are, and a parse per string is most of the cost)."""
    if not isinstance(value, str) or not value:
        return None
    if _DOTTED.fullmatch(value):
        node: ast.expr = ast.Name(id=value) if "." not in value else ast.Attribute(
            value=_dotted_expr(value.rpartition(".")[0]), attr=value.rpartition(".")[2])
        return then(node)
    try:
        return then(ast.parse(value, mode="eval").body)
    except (SyntaxError, ValueError):
        return None


def _dotted_expr(name: str) -> ast.expr:
    head, _, last = name.rpartition(".")
    return ast.Attribute(value=_dotted_expr(head), attr=last) if head else ast.Name(id=last)


def simple_type(ann: ast.expr | None) -> Chain | None:
    """The one class an annotation names (`T`, `mod.T`, `Optional[T]`, `T | None`), else None."""
    if ann is None:
        return None
    if isinstance(ann, ast.Constant):
        return _string_annotation(ann.value, simple_type)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        sides = [s for s in (ann.left, ann.right) if not _is_none(s)]
        return simple_type(sides[0]) if len(sides) == 1 else None
    optional = {("Optional",), ("typing", "Optional")}
    if isinstance(ann, ast.Subscript) and chain_of(ann.value) in optional:
        return simple_type(ann.slice)
    if isinstance(ann, ast.Name | ast.Attribute):
        return chain_of(ann)
    return None


def _is_none(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value is None


def first_doc_line(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The docstring's first non-blank line, clipped: what `ast.get_docstring(node)` (cleaned)
    gives there, without `inspect.cleandoc` over the whole text (it only removes whitespace at
    line starts and blank lines at the ends, which the strip and clip below remove anyway)."""
    body = node.body
    if not body or type(first := body[0]) is not _EXPR:
        return ""
    value: Any = first.value  # an Expr (checked above)
    if type(value) is not _CONSTANT or type(doc := value.value) is not str:
        return ""
    doc = doc.strip()
    if not doc:
        return ""
    line = doc.partition("\n")[0]  # splitlines' first line, unless another break comes first
    if not line.isprintable():  # (every other break is unprintable)
        return clip(doc.splitlines()[0])
    # clip's own test, its printable part done and the line stripped at its start
    if "  " in line or line[-1] == " " or len(line) > FIELD_MAX_CHARS:
        return clip(line)
    return line


# Nodes with no child worth visiting: skipping them is most of walk()'s speed on data-heavy files.
SKIP = frozenset({ast.Constant, ast.Name, ast.alias, ast.MatchSingleton} | {
    c for c in vars(ast).values() if isinstance(c, type)
    and issubclass(c, ast.operator | ast.cmpop | ast.unaryop | ast.boolop | ast.expr_context)})


# Fields that never hold a node worth visiting (names, flags, operators, contexts, aliases).
_NOT_NODES = frozenset({"id", "attr", "name", "arg", "asname", "module", "level", "names",
                        "type_comment", "kind", "conversion", "simple", "is_async", "ctx",
                        "op", "kwd_attrs", "tag", "rest"})
CHILDREN: dict[type, tuple[str, ...]] = {}


def children(cls: type) -> tuple[str, ...]:
    fields = CHILDREN.get(cls)
    if fields is None:
        fields = CHILDREN[cls] = tuple(f for f in cls._fields  # type: ignore[attr-defined]
                                        if f not in _NOT_NODES)
    return fields


def nodes(node: ast.AST) -> Iterator[Any]:
    """Every node under `node` (itself included) that can hold a node worth reading, depth first
    (a leaf is yielded only when it is `node` itself); several times faster than `ast.walk`,
    which recon spends most of its time in otherwise: only the fields that can hold a node are
    read, and leaves (SKIP) are never pushed."""
    skip = SKIP
    if type(node) in skip:  # a leaf (its fields hold values, not nodes)
        yield node
        return
    todo: list[Any] = [node]
    push = todo.append
    pop = todo.pop
    table = CHILDREN
    while todo:
        n = pop()
        yield n
        cls = type(n)
        for f in table.get(cls) or children(cls):
            v = getattr(n, f)
            if type(v) is list:
                for x in v:
                    if x is not None and type(x) not in skip:
                        push(x)
            elif v is not None and type(v) not in skip:
                push(v)


def walk(node: ast.AST, keep: type[ast.AST] | tuple[type[ast.AST], ...]) -> list[ast.AST]:
    """The nodes of type `keep` under `node` (itself included), in no particular order."""
    return [n for n in nodes(node) if isinstance(n, keep)]


def import_statements(body: list[ast.stmt], lines: list[int] | None = None
                      ) -> list[ast.Import | ast.ImportFrom]:
    """The imports in `body` and every block nested in it (functions, classes, if/try/with/
    match), without descending into expressions: a statement before the blocks inside it, a
    compound statement's blocks last first (handlers/cases, finalbody, orelse, body).
    `lines` (import_lines of the source parsed): a compound statement that spans none of them
    holds no import and is not entered."""
    out: list[Any] = []
    todo: list[Any] = list(reversed(body))
    pop, push, add, blocks, imports = todo.pop, todo.extend, out.append, _BLOCKS, _IMPORTS
    while todo:
        st = pop()
        cls = type(st)
        spec = blocks.get(cls)
        if spec is None:  # a simple statement (most): no block inside
            if cls in imports:
                add(st)
            continue
        if lines is not None:
            i = bisect_left(lines, st.lineno)
            if i == len(lines) or lines[i] > st.end_lineno:
                continue
        fields, inner = spec
        for f in fields:
            push(reversed(getattr(st, f)))
        for f in inner:  # an except handler's or a match case's body
            for h in getattr(st, f):
                push(reversed(h.body))
    return out


def import_lines(source: str) -> list[int] | None:
    """The numbers of the lines `import` is written on, in order (an import statement spans the
    line of its keyword); None if a line may end in "\\r" (lines are counted by "\\n" here)."""
    if "\r" in source:
        return None
    out: list[int] = []
    find, count = source.find, source.count
    line, last = 1, 0
    i = find("import")
    while i >= 0:
        line += count("\n", last, i)
        last = i
        if not out or out[-1] != line:
            out.append(line)
        i = find("import", i + 6)
    return out


# Statement class -> (its fields holding statements, its fields holding handlers/cases with a
# body), for the compound statements only, in the order `import_statements` visits them.
_BLOCKS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {
    c: (tuple(f for f in ("body", "orelse", "finalbody") if f in c._fields),
        tuple(f for f in ("handlers", "cases") if f in c._fields))
    for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.stmt)
    and {"body", "orelse", "finalbody", "handlers", "cases"} & set(c._fields)
}

_IMPORTS = frozenset({ast.Import, ast.ImportFrom})
