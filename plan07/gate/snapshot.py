"""The repository as it was at CP0, to run tests on (docs/safety.md "Tests on the CP0 content"):
a CP0 baseline deferred until an interpreter could run it, and the CP0 outcome of a test that
fails now and that the baseline did not run. I/O: git (a temporary index; nothing of the
user's touched, no worktree registered), a temporary folder.

The content is the git tree the plan recorded at CP0, written into a temporary folder; the
build outputs git ignores and the package needs to import (a generated `_version.py`, a compiled
`*.so`) are copied beside it from the work tree. The check's environment points at that copy:
each PYTHONPATH entry inside the repository is the same path inside the copy, and the copy's
source roots come first (so an editable install of the work tree is not what the tests import).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

EXCLUDE_DIRS = {".git", ".hg", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
                "build", "dist", ".eggs"}  # as plan07.gate.checks reads the tree
BUILD_OUTPUTS = (".py", ".so", ".pyd", ".pth")  # ignored files a package may need to import
COPY_MAX_FILES = 2000


@contextmanager
def materialized(repo: Path, tree: str) -> Iterator[Path]:
    """The files of git tree `tree` (a fingerprint of `repo`'s content) as a folder: the path
    that stands for `repo` inside a temporary copy, removed afterwards. PlanStateError when
    git cannot write it."""
    from plan07.store.git import git, repo_prefix, temp_index

    with tempfile.TemporaryDirectory(prefix="plan07-cp0-") as tmp, temp_index() as index:
        top = Path(tmp) / "tree"
        git(repo, "read-tree", tree, index=index)
        git(repo, "checkout-index", "-a", "-f", f"--prefix={top}/", index=index)
        root = top / repo_prefix(repo)
        _copy_build_outputs(repo, root)
        yield root


def _copy_build_outputs(repo: Path, dest: Path) -> None:
    """Ignored files of the work tree a package needs to import (`BUILD_OUTPUTS`), outside
    virtualenvs and caches, copied into the snapshot at the same place."""
    from plan07.store.git import git

    listed = git(repo, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--",
                 *(f"*{ext}" for ext in BUILD_OUTPUTS)).split("\0")
    copied = 0
    for rel in listed:
        if not rel or set(Path(rel).parts[:-1]) & EXCLUDE_DIRS or any(
                p.endswith(".egg-info") or p.startswith(".") for p in Path(rel).parts[:-1]):
            continue
        src, dst = repo / rel, dest / rel
        if not src.is_file() or src.is_symlink() or dst.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        copied += 1
        if copied >= COPY_MAX_FILES:
            break


def snapshot_env(env: Mapping[str, str], repo: Path, copy: Path) -> dict[str, str]:
    """`env` for a run in `copy` instead of `repo`: PYTHONPATH entries inside the repo moved to
    the copy, the copy's source roots (`src/` when it has one, then itself) first."""
    root = Path(repo).resolve()
    moved: list[str] = []
    for entry in (env.get("PYTHONPATH") or "").split(os.pathsep):
        if not entry:
            continue
        p = Path(entry)
        rp = p.resolve() if p.is_absolute() else (root / p).resolve()
        moved.append(str(copy / rp.relative_to(root)) if rp.is_relative_to(root) else entry)
    first = [str(copy / "src")] if (copy / "src").is_dir() else []
    first.append(str(copy))
    out = dict(env)
    out["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*first, *moved]))
    return out
