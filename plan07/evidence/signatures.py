"""Signature lines of recon's definitions, rendered from their `ast` (`def f(x: int = 1)`,
`class C(Base)`, a schema class's fields), and what each annotation names. Pure.
"""

from __future__ import annotations

import ast
from operator import attrgetter, itemgetter
from typing import Any

from plan07.caps import FIELD_MAX_CHARS
from plan07.evidence.facts import Chain
from plan07.evidence.render import _quick, unparse
from plan07.evidence.syntax import Scope, clip, simple_type, type_chains

_NAME, _CONSTANT = ast.Name, ast.Constant


def signature(node: Scope) -> tuple[str, dict[str, Chain | None], list[Chain], Chain | None,
                                     list[str], int]:
    """One read of a function's parameters: (its signature line, PEP 8 spacing (`x: int = 1`,
    which `ast.unparse` does not give annotated defaults); each parameter's name (positional-
    only, positional, keyword-only, `*`, `**`: the order of ast.arguments' fields) and its
    `simple_type` (None for a name given twice with two types); the chains of every annotation,
    in that order, then the return's; the return annotation's `simple_type`; the named
    parameters' names (not `*`, `**`); how many have a default). Each annotation is read once
    (`annotation`, inlined: most are a plain name, and a function has a few)."""
    posonly, args, vararg, kwonly, kw_defaults, kwarg, defaults = _ARGUMENTS(node.args.__dict__)
    pos = posonly + args if posonly else args
    every = pos + kwonly if kwonly else pos
    if vararg is not None or kwarg is not None:
        every = every + [x for x in (vararg, kwarg) if x is not None]
    bound: dict[str, Chain | None] = {}
    chains: list[Chain] = []
    names: list[str] = []
    texts: list[str] = []  # each parameter's `name` or `name: annotation`, aligned with `every`
    known = _ANNOTATIONS
    quick = True  # every text from _quick (not ast.unparse): see _line
    for name, ann in map(_PARAMETER, every):
        names.append(name)
        if ann is None:
            t = None
            texts.append(name)
        else:
            shown = ann.id if type(ann) is _NAME else _quick(ann)
            if shown is None:
                shown = ast.unparse(ann)
                quick = False
            more, t = known.get(shown) or _remember(shown, ann)
            if more:
                chains += more
            texts.append(f"{name}: {shown}")
        bound[name] = t if name not in bound or bound[name] == t else None
    n_pos = len(pos)
    n_defaults = len(defaults)
    if defaults or kwonly:  # the last positional parameters', the keyword-only ones'
        for i, d in enumerate(defaults + kw_defaults, n_pos - n_defaults):
            if d is not None:
                shown = _quick(d)
                if shown is None:
                    shown = ast.unparse(d)
                    quick = False
                eq = "=" if every[i].annotation is None else " = "
                texts[i] = f"{texts[i]}{eq}{shown}"
        n_defaults += len(kw_defaults) - kw_defaults.count(None)
    n_named = n_pos + len(kwonly)
    if every is pos:  # positional parameters only (most functions)
        parts = texts
    else:
        parts = texts[:n_pos]
        i = n_named
        if vararg is not None:
            parts.append("*" + texts[i])
            i += 1
        elif kwonly:
            parts.append("*")
        if kwonly:
            parts += texts[n_pos:n_named]
        if kwarg is not None:
            parts.append("**" + texts[i])
    if posonly:
        parts.insert(len(posonly), "/")
    ret: Chain | None = None
    arrow = ""
    returns: Any = node.returns
    if returns is not None:
        c = type(returns)
        if c is _CONSTANT and returns.value is None:  # `-> None` (a third of them)
            shown = "None"
        else:
            shown = returns.id if c is _NAME else _quick(returns)
            if shown is None:
                shown = ast.unparse(returns)
                quick = False
        more, ret = known.get(shown) or _remember(shown, returns)
        chains += more
        arrow = f" -> {shown}"
    head = "async def" if type(node) is ast.AsyncFunctionDef else "def"
    line = _line(f"{head} {node.name}({', '.join(parts)}){arrow}", quick)
    return (line, bound, chains, ret, names if len(names) == n_named else names[:n_named],
            n_defaults)


# ast.arguments' fields, read from its __dict__ (the parser sets every field there): in CPython
# 3.11 an ast node's attribute read is not specialized, and costs twice a dict's item read
_ARGUMENTS = itemgetter("posonlyargs", "args", "vararg", "kwonlyargs", "kw_defaults", "kwarg",
                        "defaults")
_PARAMETER = attrgetter("arg", "annotation")


_ANNOTATIONS: dict[str, tuple[list[Chain], Chain | None]] = {}


def annotation(ann: ast.expr) -> tuple[str, list[Chain], Chain | None]:
    """`unparse`, `type_chains` and `simple_type` of one annotation, the last two remembered by
    the text (a repository spells the same few hundred annotations thousands of times, and a
    string annotation is parsed for each): the text spells the expression, so it decides both
    (tests/test_recon_body.py checks that on real code). Callers must not change the list."""
    text = unparse(ann)
    known = _ANNOTATIONS.get(text) or _remember(text, ann)
    return text, known[0], known[1]


def _remember(text: str, ann: ast.expr) -> tuple[list[Chain], Chain | None]:
    """annotation's reading of `ann`, spelled `text`, kept for the next annotation spelled so."""
    if len(_ANNOTATIONS) >= 4096:  # bounded: a process may read many repositories
        _ANNOTATIONS.clear()
    known = _ANNOTATIONS[text] = (type_chains(ann), simple_type(ann))
    return known


def class_signature(node: ast.ClassDef) -> str:
    """`class C(Base)`."""
    bases = []
    quick = True  # every text from _quick (not ast.unparse): see _line
    for b in node.bases:
        text = _quick(b)
        if text is None:
            text, quick = ast.unparse(b), False
        bases.append(text)
    for k in node.keywords:  # (ast.unparse's spelling of a keyword)
        text = _quick(k.value)
        if text is None:
            text, quick = ast.unparse(k.value), False
        bases.append(f"{k.arg}={text}" if k.arg else f"**{text}")
    return _line(f"class {node.name}({', '.join(bases)})" if bases else f"class {node.name}",
                 quick)


def _line(line: str, quick: bool) -> str:
    """`clip(line)` for a line that starts with a keyword and is built from names, punctuation
    and texts, those all from `_quick` when `quick`: an ASCII one is printable then (_quick
    writes a string's repr, where what is unprintable is escaped) and ends with no space, so
    only a double space inside a string, or the length, changes it."""
    if quick and line.isascii() and "  " not in line and len(line) <= FIELD_MAX_CHARS:
        return line
    return clip(line)


def class_fields(node: ast.ClassDef) -> tuple[str | None, list[str], int]:
    """One read of a class body's annotated fields: (the signature a schema/config type gets from
    them, `class C(timeout: int = 30)`, None if it has none; their names; how many annotated
    fields have a default)."""
    items: list[str] = []
    names: list[str] = []
    n_defaults = 0
    for st in node.body:
        if type(st) is ast.AnnAssign:
            value = st.value
            if value is not None:
                n_defaults += 1
            if type(target := st.target) is ast.Name:
                names.append(target.id)
                item = f"{target.id}: {unparse(st.annotation)}"
                items.append(item if value is None else f"{item} = {unparse(value)}")
    text = clip(f"class {node.name}({', '.join(items)})") if items else None
    return text, names, n_defaults
