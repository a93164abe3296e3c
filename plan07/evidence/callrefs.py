"""From a function body's `ast` to its call references: a call's CallRef (`call_ref`), the
values a node holds (`held_values`), the class a value constructs (`constructed`), and
`record_calls`, Body.scan's second pass. Pure: used by plan07.evidence.body and parse.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from plan07.evidence.facts import CallRef, Chain, Def
from plan07.evidence.syntax import chain_of


def call_ref(call: ast.Call, chain: Chain) -> CallRef:
    args, kws = call.args, call.keywords
    n = len(args)
    for a in args:
        if type(a) is _STARRED:  # `f(*xs)` passes no fixed number of positionals
            n -= 1
    return chain, n, _keyword_names(kws) if kws else ()


def _keyword_names(kws: list[ast.keyword]) -> tuple[str, ...]:
    """Each keyword's name, a `**kw` counted as "**"."""
    names: tuple[Any, ...] = tuple(map(_ARG, kws))  # str, or None for `**kw`
    return tuple([x or "**" for x in names]) if None in names else names


_STARRED = ast.Starred
_ARG = attrgetter("arg")


def held_values(x: Any) -> list[Any]:
    """The plain names/attributes `x` holds as values (not called there): `Thread(target=f)`,
    `{"a": f}`, `[f, g]`, `handler = f`. Resolution keeps those naming an in-repo function."""
    cls = type(x)  # exact classes: ast node types are never subclassed by the parser
    vals: list[Any]
    if cls is ast.Call:
        vals = x.args
        if x.keywords:
            vals = [*vals, *[k.value for k in x.keywords]]
    elif cls is ast.Dict:
        vals = x.values
    elif cls is ast.List or cls is ast.Tuple or cls is ast.Set:
        if cls is not ast.Set and type(x.ctx) is not _LOAD:
            return []
        vals = x.elts
    elif cls is ast.Assign:
        vals = [x.value]
    else:
        return []
    return [v for v in vals if type(v) in _NAMEISH and type(v.ctx) is _LOAD]


_NAMEISH: frozenset[type] = frozenset({ast.Name, ast.Attribute})
_LOAD = ast.Load


def constructed(value: ast.expr | None) -> Chain | None:
    """`T(...)` -> T (resolve keeps it only if T is a class); anything else -> None."""
    if isinstance(value, ast.Call):
        return chain_of(value.func)
    return None


def record_calls(d: Def, calls: list[Any], passed: list[Any], held: list[Any],
                 types: dict[str, Chain | None], me: str | None,
                 rewrite: Callable[[Chain], Chain | None]) -> None:
    """Body.scan's pass 2: the calls it collected (func, fixed positionals, keywords) into
    `d.calls` (a receiver of unknown type: `d.by_name`), and the names and attributes passed to
    them, then those `held`, into `d.refs`, through the body's local `types`. `me`: the self
    parameter's name in a method (its `self.x` rewritten to ("self", x)), else None; `rewrite`:
    Body._rewrite. call_ref, held_values and, for a dotted name of up to three parts, chain_of
    and `rewrite` inlined."""
    out, by_name, refs = d.calls, d.by_name, d.refs
    arg_of = _ARG
    name_cls, attribute = ast.Name, ast.Attribute
    r: Chain | None
    t: Chain | None
    for func, n, kws in calls:
        fc = type(func)
        # the chain, rewritten (None: not resolvable here); `x.m()` with x of unknown type
        # is a may-call of any in-repo `m` (resolve decides): by name
        if fc is name_cls:  # `f()`
            head = func.id
            if head == me:
                r = ("self",)
            elif head in types:
                continue  # a local's call: not resolvable here, and not by name
            else:
                r = (head,)
        elif fc is attribute:
            v = func.value
            vc = type(v)
            if vc is name_cls:  # `a.m()`
                head = v.id
                if head == me:
                    r = ("self", func.attr)
                elif head in types:
                    t = types[head]
                    r = None if t is None else (*t, func.attr)
                else:
                    r = (head, func.attr)
            elif vc is attribute and type(b := v.value) is name_cls:  # `a.b.m()`
                head = b.id
                if head == me:
                    r = ("self", v.attr, func.attr)
                elif head in types:
                    t = types[head]
                    r = None if t is None else (*t, v.attr, func.attr)
                else:
                    r = (head, v.attr, func.attr)
            else:  # any other receiver: `xs[0].m()`, `(a or b).m()`, `A(1).m()`
                ch = chain_of(func)
                r = rewrite(ch) if ch else None
        else:
            ch = chain_of(func)
            if not ch or (r := rewrite(ch)) is None:
                continue
        if kws:  # _keyword_names, inlined
            names = tuple(map(arg_of, kws))
            if None in names:
                names = tuple([x or "**" for x in names])
        else:
            names = ()
        if r is None:
            by_name.append(((func.attr,), n, names))
        else:
            out.append((r, n, names))
    # values passed along (callbacks), then those held by registries and assignments: plain
    # names and attributes, all loads (held_values)
    passed += held
    for v in passed:
        if type(v) is name_cls:  # _rewrite of a one-name chain, inlined
            head = v.id
            if head == me:
                refs.append(("self",))
            elif head not in types:
                refs.append((head,))
        elif type(base := v.value) is name_cls:  # `a.b`: as `a.m()` above
            head = base.id
            if head == me:
                refs.append(("self", v.attr))
            elif head not in types:
                refs.append((head, v.attr))
            elif (t := types[head]) is not None:
                refs.append((*t, v.attr))
        elif (ch := chain_of(v)) and (r := rewrite(ch)) is not None:
            refs.append(r)
