"""The plan's regression run (README "No false done"): before a plan terminates, the tests of
every module it changed since CP0 run against the CP0 baseline, and no test that passed then may
fail. I/O: git (what changed since CP0), recon of the tree as it is now (cached per file).

The scope: every test module that imports a changed module or a name defined in it (recon
follows a package's re-export to its definition, so `from pkg import Thing` counts for the
module defining `Thing`), or imports a module that does (one step of the import closure,
through modules, not packages: a package's `__init__` that imports everything would make it the
whole suite), the test files the plan itself changed or wrote, and what the CP0 run covered;
the whole suite instead (the repository's `testpaths`, else the repository) when its
pyproject.toml says `[tool.plan07] regression = "suite"`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plan07.errors import InputError

if TYPE_CHECKING:
    from plan07.evidence.testmap import TestMap

CONFIG_KEY = "regression"  # [tool.plan07] regression = "modules" | "suite"
MODES = ("modules", "suite")


def configured_mode(repo: Path) -> str:
    """`[tool.plan07] regression` of the repo's pyproject.toml: "modules" (default) or
    "suite"; any other value is one InputError line."""
    path = Path(repo) / "pyproject.toml"
    if not path.is_file():
        return "modules"
    import tomllib

    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "modules"  # plan07.gate.testcommand reports an unreadable file
    tool = data.get("tool")
    conf = tool.get("plan07") if isinstance(tool, dict) else None
    value = conf.get(CONFIG_KEY, "modules") if isinstance(conf, dict) else "modules"
    if value not in MODES:
        raise InputError(f"{CONFIG_KEY} = {value!r}: use \"modules\" (the tests of the modules "
                         "the plan changed) or \"suite\" (every test)",
                         field=f"{path}: [tool.plan07]")
    return str(value)


def changed_files(repo: Path, cp0_tree: str | None, tree: str | None) -> list[str] | None:
    """The repo-relative files changed since CP0 (None: unknown, outside git)."""
    from plan07.store import checkpoint

    if not cp0_tree or not tree or cp0_tree.startswith("stat:") or tree.startswith("stat:"):
        return None
    return checkpoint.changed_files(repo, cp0_tree, tree)


def scope(repo: Path, changed: Sequence[str] | None, *, mode: str, covered: Sequence[str],
          targets: Sequence[str] = ()) -> list[str]:
    """What the regression run runs (module docstring). `changed`: the files changed since
    CP0 (None outside git: the modules of `targets`, the plan's modify targets, stand for
    them); `covered`: what the CP0 run ran."""
    from plan07.evidence.layout import read_layout

    if mode == "suite":
        return list(read_layout(repo).testpaths) or ["."]
    tm = _test_map(repo)
    files: set[str] = set()
    if changed is None:
        mods = {m for t in targets if (m := tm.module(t))}
    else:
        by_file = {n.file: n.id for n in tm.nodes.values() if n.kind == "module" and n.file}
        mods = {by_file[f] for f in changed if f in by_file}
        files |= {f for f in changed if f.endswith(".py") and f in tm.test_modules.values()}
    for m in sorted(mods):
        if m in tm.test_modules:
            files.add(tm.test_modules[m])
        else:
            files |= set(tm.importing(m, None))
            for user in tm.importers(m):  # one step further: the modules importing it
                files |= set(tm.importing(user, None))
    files |= {c for c in covered if (Path(repo) / c).exists()}
    out = sorted(files)
    # a file inside a folder of the scope runs once
    return [p for p in out if not any(q != p and (q in (".", "") or p.startswith(
        q.rstrip("/") + "/")) for q in out)]


def _test_map(repo: Path) -> TestMap:
    """The tests of the repository as it is now (recon, cached per file content)."""
    from plan07.evidence.recon import recon
    from plan07.evidence.testmap import TestMap
    from plan07.model import Evidence, Recon

    rr = recon(Path(repo))
    return TestMap(Evidence.model_construct(recon=Recon.model_construct(
        nodes=rr.nodes, edges=rr.edges)))
