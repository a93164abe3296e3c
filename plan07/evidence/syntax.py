"""Syntax helpers over `ast` nodes: dotted names, annotation types, fast walks, signature and
docstring rendering. Pure.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from operator import attrgetter, itemgetter
from typing import Any, TypeVar

from plan07.caps import FIELD_MAX_CHARS
from plan07.evidence.facts import Chain
from plan07.evidence.render import _quick, unparse

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
