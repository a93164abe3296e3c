"""recon's body walk (plan07.evidence.body.Body.scan) reads its frequent node classes by hand (an
attribute child pushed as its base, an expression statement's or a return's value visited in
its place, an assignment bound inline) and a function's signature pieces once: each gives what
the plain class-table walk it replaced gives, in the same order (the order of the calls and
references is the facts' order, and `self.x = T()` keeps the first class), on tricky shapes and
on real code (standard library modules and plan07's own sources)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import plan07
from plan07.caps import FIELD_MAX_CHARS
from plan07.evidence import body as B
from plan07.evidence import parse
from plan07.evidence.callrefs import call_ref, constructed, held_values
from plan07.evidence.facts import Def
from plan07.evidence.parse import _blocks, _heads, _Walker
from plan07.evidence.render import unparse
from plan07.evidence.signatures import annotation, signature
from plan07.evidence.syntax import (
    SKIP,
    chain_of,
    clip,
    first_doc_line,
    simple_type,
    type_chains,
    walk,
)

SOURCES = [Path(m.__file__) for m in (ast, dataclasses, inspect, typing)] + sorted(
    (Path(plan07.__file__).parent / "evidence").glob("*.py"))

TRICKY = '''
class K:
    def m(self, a: int, b: "pkg.T", *xs: Optional[str], c: T | None = None, **kw) -> None:
        """Doc."""
        self.x = T()
        self.x = U()
        self.y: V = make()
        a.b.c
        a().b.c
        f(g(h(1)), *xs, key=k.v, **kw).m().n(self.p, q, w=self.r.s)
        return
    def n(this, v):
        return this.m(v).w.z(lambda q: q.f(), [i.j() for i in v if i.k()])
    @staticmethod
    def s(self, t=None):
        return self.u(t)
def free(p, q=1, /, r=2, *, s, t=3):
    x = y = C()
    x, (y, *z) = 1, (2, 3)
    x[f()] = g()
    a.b().c = d.e
    p.q = r
    handler = free
    table = {"a": free, **q, None: p.r, k(): w}
    items = [free, q.r, (s, t), {s, t}, *rest, a.b().c, [x.y for x in z]]
    self.a, [self.b, *c.d] = f(), g()
    [p.q] = r
    (u := W())
    if f() and g.h(i) or not j.k():
        pass
    elif x[1:k(), ::2] == (y < z.w() > v) != m(n):
        return a.b + c.d() - -e.f * g(h) @ i
    else:
        assert ok(), msg.format(p)
    for i, j in enumerate(z()):
        i.go(j)
    else:
        z.done()
    while t.more():
        break
    with open(p) as fh, lock:
        fh.read()
    try:
        risky()
    except (E, F) as err:
        err.log()
    finally:
        cleanup(f"{x!r:>{w()}}", *[a, b], **{"k": v})
    async def inner(a=d()):
        await a.wait()
        async for i in agen():
            yield i
        async with ctx() as c:
            return await c
    class Local:
        attr = f
    del x[0], y.z
    global G
    raise Err(x) from cause()
def chains():
    super().m()
    A(1).m()
    xs[0].m()
    (a or b).m()
    a.b.c.d()
    "s".join(x)
    a[b].c(d)[e]
    return x if y() else z.w
'''


class _Reference:
    """Body.scan as it was before the frequent classes were read by hand: every node through the
    class table, every holder kept for pass 2. It runs on a Body's own state and helpers (a
    wrapper, not a subclass: the installed Body may be compiled, and compiled classes take no
    interpreted subclasses)."""

    def __init__(self, d: Def, self_name: str | None, cls: Def | None) -> None:
        self._body = B.Body(d, self_name, cls)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._body, name)

    def scan(self, fn: Any, bound: dict[str, Any]) -> None:
        a = fn.args
        for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
            if p.arg != self.self_name:
                self._bind(p.arg, None if p.annotation is None else simple_type(p.annotation))
        calls: list[Any] = []
        holders: list[Any] = []
        todo: list[Any] = []
        for st in fn.body:
            todo.append(st)
            while todo:
                n = todo.pop()
                while isinstance(n, ast.Attribute):
                    n = n.value
                if n.__class__ in SKIP:
                    continue
                if isinstance(n, ast.Call):
                    calls.append(n)
                    kids = [n.func, *n.args, *[k.value for k in n.keywords]]
                else:
                    tag, fields = B._PLAN[n.__class__]
                    if tag == B._HOLDER:
                        holders.append(n)
                    elif isinstance(n, ast.Assign):
                        holders.append(n)
                        for tgt in n.targets:
                            self._target(tgt, constructed(n.value))
                    elif tag == B._BINDER:
                        self._binding(n, n.__class__)
                    kids = []
                    for f in fields:
                        v = getattr(n, f)
                        kids += v if isinstance(v, list) else [v]
                todo += [k for k in kids if k is not None and k.__class__ not in SKIP]
        d = self.d
        for c in calls:
            ch = chain_of(c.func)
            r = self._rewrite(ch) if ch else None
            if r is not None:
                d.calls.append(call_ref(c, r))
            elif isinstance(c.func, ast.Attribute) and (ch is None or len(ch) > 1):
                d.by_name.append(call_ref(c, (c.func.attr,)))
            for v in [*c.args, *[k.value for k in c.keywords]]:
                if (isinstance(v, ast.Name | ast.Attribute) and isinstance(v.ctx, ast.Load)
                        and (ch := chain_of(v)) and (r := self._rewrite(ch)) is not None):
                    d.refs.append(r)
        for h in holders:
            for v in held_values(h):
                if (ch := chain_of(v)) and (r := self._rewrite(ch)) is not None:
                    d.refs.append(r)


def _functions(tree: ast.AST) -> Iterator[tuple[Any, str | None]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            yield node, (a.posonlyargs + a.args)[0].arg if a.posonlyargs + a.args else None


def _bound(fn: Any) -> dict[str, Any]:
    """Each parameter's simple_type, as `Body._bind` binds them (two types: None)."""
    a = fn.args
    bound: dict[str, Any] = {}
    for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
        t = None if p.annotation is None else simple_type(p.annotation)
        bound[p.arg] = t if bound.get(p.arg, t) == t else None
    return bound


def _scan(kind: type[B.Body | _Reference], fn: Any, self_name: str | None
          ) -> tuple[Any, ...]:
    d, cls = Def("f", "method", 1, "", ""), Def("K", "class", 1, "", "")
    body = kind(d, self_name, cls)
    body.scan(fn, _bound(fn))
    return d.calls, d.by_name, d.refs, list(body.types.items()), list(cls.attr_types.items())


def _trees() -> Iterator[ast.Module]:
    yield ast.parse(TRICKY)
    for p in SOURCES:
        yield ast.parse(p.read_text("utf-8"))


def test_scan_equals_the_class_table_walk() -> None:
    seen = calls = 0
    for tree in _trees():
        for fn, self_name in _functions(tree):
            for name in (self_name, None):  # as a method and as a plain function
                got = _scan(B.Body, fn, name)
                assert got == _scan(_Reference, fn, name), (fn.name, fn.lineno)
                calls += len(got[0]) + len(got[1])
            seen += 1
    assert seen > 600, seen
    assert calls > 4000, calls


def test_scan_on_tricky_shapes_reads_what_a_reader_sees() -> None:
    fns = {fn.name: (fn, s) for fn, s in _functions(ast.parse(TRICKY))}
    calls, by_name, refs, types, attrs = _scan(B.Body, *fns["m"])
    assert dict(attrs) == {"x": ("T",), "y": ("V",)}  # the first class assigned is kept
    assert (("f", "m", "n"), 2, ("w",)) in calls  # `f(...).m().n(...)`: f's class's m's n
    assert (("f",), 1, ("key", "**")) in calls  # `*xs` is no fixed positional
    assert ("self", "p") in refs
    assert ("k", "v") in refs
    calls, by_name, refs, types, attrs = _scan(B.Body, *fns["free"])
    assert dict(types)["x"] is None
    assert dict(types)["u"] == ("W",)
    assert ("free",) in refs
    assert ("d", "e") in refs
    assert ("q", "r") not in refs  # q is a local of unknown type: not a reference
    assert {c[0] for c in calls} >= {("risky",), ("cleanup",), ("ok",), ("enumerate",), ("g",)}
    assert ("z",) not in {c[0] for c in calls}  # z is a local (bound by `x, (y, *z) = ...`)


def _annotations(tree: ast.AST) -> Iterator[ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            yield node.annotation
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            yield node.returns


SHAPES = ["Foo", "'Foo'", "u'Foo'", "'a.b'", "a.b", "Optional['X']", "X | None", "None | X",
          "(X | Y) | Z", "X | (Y | Z)", "typing.Optional[a.B]", "Literal['x']", "'X | None'",
          "1", "b'x'", "...", "'not valid ('", "A[B, C][D]", "A[(B, C)]", "f(x).y", "'A' | 'B'"]


def test_an_annotations_text_decides_its_chains_and_class() -> None:
    """`signatures.annotation` remembers type_chains and simple_type by the rendered text: sound
    only if no two annotations spelled alike read differently."""
    seen: dict[str, tuple[Any, Any]] = {}
    anns = [ast.parse(t, mode="eval").body for t in SHAPES]
    for tree in _trees():
        anns += _annotations(tree)
    for ann in anns:
        text = unparse(ann)
        got = (type_chains(ann), simple_type(ann))
        assert seen.setdefault(text, got) == got, text
        assert annotation(ann) == (text, *got), text
        assert annotation(ann) == (text, *got), text  # remembered
    assert len(anns) > 400


def _old_signature(node: Any) -> tuple[Any, ...]:
    """parse.function's signature pieces as they were read before signatures.signature: the
    annotations in a dict by parameter, then rendered by a second pass over ast.arguments."""
    a = node.args
    named = a.posonlyargs + a.args + a.kwonlyargs
    every = named + [x for x in (a.vararg, a.kwarg) if x]
    texts: dict[ast.arg, str] = {}
    chains: list[Any] = []
    for p in every:
        if p.annotation is not None:
            texts[p], more, _ = annotation(p.annotation)
            chains += more
    returns, ret = "", None
    if node.returns is not None:
        returns, more, ret = annotation(node.returns)
        chains += more

    def one(p: ast.arg, default: Any, star: str = "") -> str:
        ann = texts.get(p)
        if ann is None:
            return star + p.arg if default is None else f"{star}{p.arg}={unparse(default)}"
        text = f"{star}{p.arg}: {ann}"
        return text if default is None else f"{text} = {unparse(default)}"

    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
    out = [one(p, d) for p, d in zip(positional, defaults, strict=True)]
    if a.posonlyargs:
        out.insert(len(a.posonlyargs), "/")
    if a.vararg:
        out.append(one(a.vararg, None, "*"))
    elif a.kwonlyargs:
        out.append("*")
    out += [one(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    if a.kwarg:
        out.append(one(a.kwarg, None, "**"))
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    text = clip(f"{prefix} {node.name}({', '.join(out)})" + (f" -> {returns}" if returns else ""))
    n_defaults = len(a.defaults) + sum(x is not None for x in a.kw_defaults)
    return text, _bound(node), chains, ret, [p.arg for p in named], n_defaults


SIGNATURES = '''
def f(): pass
def f(a, /): pass
def f(a, b=1, /, c=2, *d: int, e, f: "T" = 3, **g: Optional[U]) -> "pkg.R": pass
def f(a: int = 1, *, b, c: X | None = None) -> None: pass
def f(*, a=[1, (2,)], **k): pass
def f(*a, **k): pass
async def f(self, x: A[B, C] = {}, y=lambda q: q, *z: "str") -> A | B: pass
def f(a, b, /, *, c): pass
def f(a: int, a: str, b: T, b: T, *a: U): pass
def f(x='a  b', y='\\t', z=' ', w=f'{a}\\n') -> 'A  B': pass
def é(ü: 'ß  x' = 'ö', v: 'a\\x0cb' = b'  ') -> u'x': pass
def f(x=1e999, y=-1e999, z=-0.0, v=lambda:  0, w=('a',), u={1: [2, ()]}, t=g(*a, k=1)): pass
'''
SIGNATURES += "def f(" + ", ".join(f"a{i}: int = {i}" for i in range(60)) + "): pass\n"  # clipped


def test_signature_reads_what_the_two_pass_rendering_read() -> None:
    seen = 0
    trees = [ast.parse(SIGNATURES), *_trees()]
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert signature(node) == _old_signature(node), (node.name, node.lineno)
                seen += 1
    assert seen > 600, seen


def _old_clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= FIELD_MAX_CHARS else text[: FIELD_MAX_CHARS - 1] + "…"


def _old_first_doc_line(node: Any) -> str:
    body = node.body
    if not body or not isinstance(body[0], ast.Expr):
        return ""
    value = body[0].value
    if not isinstance(value, ast.Constant) or not isinstance(value.value, str):
        return ""
    doc = value.value.strip()
    return _old_clip(doc.splitlines()[0]) if doc else ""


BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
SPACES = [" ", "  ", "\t", "\xa0", "\u2003", "\u3000", "\x1f", ""]


def test_clip_and_first_doc_line_equal_the_split_they_skip() -> None:
    texts = ["", "x", "def f(a: int = 1) -> None", "é ü", "x" * (FIELD_MAX_CHARS + 5)]
    texts += [f"{a}word{b}more{c}" for a in SPACES for b in SPACES + BREAKS for c in SPACES]
    texts += [f"{a}first{b}second{c}third" for a in SPACES + BREAKS for b in BREAKS
              for c in BREAKS + SPACES]
    for text in texts:
        assert clip(text) == _old_clip(text), repr(text)
        node = ast.Module(body=[ast.Expr(ast.Constant(text))], type_ignores=[])
        assert first_doc_line(node) == _old_first_doc_line(node), repr(text)
    for tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                assert first_doc_line(node) == _old_first_doc_line(node)


MODULE_TRICKY = '''
"""Doc."""
import a.b
from c import d as e
console = Console()
console = Console()
mixed = A()
mixed = B()
x, y = pair()
self.attr = f
handlers = {"a": on_a, "b": pkg.on_b, **extra}
register(on_c, key=pkg.mod.on_d)
items[0].go()
(a or b).go()
A(1).m.n(2)
total: int = compute()
count += step()
for k in keys():
    use(k)
while more():
    pass
global g
if cond():
    flag = Flag()
elif other.check():
    pass
try:
    import z
except E:
    z = None
with open("f") as fh, lock():
    data = fh.read()
class K(Base, metaclass=Meta):
    field: Optional[T] = None
    other = T()
    alias = helper
    calls = [make(1), pkg.make(2)]
    def m(self):
        return self.other.go()
'''


class _OldWalker(_Walker):
    """_Walker's statement-level reads as they were (walk(), isinstance)."""

    def body(self, stmts: list[Any], *, prefix: str, cls: Def | None) -> None:
        for st in stmts:
            if isinstance(st, ast.ClassDef):
                self.klass(st, prefix=prefix, outer=cls)
            elif isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef):
                self.function(st, prefix=prefix, cls=cls)
            elif isinstance(st, ast.If | ast.Try | ast.With | ast.AsyncWith):
                for block in _blocks(st):
                    self.body(block, prefix=prefix, cls=cls)
                if isinstance(st, ast.If | ast.With | ast.AsyncWith):
                    self._stmt_calls(_heads(st), cls)
            else:
                self._stmt_calls([st], cls)
                if cls is not None and isinstance(st, ast.AnnAssign):
                    cls.annotations += type_chains(st.annotation)
                self._old_variables(st, cls)

    def _old_variables(self, st: ast.stmt, cls: Def | None) -> None:
        pairs: list[tuple[ast.expr, Any]] = []
        if isinstance(st, ast.Assign):
            pairs = [(t, constructed(st.value)) for t in st.targets]
        elif isinstance(st, ast.AnnAssign):
            pairs = [(st.target, simple_type(st.annotation) or constructed(st.value))]
        elif isinstance(st, ast.AugAssign | ast.For | ast.AsyncFor):
            pairs = [(st.target, None)]
        for target, t in pairs:
            names = [target] if isinstance(target, ast.Name) else [
                e for e in walk(target, ast.Name) if isinstance(e, ast.Name)]
            for name in names:
                held = t if name is target else None
                if cls is not None:
                    if held is not None:
                        cls.attr_types.setdefault(name.id, held)
                    continue
                known = self.mf.var_types
                known[name.id] = held if known.get(name.id, held) == held else None

    def _stmt_calls(self, nodes: list[ast.AST], cls: Def | None) -> None:
        sink = cls.calls if cls is not None else self.mf.top_calls
        by_name = cls.by_name if cls is not None else self.mf.top_by_name
        refs = cls.refs if cls is not None else self.mf.top_refs
        for n in nodes:
            for x in walk(n, (ast.Call, ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Assign)):
                if isinstance(x, ast.Call):
                    if ch := chain_of(x.func):
                        sink.append(call_ref(x, ch))
                    elif isinstance(x.func, ast.Attribute):
                        by_name.append(call_ref(x, (x.func.attr,)))
                for v in held_values(x):
                    if ch := chain_of(v):
                        refs.append(ch)


def test_module_and_class_level_reads_equal_the_walk_they_replaced(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sources = [MODULE_TRICKY, TRICKY] + [p.read_text("utf-8") for p in SOURCES]
    for source in sources:
        got = parse.parse_module(source, "pkg/mod.py")
        with monkeypatch.context() as m:
            m.setattr(parse, "_Walker", _OldWalker)
            want = parse.parse_module(source, "pkg/mod.py")
        assert got == want
    mf = parse.parse_module(MODULE_TRICKY, "pkg/mod.py")
    assert mf.var_types["console"] == ("Console",)
    assert mf.var_types["mixed"] is None
    assert ("register",) in [c[0] for c in mf.top_calls]
    assert ("pkg", "mod", "on_d") in mf.top_refs
    assert ("go",) in [c[0] for c in mf.top_by_name]
