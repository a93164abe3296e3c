"""The package's import graph goes one way: every `import plan07.x` / `from plan07.x import y`
inside plan07 (at the top of a module, inside a function, or under `if TYPE_CHECKING:`) points
down the stages of docs/architecture.md, with no cycle between modules nor between folders; the
skins (cli/, mcp/, ab/) use only the public API. Read from the source with ast, nothing is
imported."""

from __future__ import annotations

import ast
from pathlib import Path

import plan07
from plan07.engine.graphs import sccs

ROOT = Path(plan07.__file__).parent
# the floors of docs/architecture.md, top down: a module may import its own floor's folder and
# anything below it, never above
FLOORS = [
    ["cli", "mcp", "ab"],
    ["api", "reader", "checkpoints"],
    ["gate"],
    ["plan"],
    ["decompose"],
    ["order", "request"],
    ["engine", "evidence"],
    ["store"],
    ["model"],
    ["vocab", "caps", "errors", "sandbox", "collector", "flag", "extras", "progress", "term"],
]
SKINS = {"cli", "mcp", "ab"}
# what the skins may import: the public door (Planner and the stage functions), the models,
# the errors, the shared vocabulary and caps, redaction, the extras
# (what a missing one says) and the progress of long steps (a skin listens)
PUBLIC = {"plan07", "plan07.model", "plan07.errors", "plan07.vocab", "plan07.caps",
          "plan07.sandbox", "plan07.extras", "plan07.progress"}


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    # `from plan07.x import y` where y is a module counts as an import of plan07.x.y; an
    # imported name counts as its module
    found = set()
    for m in out:
        while m and m not in modules:
            m = m.rpartition(".")[0]
        if m and m != me:
            found.add(m)
    return found


def graph() -> dict[str, set[str]]:
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    return {m: _imports(p, set(files)) - {"plan07"} for m, p in files.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (plan07's own Tarjan)."""
    comps = sccs(sorted(g), {v: sorted(w for w in g[v] if w in g) for v in g})
    return sorted(sorted(c) for c in comps if len(c) > 1)


def folder(module: str) -> str:
    """`plan07.gate.checks` -> `gate`, `plan07.api` -> `api`."""
    return module.split(".")[1] if "." in module else "plan07"


def floor(module: str) -> int:
    return next(i for i, names in enumerate(FLOORS) if folder(module) in names)


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_plan07_has_no_import_cycle_type_checking_imports_included() -> None:
    g = graph()
    assert "plan07.api" in g
    assert "plan07.plan.artifact" in g["plan07.api"]
    assert cycles(g) == []


def test_every_folder_has_a_floor_and_imports_point_down() -> None:
    g = graph()
    placed = {n for names in FLOORS for n in names}
    assert sorted({folder(m) for m in g} - placed - {"plan07", "entry", "rules",
                                                      "schemas"}) == []
    up = sorted(f"{m} -> {d}" for m, deps in g.items() for d in deps
                if folder(m) in placed and folder(d) in placed and floor(d) < floor(m))
    assert up == []


def test_the_skins_import_only_the_public_api() -> None:
    g = graph()
    used = {d: sorted(m for m in g if folder(m) in SKINS and d in g[m])
            for m in g if folder(m) in SKINS for d in g[m] if folder(d) not in SKINS}
    assert sorted(set(used) - PUBLIC) == [], {d: used[d] for d in set(used) - PUBLIC}
    assert len(PUBLIC) <= 8  # the door itself counted
