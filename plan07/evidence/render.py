"""`ast.unparse`'s text for the expressions signatures and class lines show, without its visitor
for the common shapes. Pure: used by plan07.evidence.signatures.
"""

from __future__ import annotations

import ast
from typing import Any

_NAME, _ATTRIBUTE, _CONSTANT, _TUPLE = ast.Name, ast.Attribute, ast.Constant, ast.Tuple
_SUBSCRIPT, _BINOP, _BITOR = ast.Subscript, ast.BinOp, ast.BitOr


def unparse(node: ast.AST) -> str:
    """`ast.unparse(node)`, the same text, without its visitor for the shapes most annotations,
    defaults and bases have (a dotted name, a literal, `X[...]`, `A | B`, a display, a call):
    rendering every signature through `ast.unparse` was a third of recon's time over
    `ast.parse`."""
    text = _quick(node)
    return ast.unparse(node) if text is None else text


def _quick(node: Any) -> str | None:
    """`ast.unparse(node)` for the shapes below, None for any other. Each is rendered as
    `ast.unparse` renders it at the top level, which is also how it renders it as an item, an
    index, an argument or a dict entry (no shape here is put in parentheses there but a tuple,
    which always is); the operands of `|` and the heads of `.`, `[...]` and `(...)` are kept to
    shapes no operator there puts in parentheses. (One function for the common shapes, and a
    plain name read in place: a call costs more than most of these renderings.)"""
    cls = type(node)
    if cls is _NAME:
        name: str = node.id
        return name
    if cls is _ATTRIBUTE:
        value = node.value
        c = type(value)
        if c is _NAME:
            return f"{value.id}.{node.attr}"
        head = _quick(value) if c is _ATTRIBUTE else None
        return None if head is None else f"{head}.{node.attr}"
    if cls is _CONSTANT:  # its repr (a `u` prefix kept), `...` for Ellipsis
        v = node.value
        if v is None:
            return "None"
        t = type(v)
        if t is str:
            text = repr(v)
            return text if node.kind is None else f"u{text}"
        if t is bool or t is int or t is bytes:
            return repr(v)
        if v is ...:
            return "..."
        if t is float or t is complex:
            text = repr(v)
            return None if "n" in text else text  # (inf, nan: unparse's own spelling)
        return None  # (a tuple or frozenset: only from code that builds nodes)
    if cls is _SUBSCRIPT:
        value = node.value
        c = type(value)
        if c is _NAME:
            base: str | None = value.id
        elif c is _ATTRIBUTE:
            base = _quick(value)
            if base is None:
                return None
        else:
            return None
        index = node.slice
        c = type(index)
        if c is _NAME:
            return f"{base}[{index.id}]"
        if c is _TUPLE:  # `X[a, b]`: the index's items without the tuple's parentheses
            elts = index.elts
            inner = _items(elts) if len(elts) > 1 else None  # (`X[()]`, `X[a,]`: unparse's)
        else:
            inner = _quick(index)
        return None if inner is None else f"{base}[{inner}]"
    if cls is _BINOP and type(node.op) is _BITOR:
        left, right = node.left, node.right
        c = type(left)
        a = left.id if c is _NAME else _quick(left) if c in _OPERAND else None
        c = type(right)
        if c is _CONSTANT and right.value is None:  # `X | None`
            b: str | None = "None"
        else:
            b = _quick(right) if c in _OPERAND and c is not _BINOP else None
        return None if a is None or b is None else f"{a} | {b}"
    if cls in _DISPLAYS:
        return _display(node, cls)
    if cls is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is _CONSTANT:
        number = _quick(node.operand)  # `-1`: unparse writes no space after a sign
        return None if number is None else f"-{number}"
    return None


def _display(node: Any, cls: type) -> str | None:
    """A tuple, list, set or dict display (a dict's `**d` left to unparse), or a call of a dotted
    name (its `*args` left to unparse)."""
    if cls is _TUPLE:
        elts = node.elts
        inner = _items(elts)
        if inner is None:
            return None
        return f"({inner},)" if len(elts) == 1 else f"({inner})"
    if cls is ast.List:
        inner = _items(node.elts)
        return None if inner is None else f"[{inner}]"
    if cls is ast.Set:
        inner = _items(node.elts)
        return None if inner is None else f"{{{inner}}}"
    parts: list[str] = []
    if cls is ast.Dict:
        for k, v in zip(node.keys, node.values, strict=True):
            key = None if k is None else _quick(k)
            text = None if key is None else _quick(v)
            if text is None:
                return None
            parts.append(f"{key}: {text}")
        return f"{{{', '.join(parts)}}}"
    func = node.func  # a Call
    head = _quick(func) if type(func) is _NAME or type(func) is _ATTRIBUTE else None
    if head is None:
        return None
    for a in node.args:
        text = _quick(a)
        if text is None:
            return None
        parts.append(text)
    for k in node.keywords:
        text = _quick(k.value)
        if text is None:
            return None
        parts.append(f"**{text}" if k.arg is None else f"{k.arg}={text}")
    return f"{head}({', '.join(parts)})"


def _items(elts: list[Any]) -> str | None:
    parts = []
    for e in elts:
        text = _quick(e)
        if text is None:
            return None
        parts.append(text)
    return ", ".join(parts)


_OPERAND = frozenset({ast.Name, ast.Attribute, ast.Constant, ast.Subscript, ast.BinOp})
_DISPLAYS = frozenset({ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Call})
