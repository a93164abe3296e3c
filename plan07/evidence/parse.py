"""Read one Python module into ModuleFacts with the standard `ast` module. Pure: source in, facts
out (a file that does not parse raises SyntaxError; the caller reports it and moves on).

Only the signature line of a definition is kept (rendered from the AST), never its body.
"""

from __future__ import annotations

import ast
import posixpath
from typing import Any

from plan07.evidence.facts import CallRef, Chain, Def, ModuleFacts
from plan07.evidence.syntax import (
    CHILDREN,
    SKIP,
    Scope,
    chain_of,
    children,
    class_signature,
    first_doc_line,
    func_signature,
    simple_type,
    statements,
    type_chains,
    walk,
)

# Class markers recognised at parse time; resolve also follows in-repo inheritance.
STRUCT_BASES = {"BaseModel", "TypedDict", "NamedTuple", "BaseSettings", "Schema"}
STRUCT_DECORATORS = {"dataclass", "define", "frozen", "mutable", "s", "attrs", "dataclasses"}
DJANGO_OPS = {
    "CreateModel", "DeleteModel", "AddField", "AlterField", "RemoveField", "RenameField",
    "RenameModel", "AlterModelOptions", "AddIndex", "RemoveIndex", "AddConstraint",
    "AlterUniqueTogether", "AlterIndexTogether", "AlterModelTable",
}


def _call_ref(call: ast.Call, chain: Chain) -> CallRef:
    args, kws = call.args, call.keywords
    n = len(args)
    for a in args:
        if a.__class__ is _STARRED:  # `f(*xs)` passes no fixed number of positionals
            n -= 1
    return CallRef(chain, n, tuple([k.arg or "**" for k in kws]) if kws else ())


_STARRED = ast.Starred


def module_name(file: str) -> tuple[str, bool]:
    """`pkg/auth.py` -> ("pkg.auth", False); `pkg/__init__.py` -> ("pkg", True); a leading
    `src/` is a source root, not a package."""
    parts = file[:-3].split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts) or "__init__", is_package


def is_test_file(file: str) -> bool:
    """pytest's default patterns, and Django's `tests.py` (`app/tests.py`, `tests/x/tests.py`)."""
    base = posixpath.basename(file)
    return base.startswith("test_") or base.endswith("_test.py") or base == "tests.py"


def _is_test_class(node: ast.ClassDef) -> bool:
    """pytest's `Test*`, and unittest/Django classes: a base named `*TestCase` (`TestCase`,
    `SimpleTestCase`, `unittest.TestCase` ...) or a `*Tests`/`*Test` name (Django's style)."""
    if node.name.startswith("Test") or node.name.endswith(("Tests", "Test", "TestCase")):
        return True
    return any((c := chain_of(b)) and c[-1].endswith("TestCase") for b in node.bases)


def parse_module(source: str, file: str) -> ModuleFacts:
    """The facts of one module; raises SyntaxError (or ValueError on NUL bytes) if it does not
    parse."""
    tree = ast.parse(source, filename=file)
    name, is_package = module_name(file)
    mf = ModuleFacts(name=name, file=file, is_package=is_package, is_test_file=is_test_file(file))
    mf.doc = first_doc_line(tree)
    _imports(tree, mf)
    dirs = file.split("/")[:-1]
    if "migrations" in dirs and not is_package:
        mf.kind = "migration"  # Django: <app>/migrations/0002_x.py
        mf.migration_models = _django_models(tree)
    elif "versions" in dirs and "def upgrade" in source and "revision" in source:
        mf.kind = "migration"  # Alembic: <env>/versions/<rev>_x.py
    _Walker(mf).body(tree.body, prefix="", cls=None)
    return mf


def _imports(tree: ast.Module, mf: ModuleFacts) -> None:
    package = mf.name if mf.is_package else mf.name.rpartition(".")[0]
    for node in statements(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                mf.imports.append(a.name)
                if a.asname:
                    mf.bindings[a.asname] = a.name
                else:
                    head = a.name.split(".")[0]
                    mf.bindings.setdefault(head, head)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".") if package else []
                pkg = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                base = ".".join(pkg + ([node.module] if node.module else []))
            for a in node.names:
                if a.name == "*":
                    mf.imports.append(base)
                    continue
                target = f"{base}.{a.name}" if base else a.name
                mf.imports.append(target)
                mf.bindings[a.asname or a.name] = target


def _django_models(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in walk(tree, ast.Call):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)):
            continue
        op = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        if op not in DJANGO_OPS:
            continue
        for kw in node.keywords:
            key_ok = kw.arg == "model_name" or (kw.arg == "name" and op.endswith("Model"))
            if key_ok and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                names.append(kw.value.value)
    return sorted(set(names))


class _Walker:
    """Collects the definitions of a module body, recursing into classes (not function bodies)."""

    def __init__(self, mf: ModuleFacts) -> None:
        self.mf = mf

    def body(self, stmts: list[ast.stmt], *, prefix: str, cls: Def | None) -> None:
        for st in stmts:
            if isinstance(st, ast.ClassDef):
                self.klass(st, prefix=prefix, outer=cls)
            elif isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef):
                self.function(st, prefix=prefix, cls=cls)
            elif isinstance(st, ast.If | ast.Try | ast.With | ast.AsyncWith):
                # conditionally defined names are still definitions of this scope
                for block in _blocks(st):
                    self.body(block, prefix=prefix, cls=cls)
                if isinstance(st, ast.If | ast.With | ast.AsyncWith):
                    self._stmt_calls(_heads(st), cls)
            else:
                self._stmt_calls([st], cls)
                if cls is not None and isinstance(st, ast.AnnAssign):
                    cls.annotations += type_chains(st.annotation)
                self._variables(st, cls)

    def _variables(self, st: ast.stmt, cls: Def | None) -> None:
        """`x = Cls(...)` / `x: Cls` at module or class level: what x holds, when it is one
        thing (a module-level singleton such as `console = Console()`)."""
        pairs: list[tuple[ast.expr, Chain | None]] = []
        if isinstance(st, ast.Assign):
            pairs = [(t, _constructed(st.value)) for t in st.targets]
        elif isinstance(st, ast.AnnAssign):
            pairs = [(st.target, simple_type(st.annotation) or _constructed(st.value))]
        elif isinstance(st, ast.AugAssign | ast.For | ast.AsyncFor):
            pairs = [(st.target, None)]
        for target, t in pairs:
            names = [target] if isinstance(target, ast.Name) else [
                e for e in walk(target, ast.Name) if isinstance(e, ast.Name)]
            for name in names:
                held = t if name is target else None
                assert isinstance(name, ast.Name)
                if cls is not None:
                    if held is not None:
                        cls.attr_types.setdefault(name.id, held)
                    continue
                known = self.mf.var_types
                known[name.id] = held if known.get(name.id, held) == held else None

    def _stmt_calls(self, nodes: list[ast.AST], cls: Def | None) -> None:
        """Calls and values at module or class level; an unresolved call is judged by resolve
        (these scopes have no local types), a receiver that is no dotted name is by-name here."""
        sink = cls.calls if cls is not None else self.mf.top_calls
        by_name = cls.by_name if cls is not None else self.mf.top_by_name
        refs = cls.refs if cls is not None else self.mf.top_refs
        for n in nodes:
            for x in walk(n, _VALUE_HOLDERS):
                if isinstance(x, ast.Call):
                    if ch := chain_of(x.func):
                        sink.append(_call_ref(x, ch))
                    elif isinstance(x.func, ast.Attribute):  # `xs[0].m()`, `(a or b).m()`
                        by_name.append(_call_ref(x, (x.func.attr,)))
                for v in _values(x):
                    if ch := chain_of(v):
                        refs.append(ch)

    def klass(self, node: ast.ClassDef, *, prefix: str, outer: Def | None) -> None:
        qual = f"{prefix}{node.name}"
        bases = [c for b in node.bases if (c := chain_of(b))]
        decos = [c for d in node.decorator_list if (c := chain_of(_deco(d)))]
        struct = any(b[-1] in STRUCT_BASES for b in bases) or any(
            d[-1] in STRUCT_DECORATORS or d[0] in {"attr", "attrs"} for d in decos)
        test = self.mf.is_test_file and _is_test_class(node) and outer is None
        d = Def(qual, "test" if test else "class", node.lineno, "", first_doc_line(node),
                bases=bases, decorators=decos, structured=struct)
        _decorator_calls(node, d)
        self.mf.defs.append(d)
        self.body(node.body, prefix=qual + ".", cls=d)
        d.signature = class_signature(node, fields=False)
        d.field_signature = class_signature(node, fields=True)
        if d.field_signature == d.signature:
            d.field_signature = ""
        fields = [s for s in node.body if isinstance(s, ast.AnnAssign)]
        d.params = [f.target.id for f in fields if isinstance(f.target, ast.Name)]
        d.field_defaults = sum(f.value is not None for f in fields)

    def function(self, node: Scope, *, prefix: str, cls: Def | None) -> None:
        decos = [c for x in node.decorator_list if (c := chain_of(_deco(x)))]
        method = cls is not None
        test = self.mf.is_test_file and node.name.startswith("test") and (
            cls is None or cls.kind == "test")
        kind = "test" if test else ("method" if method else "function")
        a = node.args
        params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
        d = Def(f"{prefix}{node.name}", kind, node.lineno, func_signature(node),
                first_doc_line(node), decorators=decos, params=params,
                defaults=len(a.defaults) + sum(x is not None for x in a.kw_defaults))
        _decorator_calls(node, d)
        for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
            d.annotations += type_chains(p.annotation)
        d.annotations += type_chains(node.returns)
        d.returns = simple_type(node.returns)
        static = any(x[-1] == "staticmethod" for x in decos)
        self_name = params[0] if method and params and not static else None
        _Body(d, self_name, cls).scan(node)
        self.mf.defs.append(d)


def _blocks(st: ast.If | ast.Try | ast.With | ast.AsyncWith) -> list[list[ast.stmt]]:
    if isinstance(st, ast.If):
        return [st.body, st.orelse]
    if isinstance(st, ast.Try):
        return [st.body, *(h.body for h in st.handlers), st.orelse, st.finalbody]
    return [st.body]


def _heads(st: ast.If | ast.With | ast.AsyncWith) -> list[ast.AST]:
    if isinstance(st, ast.If):
        return [st.test]
    return [i.context_expr for i in st.items]


def _deco(d: ast.expr) -> ast.expr:
    return d.func if isinstance(d, ast.Call) else d


def _decorator_calls(node: ast.ClassDef | Scope, d: Def) -> None:
    """`@deco` is `f = deco(f)` and `@deco(...)` calls deco: the decorated definition calls its
    decorators (evaluated in the enclosing scope, so resolved like the module's names); names
    passed to a decorator call (`@option(callback=check)`) are values it references."""
    for x in node.decorator_list:
        if isinstance(x, ast.Call):
            if ch := chain_of(x.func):
                d.calls.append(_call_ref(x, ch))
            d.refs += [ch for v in _values(x) if (ch := chain_of(v))]
        elif ch := chain_of(x):
            d.calls.append(CallRef(ch, 1, ()))


# Nodes that hold values: a call's arguments, a registry's entries, an assignment's right side.
_VALUE_HOLDERS = (ast.Call, ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Assign)


def _values(x: Any) -> list[Any]:
    """The plain names/attributes `x` holds as values (not called there): `Thread(target=f)`,
    `{"a": f}`, `[f, g]`, `handler = f`. Resolution keeps those naming an in-repo function."""
    cls = x.__class__  # exact classes: ast node types are never subclassed by the parser
    vals: list[Any]
    if cls is ast.Call:
        vals = x.args
        if x.keywords:
            vals = [*vals, *[k.value for k in x.keywords]]
    elif cls is ast.Dict:
        vals = x.values
    elif cls is ast.List or cls is ast.Tuple or cls is ast.Set:
        if cls is not ast.Set and x.ctx.__class__ is not _LOAD:
            return []
        vals = x.elts
    elif cls is ast.Assign:
        vals = [x.value]
    else:
        return []
    return [v for v in vals if v.__class__ in _NAMEISH and v.ctx.__class__ is _LOAD]  # type: ignore[attr-defined]  # mypy narrows v to object here


_NAMEISH: frozenset[type] = frozenset({ast.Name, ast.Attribute})
_LOAD = ast.Load


# Nodes of a function body that bind a local name (what _Body._binding reads)
_LOOPS = frozenset({ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension})
_DEFINES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_BINDS = frozenset({ast.Assign, ast.AnnAssign, ast.withitem, ast.ExceptHandler, ast.arg,
                    ast.NamedExpr}) | _LOOPS | _DEFINES
_CONTAINERS = frozenset({ast.Dict, ast.List, ast.Tuple, ast.Set})


class _Body:
    """Calls and local types inside one function body (nested functions and lambdas included:
    their calls belong to the enclosing definition, which is the entity a reader would name)."""

    def __init__(self, d: Def, self_name: str | None, cls: Def | None) -> None:
        self.d, self.self_name, self.cls = d, self_name, cls
        self.types: dict[str, Chain | None] = {}  # local name -> its class (None: unknown/mixed)

    def _bind(self, name: str, t: Chain | None) -> None:
        if name in self.types and self.types[name] != t:
            t = None  # assigned two different things: not guessed
        self.types[name] = t

    def scan(self, fn: Scope) -> None:
        a = fn.args
        for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
            if p.arg != self.self_name:
                self._bind(p.arg, simple_type(p.annotation))
        calls: list[ast.Call] = []
        holders: list[ast.AST] = []
        # pass 1, one walk of the body (syntax.nodes, inlined: this loop is most of recon's time):
        # what each local name holds, and the calls and value holders for later
        call_cls, containers, binds, skip = ast.Call, _CONTAINERS, _BINDS, SKIP
        table = CHILDREN
        todo: list[Any] = []
        push, pop = todo.append, todo.pop
        for st in fn.body:
            push(st)
            while todo:
                n = pop()
                cls = n.__class__
                if cls is call_cls:  # most nodes: keep for pass 2
                    calls.append(n)
                elif cls in containers:
                    holders.append(n)
                elif cls in binds:
                    self._binding(n, cls, holders)
                fields = table.get(cls)
                for f in children(cls) if fields is None else fields:
                    v = getattr(n, f)
                    if v.__class__ is list:
                        for x in v:
                            if x is not None and x.__class__ not in skip:
                                push(x)
                    elif v is not None and v.__class__ not in skip:
                        push(v)
        rewrite, out, by_name, refs = self._rewrite, self.d.calls, self.d.by_name, self.d.refs
        nameish, load = _NAMEISH, _LOAD
        for c in calls:  # pass 2: the calls, through those local types
            func = c.func
            ch = chain_of(func)
            r = rewrite(ch) if ch else None
            if r is not None:
                out.append(_call_ref(c, r))
            elif func.__class__ is ast.Attribute and (ch is None or len(ch) > 1):
                # `x.m()` with x of unknown type: a may-call of any in-repo `m` (resolve decides)
                by_name.append(_call_ref(c, (func.attr,)))
            # values passed along (callbacks): `_values(c)`, inlined
            kws = c.keywords
            args: list[Any] = [*c.args, *[k.value for k in kws]] if kws else c.args
            for v in args:
                kind = v.__class__
                if (kind in nameish and v.ctx.__class__ is load
                        and (ch := chain_of(v)) and (r := rewrite(ch)) is not None):
                    refs.append(r)
        for h in holders:  # values held by registries and assignments
            for v in _values(h):
                if (ch := chain_of(v)) and (r := rewrite(ch)) is not None:
                    refs.append(r)

    def _binding(self, n: Any, cls: type, holders: list[ast.AST]) -> None:
        if cls is ast.Assign:
            holders.append(n)
            t = _constructed(n.value)
            for tgt in n.targets:
                self._target(tgt, t)
        elif cls is ast.AnnAssign:
            self._target(n.target, simple_type(n.annotation) or _constructed(n.value))
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
            self._target(n.target, _constructed(n.value))

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


def _constructed(value: ast.expr | None) -> Chain | None:
    """`T(...)` -> T (resolve keeps it only if T is a class); anything else -> None."""
    if isinstance(value, ast.Call):
        return chain_of(value.func)
    return None
