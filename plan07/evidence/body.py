"""The calls, values and local types of one function body, read from its `ast` in one walk (the
inner loop of recon's parse; the calls recorded by plan07.evidence.callrefs). Pure: used by
plan07.evidence.parse.
"""

from __future__ import annotations

import ast
from typing import Any

from plan07.evidence.callrefs import constructed, held_values, record_calls
from plan07.evidence.facts import Chain, Def
from plan07.evidence.syntax import SKIP, Scope, chain_of, children, simple_type

_STARRED = ast.Starred

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
        # pass 2: the calls, through those local types
        record_calls(self.d, calls, passed, held, types, me if owner is not None else None,
                     self._rewrite)

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
