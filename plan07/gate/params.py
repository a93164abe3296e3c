"""A definition's call-visible parameters (griffe's breakage rules, by call form): `Param` and
its kinds as inspect names them, the parameters read off a function's `ast.arguments`, and what
a change from old parameters to new ones stops binding (`signature_breaks`) or only takes away
(`only_narrows`). Pure: read by plan07.gate.entitydiff, plan07.gate.callsites and
plan07.gate.observe (docs/rules.md "Observed changes")."""

from __future__ import annotations

import ast
from dataclasses import dataclass

# parameter kinds, as inspect names them
POSONLY, POS, VARARGS, KWONLY, VARKW = "posonly", "pos", "varargs", "kwonly", "varkw"
_POSITIONAL = (POSONLY, POS)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: str | None  # the default's source text, None: required (or variadic)


def unparse(node: ast.AST | None) -> str:
    return "" if node is None else ast.unparse(node)


def call_params(a: ast.arguments, *, drop_first: bool) -> tuple[Param, ...]:
    """The call-visible parameters of `a` (defaults right-aligned over posonly + args)."""
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + [
        *a.defaults]
    out = [Param(p.arg, POSONLY if i < len(a.posonlyargs) else POS, unparse(d) if d else None)
           for i, (p, d) in enumerate(zip(positional, defaults, strict=True))]
    if drop_first and out:
        out = out[1:]
    if a.vararg:
        out.append(Param(a.vararg.arg, VARARGS, None))
    out += [Param(p.arg, KWONLY, unparse(d) if d is not None else None)
            for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    if a.kwarg:
        out.append(Param(a.kwarg.arg, VARKW, None))
    return tuple(out)


def signature_breaks(old: tuple[Param, ...], new: tuple[Param, ...]) -> list[str]:
    """What in `new` stops some call that bound to `old` from binding (griffe's rules, by call
    form); [] when every old call still binds."""
    why: list[str] = []
    onew = {p.name: p for p in new}
    new_kinds = {p.kind for p in new}
    old_pos = [p.name for p in old if p.kind in _POSITIONAL]
    new_pos = [p.name for p in new if p.kind in _POSITIONAL]
    for p in old:
        n = onew.get(p.name)
        if p.kind in (VARARGS, VARKW):
            if p.kind not in new_kinds:
                why.append(f"drops *{p.name}" if p.kind == VARARGS else f"drops **{p.name}")
            continue
        if n is None:
            swallowed = (p.kind == KWONLY and VARKW in new_kinds) or (
                p.kind == POSONLY and VARARGS in new_kinds) or (
                p.kind == POS and {VARARGS, VARKW} <= new_kinds)
            if not swallowed:
                why.append(f"removes parameter {p.name}")
            continue
        if n.default is None and p.default is not None and n.kind not in (VARARGS, VARKW):
            why.append(f"makes {p.name} required")
        if p.kind in _POSITIONAL and n.kind == KWONLY:
            why.append(f"makes {p.name} keyword-only")
        elif p.kind != POSONLY and n.kind == POSONLY or p.kind == KWONLY and n.kind == POSONLY:
            why.append(f"makes {p.name} positional-only")
        if p.kind in _POSITIONAL and n.kind in _POSITIONAL and p.name in new_pos and \
                old_pos.index(p.name) != new_pos.index(p.name):
            why.append(f"moves {p.name} from position {old_pos.index(p.name) + 1} to "
                       f"{new_pos.index(p.name) + 1}")
    names = {p.name for p in old}
    for n in new:
        if n.name not in names and n.default is None and n.kind not in (VARARGS, VARKW):
            why.append(f"adds required parameter {n.name}")
    return why


def only_narrows(old: tuple[Param, ...], new: tuple[Param, ...]) -> bool:
    """Every call `new` refuses can be rewritten first, against `old` (the ladder's rebind before
    narrow): optional parameters or variadics removed, parameters made keyword-only or
    positional-only; nothing added (a rename is new form), made required, or moved."""
    names = {p.name for p in old}
    if any(p.name not in names for p in new):
        return False
    onew = {p.name: p for p in new}
    old_pos = [p.name for p in old if p.kind in _POSITIONAL and p.name in onew]
    new_pos = [p.name for p in new if p.kind in _POSITIONAL]
    if [n for n in old_pos if n in new_pos] != [n for n in new_pos if n in old_pos]:
        return False
    for p in old:
        n = onew.get(p.name)
        if n is None and p.default is None and p.kind not in (VARARGS, VARKW):
            return False  # a required parameter gone: no old call can leave it out first
        if n is not None and n.default is None and p.default is not None \
                and n.kind not in (VARARGS, VARKW):
            return False
    return True
