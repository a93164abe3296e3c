"""Where code calls a definition, and whether those calls still bind after its signature
changed (CodePlan's dependency analysis at the call site): the call shapes a caller's source
makes, binding them to the old and the new parameters as Python would, and the overrides a
subclass makes of a method. Pure: sources in, shapes out (docs/rules.md "Observed changes").
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from functools import lru_cache

from plan07.gate.entitydiff import decorator_names, parsed
from plan07.gate.params import KWONLY, POS, POSONLY, VARARGS, VARKW, Param, call_params, unparse


@dataclass(frozen=True)
class CallShape:
    """What one call site passes: how many positionals, which keyword names, and whether it
    unpacks `*xs` or `**kw` (then what it passes is unknown)."""

    positional: int
    keywords: tuple[str, ...]
    unpacks: bool


def _signature(params: tuple[Param, ...]) -> inspect.Signature:
    kinds = {POSONLY: inspect.Parameter.POSITIONAL_ONLY,
             POS: inspect.Parameter.POSITIONAL_OR_KEYWORD,
             VARARGS: inspect.Parameter.VAR_POSITIONAL, KWONLY: inspect.Parameter.KEYWORD_ONLY,
             VARKW: inspect.Parameter.VAR_KEYWORD}
    return inspect.Signature([inspect.Parameter(
        p.name, kinds[p.kind], default=inspect.Parameter.empty if p.default is None else None)
        for p in params])


def _bound(sig: inspect.Signature, call: CallShape) -> dict[str, str] | None:
    """Which parameter each argument of `call` lands in (positionals by index), or None when it
    does not bind."""
    args = [f"#{i}" for i in range(call.positional)]
    try:
        b = sig.bind(*args, **{k: k for k in call.keywords})
    except TypeError:
        return None
    out: dict[str, str] = {}
    for name, value in b.arguments.items():
        for v in value if isinstance(value, tuple) else value.values() \
                if isinstance(value, dict) else [value]:
            out[str(v)] = name
    return out


def still_binds(old: tuple[Param, ...], new: tuple[Param, ...], call: CallShape) -> bool:
    """A call that bound to `old` binds to `new` with every argument in the same parameter (a
    call that unpacks `*`/`**` is unknown: False)."""
    if call.unpacks:
        return False
    before = _bound(_signature(old), call)
    after = _bound(_signature(new), call)
    return after is not None and (before is None or before == after)


def call_sites(source: str, caller: str, callee: str) -> list[CallShape] | None:
    """The calls of `callee` (a last name: a function, a method, or a class for its
    constructor; `super().__init__` for `__init__`) inside definition `caller` (a qualified name
    in `source`; "" for the module's top level); None when the caller is not found or the
    source does not parse."""
    calls = _calls_in(source, caller)
    return None if calls is None else list(calls.get(callee, ()))


@lru_cache(maxsize=256)
def _calls_in(source: str, caller: str) -> dict[str, tuple[CallShape, ...]] | None:
    """Every call inside definition `caller` of `source`, by the last name called (from one
    walk of the whole module, `_file_calls`: a file holding several callers is read once)."""
    tree = parsed(source)
    if tree is None:
        return None
    body: list[ast.stmt] = tree.body
    for part in caller.split(".") if caller else []:
        found = next((n for n in body if isinstance(
            n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == part), None)
        if found is None:
            return None
        body = found.body
    out: dict[str, list[CallShape]] = {}
    for name, shape in _file_calls(source, caller):
        out.setdefault(name, []).append(shape)
    return {k: tuple(v) for k, v in out.items()}


def _inside(path: str, within: str) -> bool:
    return not within or path == within or path.startswith(within + ".")


# what a statement holds that is no expression: the blocks where a definition can stand
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def _file_calls(source: str, within: str) -> tuple[tuple[str, CallShape], ...]:
    """Each call of `source` (which parses) made in definition `within` ("" the whole module)
    or one nested in it, every definition of that name counted (`typing.overload` stubs, `if`
    branches; a call in a decorator, a base or a default belongs to the definition it
    decorates, as recon links it): the last name called and its shape, in source order. The
    definitions on the way to `within` are walked statement by statement, their expressions
    and every other definition left unread."""
    tree = parsed(source)
    assert tree is not None
    out: list[tuple[tuple[int, int], str, CallShape]] = []
    todo: list[tuple[ast.AST, str]] = [(n, "") for n in tree.body]
    while todo:
        node, path = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = f"{path}.{node.name}" if path else node.name
            if not (_inside(inner, within) or _inside(within, inner)):
                continue  # neither on the way to `within` nor in it
            outside: list[ast.AST] = [*node.decorator_list]
            if isinstance(node, ast.ClassDef):
                outside += [*node.bases, *node.keywords]
            else:
                outside += [node.args, *([node.returns] if node.returns else [])]
            todo += [(n, inner) for n in [*outside, *node.body]]
            continue
        if not _inside(path, within):  # on the way: only the blocks that hold definitions
            todo += [(c, path) for c in ast.iter_child_nodes(node) if isinstance(c, _BLOCKS)]
            continue
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else None
            if name is not None:
                out.append(((node.lineno, node.col_offset), name, CallShape(
                    sum(1 for a in node.args if not isinstance(a, ast.Starred)),
                    tuple(k.arg for k in node.keywords if k.arg is not None),
                    any(isinstance(a, ast.Starred) for a in node.args)
                    or any(k.arg is None for k in node.keywords))))
        todo += [(c, path) for c in ast.iter_child_nodes(node)]
    return tuple((name, shape) for _, name, shape in sorted(out, key=lambda t: t[0]))


def overrides(source: str, cls: str, method: str) -> list[tuple[str, tuple[Param, ...]]]:
    """Each class of `source` that names `cls` as a base (by its last name: `Flask`,
    `flask.Flask`) and defines `method`: (the qualified path of that class, nested in functions
    and classes as it is: `test_f.Sub`), its `method`'s call-visible parameters). A class made
    inside a test function counts: a subclass there is called as the base calls it."""
    tree = parsed(source)
    if tree is None:
        return []
    out: list[tuple[str, tuple[Param, ...]]] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for n in body:
            if isinstance(n, ast.ClassDef):
                if any(unparse(b).rpartition(".")[2] == cls for b in n.bases):
                    for m in n.body:
                        if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) \
                                and m.name == method:
                            static = "staticmethod" in decorator_names(m)
                            out.append((prefix + n.name,
                                        call_params(m.args, drop_first=not static)))
                walk(n.body, prefix + n.name + ".")
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                walk(n.body, prefix + n.name + ".")
            elif isinstance(n, ast.If | ast.Try | ast.With | ast.AsyncWith | ast.For):
                for block in (n.body, getattr(n, "orelse", []), getattr(n, "finalbody", [])):
                    walk(block, prefix)
                for h in getattr(n, "handlers", []):
                    walk(h.body, prefix)

    walk(tree.body, "")
    return out
