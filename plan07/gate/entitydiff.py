"""An edit read at the entity level (CodePlan's change classification, griffe's breakage rules):
the definitions of one Python module before and after, matched by qualified name, each change
classified as `compatible` (every old call still binds), `breaking` (some old call cannot bind,
and its caller needs the new form: a definition renamed, a parameter renamed, moved or made
required), `narrowing` (some old call cannot bind, and every such caller can be rewritten first,
against the old form: a definition removed, an optional parameter or a `*args`/`**kwargs`
removed, a parameter turned keyword-only or positional-only, an attribute a class stops
setting) or `behaviour` (the interface kept, the body or a default changed). A definition's
parameters and what a change to them breaks are plan07.gate.params'; whether a caller still
binds is plan07.gate.callsites'. Pure: sources in, changes out (docs/rules.md "Observed
changes")."""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from plan07.gate.params import POS, Param, call_params, only_narrows, signature_breaks, unparse

_DATACLASS = ("dataclass", "dataclasses.dataclass", "attr.s", "attrs.define", "attr.define",
              "define", "frozen", "attrs.frozen", "mutable")


@dataclass(frozen=True)
class Definition:
    """One function, method or class of a module: its call-visible parameters (a method's
    `self`/`cls` left out; a class's are its `__init__`'s, or its dataclass fields; None when
    unknown), the hash of its body, its return annotation.

    Read lazily off its `node`: a definition whose source `text` (decorators included) is the
    same before and after is not read any further (most of a module, on a real edit)."""

    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef = field(compare=False)
    text: str  # its source lines, decorators included
    in_class: bool = False
    has_init: bool = False  # a class with its own __init__ (a method of its own)

    @cached_property
    def decorators(self) -> list[str]:
        return decorator_names(self.node)

    @cached_property
    def kind(self) -> str:  # function | method | class | property
        if isinstance(self.node, ast.ClassDef):
            return "class"
        if "property" in self.decorators or any(
                d.endswith((".setter", ".getter", ".deleter")) for d in self.decorators):
            return "property"
        return "method" if self.in_class else "function"

    @cached_property
    def params(self) -> tuple[Param, ...] | None:
        n = self.node
        if isinstance(n, ast.ClassDef):
            # the constructor: an explicit __init__ is a method of its own (a change to it is
            # reported there); a dataclass's or NamedTuple's is made of its fields
            if not self.has_init and (any(d in _DATACLASS for d in self.decorators) or any(
                    unparse(b).endswith("NamedTuple") for b in n.bases)):
                return _fields(n.body)
            return None
        if self.kind == "property":
            return None
        return call_params(n.args,
                           drop_first=self.in_class and "staticmethod" not in self.decorators)

    @cached_property
    def body(self) -> str:
        n = self.node
        if isinstance(n, ast.ClassDef):
            return _digest([s for s in n.body if not isinstance(
                s, ast.FunctionDef | ast.AsyncFunctionDef)])
        return _digest(n.body)

    @cached_property
    def returns(self) -> str:
        return "" if isinstance(self.node, ast.ClassDef) else unparse(self.node.returns)

    @cached_property
    def state(self) -> frozenset[str]:
        """A class's field shape: the attribute paths its own methods assign on the instance
        (`self.cli = ...` -> `cli`, `self.cli.name = ...` -> `cli.name`) and the names its body
        assigns (class attributes); empty for a function."""
        n = self.node
        return _state(n) if isinstance(n, ast.ClassDef) else frozenset()


@dataclass(frozen=True)
class Change:
    qualname: str
    kind: str  # compatible | breaking | behaviour
    what: str
    old: tuple[Param, ...] | None = None  # the call-visible parameters before and after, when
    new: tuple[Param, ...] | None = None  # a signature changed (call sites are checked on them)
    fields: tuple[str, ...] = ()  # the instance attribute paths a class no longer sets



def _digest(nodes: list[ast.stmt]) -> str:
    body = nodes
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # a docstring changes no behaviour
    body = [n for n in body if not isinstance(n, ast.Pass) and not (
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        and n.value.value is Ellipsis)]  # `pass` and `...` do nothing
    text = "\n".join(ast.dump(n, include_attributes=False) for n in body)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[str]:
    out = []
    for d in node.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        out.append(unparse(d))
    return out


def _fields(body: list[ast.stmt]) -> tuple[Param, ...]:
    """A dataclass's (or NamedTuple's, attrs class's) constructor: its annotated fields in order,
    `ClassVar`s and `field(init=False)` left out."""
    out = []
    for n in body:
        if not (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)):
            continue
        if "ClassVar" in unparse(n.annotation):
            continue
        v = n.value
        if isinstance(v, ast.Call) and any(k.arg == "init" and unparse(k.value) == "False"
                                           for k in v.keywords):
            continue
        out.append(Param(n.target.id, POS, unparse(v) if v is not None else None))
    return tuple(out)


def _path(node: ast.expr, me: str) -> str | None:
    """`self.a.b` -> `a.b` (`me`: the method's first parameter); None for anything else."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return ".".join(reversed(names)) if names and isinstance(node, ast.Name) \
        and node.id == me else None


def _targets(n: ast.AST) -> list[ast.expr]:
    if isinstance(n, ast.Assign):
        out: list[ast.expr] = []
        for t in n.targets:
            out += t.elts if isinstance(t, ast.Tuple | ast.List) else [t]
        return out
    if isinstance(n, ast.AnnAssign) and n.value is not None:
        return [n.target]
    return []


def _state(cls: ast.ClassDef) -> frozenset[str]:
    """The field shape of class `cls` (Definition.state)."""
    out: set[str] = set()
    for n in cls.body:
        out.update(t.id for t in _targets(n) if isinstance(t, ast.Name))
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) or not n.args.args or \
                "staticmethod" in decorator_names(n) or "classmethod" in decorator_names(n):
            continue
        me = n.args.args[0].arg
        for m in _statements(n.body):
            out.update(p for t in _targets(m) if (p := _path(t, me)))
    return frozenset(out)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of `body` and of the blocks inside it (nested definitions included):
    where an assignment can stand, without walking each expression as `ast.walk` does."""
    todo = list(body)
    while todo:
        n = todo.pop()
        yield n
        for name in ("body", "orelse", "finalbody"):
            block = getattr(n, name, None)
            if isinstance(block, list):
                todo += block
        for h in [*getattr(n, "handlers", ()), *getattr(n, "cases", ())]:
            todo += h.body


def unset_fields(source: str, qualname: str, fields: tuple[str, ...]) -> list[str] | None:
    """Of `fields` (instance attribute paths), those class `qualname` of `source` does not set
    itself (a path counts as set when it or a path above it is assigned: `self.cli = ...` sets
    `cli.name`); None when the class is not found or the source does not parse."""
    d = definitions(source).get(qualname)
    if d is None or d.kind != "class":
        return None
    return [f for f in fields if not any(
        f == s or f.startswith(s + ".") for s in d.state)]


_EMPTY = _digest([])  # a body of `pass`, `...` or a docstring alone: no rename is read off it


@lru_cache(maxsize=32)
def parsed(source: str) -> ast.Module | None:
    """`source` parsed, once per text (a module's callers are read from one parse); None when it
    does not parse. The tree is shared: never changed by its readers."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def definitions(source: str) -> dict[str, Definition]:
    """Every function, method and class of a module by qualified name (a definition made twice,
    in `if`/`try` branches, keeps the last). {} when the source does not parse."""
    tree = parsed(source)
    if tree is None:
        return {}
    lines = source.splitlines()
    out: dict[str, Definition] = {}

    def text(n: ast.stmt) -> str:
        first = min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))])
        return "\n".join(lines[first - 1:n.end_lineno])

    def walk(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        for n in body:
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                out[prefix + n.name] = Definition(prefix + n.name, n, text(n), in_class)
            elif isinstance(n, ast.ClassDef):
                name = prefix + n.name
                walk(n.body, name + ".", True)
                out[name] = Definition(name, n, text(n), in_class,
                                       has_init=name + ".__init__" in out)
            elif isinstance(n, ast.If | ast.Try):
                for block in (n.body, n.orelse, getattr(n, "finalbody", [])):
                    walk(block, prefix, in_class)
                for h in getattr(n, "handlers", []):
                    walk(h.body, prefix, in_class)

    walk(tree.body, "", False)
    return out


def classify(old: Definition | None, new: Definition | None, qualname: str) -> Change | None:
    """The change of one definition from `old` to `new` (either may be None); None when it did
    not change."""
    if old is None and new is None:
        return None
    if old is None:
        assert new is not None
        return Change(qualname, "compatible", f"adds {new.kind} {qualname}")
    if new is None:  # its callers can stop calling it before it goes
        return Change(qualname, "narrowing", f"removes {old.kind} {qualname}")
    if old.text == new.text:
        return None  # the same source, decorators included: nothing in it changed
    if old.kind != new.kind and "property" in (old.kind, new.kind):
        return Change(qualname, "breaking", f"turns {old.kind} {qualname} into a {new.kind}")
    if old.params is not None and new.params is not None and old.params != new.params:
        breaks = signature_breaks(old.params, new.params)
        if breaks:
            kind = "narrowing" if only_narrows(old.params, new.params) else "breaking"
            return Change(qualname, kind, f"{qualname}: {'; '.join(breaks)}", old.params,
                          new.params)
        added = [p.name for p in new.params if p.name not in {q.name for q in old.params}]
        defaults = [p.name for p in new.params for q in old.params
                    if p.name == q.name and p.default != q.default and p.default is not None
                    and q.default is not None]
        if added:
            return Change(qualname, "compatible", f"{qualname}: adds optional parameter(s) "
                          f"{', '.join(added)}, keeping the old form")
        if defaults:
            return Change(qualname, "behaviour", f"{qualname}: changes the default of "
                          f"{', '.join(defaults)}")
        return Change(qualname, "compatible", f"{qualname}: widens its parameters")
    if old.returns != new.returns:
        return Change(qualname, "behaviour", f"{qualname}: changes its return annotation "
                      f"({old.returns or 'none'} -> {new.returns or 'none'})")
    if old.body != new.body:
        return Change(qualname, "behaviour", f"changes the body of {qualname}")
    return None


def _assigned(text: str) -> set[str]:
    """The assignment targets `text` writes, as text (what stands before a line's first `=`
    when no `#` comes first and no `=` follows it: `self.cli.name =`, `a, b: int =`; a
    comparison's left side too, on both sides alike): every path Definition.state reads is
    written in one of them, so a class whose old targets all remain kept its field shape.
    A scan of each line, not a pattern: a lazy pattern anchored at every line backtracks
    over the indentation of every line that is no assignment."""
    out = set()
    for line in text.split("\n"):
        i = line.find("=")
        if i > 0 and not line.startswith("=", i + 1) and line.find("#", 0, i) < 0:
            out.add(" ".join(line[:i].split()))
    return out


def _parses(source: str | None) -> bool:
    return source is None or parsed(source) is not None  # None: the file was added or deleted


def diff_module(old_source: str | None, new_source: str | None) -> list[Change]:
    """Every changed definition of one module, old -> new (None: the file did not exist), in
    source order of the old module then the new; a definition renamed (removed, and one of the
    same kind and body added) is one breaking change under its old name. A change inside a
    definition is reported on the definition, not again on the class around it."""
    if not (_parses(old_source) and _parses(new_source)):
        return []  # a side that does not parse says nothing of its definitions (the build check
        # will fail on it): no removal is read off a syntax error
    old = definitions(old_source) if old_source is not None else {}
    new = definitions(new_source) if new_source is not None else {}
    removed = [q for q in old if q not in new]
    added = [q for q in new if q not in old]
    renamed: dict[str, str] = {}
    for q in removed:
        same = [a for a in added if new[a].kind == old[q].kind and new[a].body == old[q].body
                and new[a].body != _EMPTY and new[a].params == old[q].params
                and a.rpartition(".")[0] == q.rpartition(".")[0] and a not in renamed.values()]
        if len(same) == 1:
            renamed[q] = same[0]
    out: list[Change] = []
    for q in old:
        if q in renamed:
            out.append(Change(q, "breaking", f"renames {old[q].kind} {q} to "
                              f"{renamed[q].rpartition('.')[2]}"))
            continue
        c = classify(old[q], new.get(q), q)
        if c is not None:
            out.append(c)
    out += [c for a in added if a not in renamed.values()
            if (c := classify(None, new[a], a)) is not None]
    # a class that no longer sets an attribute on its instances: a field shape narrowed (an
    # instance of it, or of a subclass that does not set it itself, lacks it); read only where
    # the class's source changed
    for q in old:
        o, n = old[q], new.get(q)
        if n is None or o.kind != "class" or n.kind != "class" or o.text == n.text or \
                _assigned(o.text) <= _assigned(n.text):
            continue  # no assignment's target left the class's text: its shape kept
        gone = sorted(o.state - n.state)
        gone = [f for f in gone if not any(f.startswith(g + ".") for g in gone)]
        if gone:
            # its subclasses can set it themselves before it stops
            out.append(Change(q, "narrowing", f"{q} no longer sets "
                              f"{', '.join('.' + f for f in gone)} on its instances",
                              fields=tuple(gone)))
    # a class's own line counts only for its constructor or its class-level body: a method's
    # change is the method's
    touched = {c.qualname for c in out}
    return [c for c in out if not (c.kind == "behaviour" and any(
        t.startswith(c.qualname + ".") for t in touched))]
