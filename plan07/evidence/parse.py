"""Read one Python module into ModuleFacts with the standard `ast` module. Pure: source in, facts
out (a file that does not parse raises SyntaxError; the caller reports it and moves on).

Only the signature line of a definition is kept (rendered from the AST), never its body.
"""

from __future__ import annotations

import ast
import posixpath
from typing import Any

from plan07.evidence.body import Body
from plan07.evidence.callrefs import call_ref, constructed, held_values
from plan07.evidence.facts import Chain, Def, ModuleFacts
from plan07.evidence.signatures import class_fields, class_signature, signature
from plan07.evidence.syntax import (
    CHILDREN,
    SKIP,
    Scope,
    chain_of,
    children,
    first_doc_line,
    import_lines,
    import_statements,
    simple_type,
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


def parse_module(source: str, file: str, test: bool | None = None) -> ModuleFacts:
    """The facts of one module; raises SyntaxError (or ValueError on NUL bytes) if it does not
    parse. `test`: whether the repository's test layout makes it a test module
    (plan07.evidence.layout); None: by its name alone (`is_test_file`)."""
    tree = ast.parse(source, filename=file)
    name, is_package = module_name(file)
    mf = ModuleFacts(name=name, file=file, is_package=is_package,
                     is_test_file=is_test_file(file) if test is None else test)
    mf.doc = first_doc_line(tree)
    _imports(tree, mf, import_lines(source))
    dirs = file.split("/")[:-1]
    if "migrations" in dirs and not is_package:
        mf.kind = "migration"  # Django: <app>/migrations/0002_x.py
        mf.migration_models = _django_models(tree)
    elif "versions" in dirs and "def upgrade" in source and "revision" in source:
        mf.kind = "migration"  # Alembic: <env>/versions/<rev>_x.py
    _Walker(mf).body(tree.body, prefix="", cls=None)
    return mf


def _imports(tree: ast.Module, mf: ModuleFacts, lines: list[int] | None) -> None:
    package = mf.name if mf.is_package else mf.name.rpartition(".")[0]
    parts = package.split(".") if package else []
    imports, bindings = mf.imports, mf.bindings
    add = imports.append
    for node in import_statements(tree.body, lines):
        if isinstance(node, ast.Import):
            for a in node.names:
                name = a.name
                add(name)
                if asname := a.asname:
                    bindings[asname] = name
                else:
                    head = name.partition(".")[0]
                    bindings.setdefault(head, head)
        else:
            module = node.module
            base = module or ""
            if level := node.level:
                pkg = parts[: len(parts) - (level - 1)] if level > 1 else parts
                base = ".".join(pkg + [module] if module else pkg)
            for a in node.names:
                name = a.name
                if name == "*":
                    add(base)
                    mf.stars.append(base)
                    continue
                target = f"{base}.{name}" if base else name
                add(target)
                bindings[a.asname or name] = target


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

    def body(self, stmts: list[Any], *, prefix: str, cls: Def | None) -> None:
        for st in stmts:  # (Any: read by exact class; the parser never subclasses)
            c = type(st)
            if c is ast.ClassDef:
                self.klass(st, prefix=prefix, outer=cls)
            elif c is ast.FunctionDef or c is ast.AsyncFunctionDef:
                self.function(st, prefix=prefix, cls=cls)
            elif c in _COMPOUND:
                # conditionally defined names are still definitions of this scope
                for block in _blocks(st):
                    self.body(block, prefix=prefix, cls=cls)
                if c is not ast.Try:
                    self._stmt_calls(_heads(st), cls)
            elif c in _INERT or (c is ast.Expr and type(st.value) is ast.Constant):
                continue  # no call, value or variable in it (imports: read by _imports)
            else:
                self._stmt_calls([st], cls)
                if c is ast.AnnAssign:
                    if cls is not None:
                        cls.annotations += type_chains(st.annotation)
                    self._variables(st, cls)
                elif c in _BINDING:
                    self._variables(st, cls)

    def _variables(self, st: Any, cls: Def | None) -> None:
        """`x = Cls(...)` / `x: Cls` at module or class level: what x holds, when it is one
        thing (a module-level singleton such as `console = Console()`). Only a plain name
        target counts (a tuple's or attribute's names are never read here)."""
        c = type(st)
        if c is ast.Assign:
            t = constructed(st.value)
            pairs = [(x, t) for x in st.targets]
        elif c is ast.AnnAssign:
            pairs = [(st.target, simple_type(st.annotation) or constructed(st.value))]
        else:  # AugAssign, For, AsyncFor
            pairs = [(st.target, None)]
        known = self.mf.var_types
        for target, held in pairs:
            if type(target) is not ast.Name:
                continue
            if cls is not None:
                if held is not None:
                    cls.attr_types.setdefault(target.id, held)
                continue
            name = target.id
            known[name] = held if known.get(name, held) == held else None

    def _stmt_calls(self, nodes: list[ast.AST], cls: Def | None) -> None:
        """Calls and values at module or class level; an unresolved call is judged by resolve
        (these scopes have no local types), a receiver that is no dotted name is by-name here.
        The nodes are read in syntax.nodes' order (an attribute chain skipped to its base)."""
        sink = cls.calls if cls is not None else self.mf.top_calls
        by_name = cls.by_name if cls is not None else self.mf.top_by_name
        refs = cls.refs if cls is not None else self.mf.top_refs
        skip, table, holders = SKIP, CHILDREN, _HOLDERS
        call_cls, attribute = ast.Call, ast.Attribute
        todo: list[Any] = []
        push, pop = todo.append, todo.pop
        for n in nodes:
            if type(n) not in skip:
                push(n)
            while todo:
                x = pop()
                c = type(x)
                if c is attribute:
                    x = x.value
                    c = type(x)
                    while c is attribute:
                        x = x.value
                        c = type(x)
                    if c in skip:
                        continue
                if c is call_cls:
                    if ch := chain_of(x.func):
                        sink.append(call_ref(x, ch))
                    elif type(x.func) is attribute:  # `xs[0].m()`, `(a or b).m()`
                        by_name.append(call_ref(x, (x.func.attr,)))
                if c is call_cls or c in holders:
                    for v in held_values(x):
                        if ch := chain_of(v):
                            refs.append(ch)
                for f in table.get(c) or children(c):
                    v = getattr(x, f)
                    if type(v) is list:
                        for y in v:
                            if y is not None and type(y) not in skip:
                                push(y)
                    elif v is not None and type(v) not in skip:
                        push(v)

    def klass(self, node: ast.ClassDef, *, prefix: str, outer: Def | None) -> None:
        qual = f"{prefix}{node.name}"
        bases = [c for b in node.bases if (c := chain_of(b))]
        decos, calls, refs = _decorators(node) if node.decorator_list else ([], [], [])
        struct = any(b[-1] in STRUCT_BASES for b in bases) or any(
            d[-1] in STRUCT_DECORATORS or d[0] in {"attr", "attrs"} for d in decos)
        test = self.mf.is_test_file and _is_test_class(node) and outer is None
        d = Def(qual, "test" if test else "class", node.lineno, "", first_doc_line(node),
                bases=bases, decorators=decos, calls=calls, refs=refs, structured=struct)
        self.mf.defs.append(d)
        self.body(node.body, prefix=qual + ".", cls=d)
        d.signature = class_signature(node)
        fields, d.params, d.field_defaults = class_fields(node)
        if fields is not None and fields != d.signature:
            d.field_signature = fields

    def function(self, node: Scope, *, prefix: str, cls: Def | None) -> None:
        method = cls is not None
        name = node.name
        test = self.mf.is_test_file and name.startswith("test") and (
            cls is None or cls.kind == "test")
        kind = "test" if test else ("method" if method else "function")
        text, bound, chains, ret, params, defaults = signature(node)
        # (positional: Def's fields in order up to `defaults`, no keyword matching)
        d = Def(f"{prefix}{name}", kind, node.lineno, text, first_doc_line(node), [], [], chains,
                [], [], [], {}, params, ret, defaults)
        static = False
        if node.decorator_list:
            d.decorators, d.calls, d.refs = _decorators(node)
            for x in d.decorators:
                if x[-1] == "staticmethod":
                    static = True
        self_name = params[0] if method and params and not static else None
        Body(d, self_name, cls).scan(node, bound)
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


def _decorators(node: ast.ClassDef | Scope) -> tuple[list[Chain], list[Any], list[Chain]]:
    """(the decorators' names; the calls they make; the values passed to them). `@deco` is
    `f = deco(f)` and `@deco(...)` calls deco: the decorated definition calls its decorators
    (evaluated in the enclosing scope, so resolved like the module's names); names passed to a
    decorator call (`@option(callback=check)`) are values it references."""
    names: list[Chain] = []
    calls: list[Any] = []
    refs: list[Chain] = []
    for x in node.decorator_list:
        if type(x) is ast.Call:
            if ch := chain_of(x.func):
                names.append(ch)
                calls.append(call_ref(x, ch))
            for v in held_values(x):
                if ch := chain_of(v):
                    refs.append(ch)
        elif ch := chain_of(x):
            names.append(ch)
            calls.append((ch, 1, ()))
    return names, calls, refs


# Nodes that hold values besides a call's arguments: a registry's entries, an assignment's right
# side (held_values)
_HOLDERS = frozenset({ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Assign})
_COMPOUND = frozenset({ast.If, ast.Try, ast.With, ast.AsyncWith})
_INERT = frozenset({ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal, ast.Break,
                    ast.Continue})
_BINDING = frozenset({ast.Assign, ast.AugAssign, ast.For, ast.AsyncFor})
