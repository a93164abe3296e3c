"""What a module refers to by a string rather than by a name (CodePlan's may-impact analysis
follows names; a string key or a keyword written inside a template reaches code no import edge
shows): the keys of settings mappings and registries (`DEFAULT_POLICIES["urlize.rel"]`), and
keyword arguments written inside strings (`'{{ x|urlize(extra_schemes=...) }}'`). Pure: sources
in, uses out (docs/rules.md "Observed changes").
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from plan07.gate.entitydiff import parsed

# A string key worth following through a repository: a name with a separator in it
# (`urlize.extra_schemes`, `json_dumps_kwargs`, `max-age`), as settings mappings and registries
# hold; a plain word (`name`, `id`) is too common to say which code shares it.
_NAME = r"[A-Za-z_][\w.-]*[._-][\w.-]*[A-Za-z0-9]"
_KEY = re.compile(_NAME + r"\Z")
_READ_CALLS = ("get", "pop")  # mapping.get(K), mapping.pop(K): a read of K


_QUOTED = re.compile(f"[\"']({_NAME})[\"']")


def quoted_keys(source: str) -> set[str]:
    """Every distinctive name `source` writes between quotes (what `key_uses` may find, and
    more: a cheap test of whether a file is worth parsing for keys)."""
    return set(_QUOTED.findall(source))


def distinctive(name: str) -> bool:
    """`name` is specific enough to be followed by its text (`extra_schemes`, not `name`)."""
    return _KEY.match(name) is not None


@dataclass(frozen=True)
class KeyUse:
    """One string key of a module: `owner` holds it (the qualified name of the definition, or at
    module level the name a mapping is assigned to; "" for neither), `defines` when it is a
    mapping's literal key, a subscript assigned or deleted, or `setdefault`'s; else a read."""

    key: str
    owner: str
    defines: bool


def _owned(tree: ast.Module) -> Iterator[tuple[ast.AST, str]]:
    """Every node of `tree` with its owner (KeyUse.owner)."""
    todo: list[tuple[ast.AST, str, bool]] = [(tree, "", True)]
    while todo:
        node, owner, top = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                todo.append((child, f"{owner}.{child.name}" if owner else child.name, False))
                continue
            inner = owner
            if top and isinstance(child, ast.Assign | ast.AnnAssign):
                names = child.targets if isinstance(child, ast.Assign) else [child.target]
                if len(names) == 1 and isinstance(names[0], ast.Name):
                    inner = names[0].id
            yield child, inner
            todo.append((child, inner, top and inner == owner and not isinstance(
                child, ast.Assign | ast.AnnAssign)))


def _str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def key_uses(source: str) -> list[KeyUse] | None:
    """The string keys `source` defines or reads (distinctive ones only), in no set order; None
    when it does not parse."""
    tree = parsed(source)
    if tree is None:
        return None
    out: list[KeyUse] = []
    for node, owner in _owned(tree):
        found: list[tuple[str | None, bool]] = []
        if isinstance(node, ast.Dict):
            found = [(_str(k), True) for k in node.keys]
        elif isinstance(node, ast.Subscript):
            found = [(_str(node.slice), not isinstance(node.ctx, ast.Load))]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in _READ_CALLS:
                found = [(_str(node.args[0]), False)]
            elif node.func.attr == "setdefault":
                found = [(_str(node.args[0]), True)]
        out += [KeyUse(k, owner, d) for k, d in found if k is not None and distinctive(k)]
    return out


def keywords_in_strings(source: str, names: set[str]) -> list[tuple[str, str]]:
    """(owner, name) for each of `names` written as a keyword argument (`name=`, not `==`)
    inside a string of `source` that is no docstring: a call made from a template or a command
    line the string holds. [] when it does not parse."""
    tree = parsed(source)
    if tree is None or not names:
        return []
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\s*=(?!=)")
    out: list[tuple[str, str]] = []
    for node, owner in _owned(tree):
        text = _str(node)
        if text is None or id(node) in docs:
            continue
        out += [(owner, m) for m in dict.fromkeys(pattern.findall(text))
                if (owner, m) not in out]
    return out
