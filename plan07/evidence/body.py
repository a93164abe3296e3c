"""The calls, values and local types of one function body, read from its `ast` in one walk (the
inner loop of recon's parse). Pure: used by plan07.evidence.parse.
"""

from __future__ import annotations

import ast
from operator import attrgetter
from typing import Any

from plan07.evidence.facts import CallRef, Chain, Def
from plan07.evidence.syntax import SKIP, Scope, chain_of, children, simple_type


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


# Nodes of a function body that bind a local name (what _Body._binding reads)
_LOOPS = frozenset({ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension})
_DEFINES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_BINDS = frozenset({ast.Assign, ast.AnnAssign, ast.withitem, ast.ExceptHandler, ast.arg,
                    ast.NamedExpr}) | _LOOPS | _DEFINES
_CONTAINERS = frozenset({ast.Dict, ast.List, ast.Tuple, ast.Set})
_HOLDER, _BINDER = "holder", "binder"
_CLASSES = (ast.Call, ast.Attribute, ast.Name, ast.Load, ast.Expr, ast.Return, ast.Assign, ast.If,
            ast.Compare, ast.BinOp, ast.Subscript, ast.Tuple, ast.List, ast.Assert, ast.UnaryOp,
            ast.BoolOp, ast.JoinedStr)  # (scan's locals)
# Every node class -> (what _Body.scan does with it, the fields it reads: syntax.children)
_PLAN: dict[type, tuple[str | None, tuple[str, ...]]] = {
    c: (_HOLDER if c in _CONTAINERS else _BINDER if c in _BINDS else None, children(c))
    for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.AST)
}


class Body:
    """Calls and local types inside one function body (nested functions and lambdas included:
    their calls belong to the enclosing definition, which is the entity a reader would name)."""

    def __init__(self, d: Def, self_name: str | None, cls: Def | None) -> None:
        self.d, self.self_name, self.cls = d, self_name, cls
        self.types: dict[str, Chain | None] = {}  # local name -> its class (None: unknown/mixed)

    def _bind(self, name: str, t: Chain | None) -> None:
        if name in self.types and self.types[name] != t:
            t = None  # assigned two different things: not guessed
        self.types[name] = t

    def scan(self, fn: Scope, bound: dict[str, Chain | None]) -> None:
        """`bound`: each parameter of `fn` and its `simple_type` (signatures.signature), the self
        parameter included (left out here); scan makes it its local types."""
        me = self.self_name
        if me is not None:
            bound.pop(me, None)
        types = self.types = bound
        t: Chain | None  # a local's class
        calls: list[Any] = []  # (a call's func, its fixed positionals, its keywords), in order
        passed: list[Any] = []  # the names and attributes passed to those calls, in order
        held: list[Any] = []  # held_values of the registries and assignments, in order
        owner = self.cls
        # pass 1, one walk of the body (syntax.nodes, inlined: this loop is most of recon's time):
        # what each local name holds, and the calls and value holders for later. The visiting
        # order is syntax.nodes' (a node's fields pushed in order, popped last first); an
        # attribute chain is skipped down to its base (`a.b.c` holds only what `a` holds) and a
        # keyword down to its value, where they would have been visited.
        (call_cls, attribute, name_cls, load, expr_, return_, assign, if_, compare, binop,
         subscript, tuple_, list_, assert_, unary, boolop, joined) = _CLASSES
        skip, plan, starred = SKIP, _PLAN, _STARRED
        todo: list[Any] = list(reversed(fn.body))  # each statement done before the next
        push, pop = todo.append, todo.pop
        while todo:
            n = pop()
            cls = type(n)
            if cls is expr_ or cls is return_:  # one child: visited in its place
                n = n.value
                cls = type(n)
                while cls is attribute:
                    n = n.value
                    cls = type(n)
                if n is None or cls in skip:
                    continue
            elif cls is attribute:  # (a chain pushed by the generic fields loop below)
                n = n.value
                cls = type(n)
                while cls is attribute:
                    n = n.value
                    cls = type(n)
                if cls in skip:
                    continue
            # the frequent classes read their fields directly, in their order (an attribute
            # child pushed as its base); the rest go by the class table
            if cls is call_cls:  # func, args, keywords' values; kept for pass 2 as read here
                f = v = n.func
                c = type(v)
                while c is attribute:
                    v = v.value
                    c = type(v)
                if c not in skip:
                    push(v)
                args, kws = n.args, n.keywords
                fixed = len(args)  # the positionals passed (`f(*xs)` passes no fixed number)
                for v in args:  # a name or attribute passed is a value (always a load)
                    c = type(v)
                    if c is name_cls:
                        passed.append(v)
                        continue
                    if c is attribute:
                        passed.append(v)
                        v = v.value
                        c = type(v)
                        while c is attribute:
                            v = v.value
                            c = type(v)
                    elif c is starred:
                        fixed -= 1
                    if c not in skip:
                        push(v)
                calls.append((f, fixed, kws))
                for k in kws:
                    v = k.value
                    c = type(v)
                    if c is name_cls:
                        passed.append(v)
                        continue
                    if c is attribute:
                        passed.append(v)
                        v = v.value
                        c = type(v)
                        while c is attribute:
                            v = v.value
                            c = type(v)
                    if c not in skip:
                        push(v)
                continue
            if cls is assign:  # what _binding did for it, then targets, value
                v = n.value
                c = type(v)
                if c is name_cls or c is attribute:  # held_values (a value is always a load)
                    held.append(v)
                if c is call_cls:  # constructed(), chain_of inlined for `T()` and `m.T()`
                    f = v.func
                    c = type(f)
                    if c is name_cls:
                        t = (f.id,)
                    elif c is attribute and type(b := f.value) is name_cls:
                        t = (b.id, f.attr)
                    else:
                        t = chain_of(f)
                else:
                    t = None
                for x in n.targets:
                    c = type(x)
                    if c is name_cls:  # _target -> _bind, inlined
                        name = x.id
                        types[name] = t if types.get(name, t) == t else None
                        continue
                    if c is attribute:  # _target, inlined: `self.x = T()` in a method
                        b = x.value
                        c = type(b)
                        if t is not None and c is name_cls and b.id == me and owner is not None:
                            owner.attr_types.setdefault(x.attr, t)
                        while c is attribute:
                            b = b.value
                            c = type(b)
                        if c not in skip:
                            push(b)
                        continue
                    self._target(x, t)
                    if c not in skip:
                        push(x)
                c = type(v)
                while c is attribute:
                    v = v.value
                    c = type(v)
                if c not in skip:
                    push(v)
                continue
            if cls is compare or cls is binop:  # left, comparators / left, right
                v = n.left
                c = type(v)
                while c is attribute:
                    v = v.value
                    c = type(v)
                if c not in skip:
                    push(v)
                for v in n.comparators if cls is compare else (n.right,):
                    c = type(v)
                    while c is attribute:
                        v = v.value
                        c = type(v)
                    if c not in skip:
                        push(v)
                continue
            if cls is if_:  # test, body, orelse (statements are never leaves)
                v = n.test
                c = type(v)
                while c is attribute:
                    v = v.value
                    c = type(v)
                if c not in skip:
                    push(v)
                todo += n.body
                todo += n.orelse
                continue
            if cls is subscript:  # value, slice
                v = n.value
                c = type(v)
                while c is attribute:
                    v = v.value
                    c = type(v)
                if c not in skip:
                    push(v)
                v = n.slice
                c = type(v)
                while c is attribute:
                    v = v.value
                    c = type(v)
                if c not in skip:
                    push(v)
                continue
            if cls is tuple_ or cls is list_:  # held_values (loads only), then the elements
                keep = type(n.ctx) is load  # (the elements of a load are loads)
                for v in n.elts:
                    c = type(v)
                    if c is name_cls:
                        if keep:
                            held.append(v)
                        continue
                    if c is attribute:
                        if keep:
                            held.append(v)
                        v = v.value
                        c = type(v)
                        while c is attribute:
                            v = v.value
                            c = type(v)
                    if c not in skip:
                        push(v)
                continue
            if cls is assert_ or cls is unary:  # test, msg / operand
                v = n.test if cls is assert_ else n.operand
                c = type(v)
                while c is attribute:
                    v = v.value
                    c = type(v)
                if c not in skip:
                    push(v)
                if cls is assert_ and (v := n.msg) is not None:
                    c = type(v)
                    while c is attribute:
                        v = v.value
                        c = type(v)
                    if c not in skip:
                        push(v)
                continue
            if cls is boolop or cls is joined:  # values (an f-string's: constants, fields)
                for v in n.values:
                    c = type(v)
                    while c is attribute:
                        v = v.value
                        c = type(v)
                    if c not in skip:
                        push(v)
                continue
            tag, fields = plan[cls]
            if tag is _HOLDER:
                held += held_values(n)
            elif tag is _BINDER:
                self._binding(n, cls)
            for f in fields:
                v = getattr(n, f)
                if type(v) is list:
                    for x in v:
                        if x is not None and type(x) not in skip:
                            push(x)
                elif v is not None and type(v) not in skip:
                    push(v)
        # pass 2: the calls, through those local types (call_ref, held_values and, for a
        # dotted name of up to three parts, chain_of and _rewrite inlined)
        rewrite, out, by_name, refs = self._rewrite, self.d.calls, self.d.by_name, self.d.refs
        arg_of = _ARG
        me = me if owner is not None else None  # `self.x` rewritten to ("self", x)
        r: Chain | None
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

    def _binding(self, n: Any, cls: type) -> None:  # (scan reads Assign itself)
        if cls is ast.AnnAssign:
            self._target(n.target, simple_type(n.annotation) or constructed(n.value))
        elif cls in _LOOPS:
            self._target(n.target, None)
        elif cls is ast.withitem:
            if n.optional_vars is not None:
                self._target(n.optional_vars, None)
        elif cls in _DEFINES:
            self._bind(n.name, None)
        elif cls is ast.ExceptHandler:
            if n.name:
                self._bind(n.name, None)
        elif cls is ast.arg:  # a nested function's or lambda's parameter
            self._bind(n.arg, None)
        elif cls is ast.NamedExpr:
            self._target(n.target, constructed(n.value))

    def _target(self, tgt: ast.expr, t: Chain | None) -> None:
        if isinstance(tgt, ast.Name):
            self._bind(tgt.id, t)
        elif isinstance(tgt, ast.Tuple | ast.List):
            for e in tgt.elts:
                self._target(e, None)
        elif isinstance(tgt, ast.Starred):
            self._target(tgt.value, None)
        elif (isinstance(tgt, ast.Attribute) and isinstance(tgt.value, ast.Name)
              and tgt.value.id == self.self_name and self.cls is not None and t is not None):
            self.cls.attr_types.setdefault(tgt.attr, t)  # self.x = T(...) in a method

    def _rewrite(self, ch: Chain) -> Chain | None:
        head = ch[0]
        if head == self.self_name and self.cls is not None:
            return ("self", *ch[1:])
        if head in self.types:
            t = self.types[head]
            return None if t is None or len(ch) == 1 else (*t, *ch[1:])
        return ch


def constructed(value: ast.expr | None) -> Chain | None:
    """`T(...)` -> T (resolve keeps it only if T is a class); anything else -> None."""
    if isinstance(value, ast.Call):
        return chain_of(value.func)
    return None
