"""Which files of a repository recon reads: Python sources, minus .gitignore'd and vendored paths.
I/O (lists the directory, asks git when the directory is a git work tree).
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from pathlib import Path

# Never the repository's own code, whatever .gitignore says.
VENDORED = frozenset({
    "venv", ".venv", "env", ".env", "site-packages", "node_modules", "build", "dist", ".tox",
    ".nox", "vendor", "third_party", "__pycache__", ".git", ".hg", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".eggs",
})


def python_files(repo: Path) -> list[str]:
    """Repository-relative, '/'-separated paths of the .py files recon should read, sorted.
    Refused (InputError, the cap named) past caps.RECON_MAX_FILES files or RECON_MAX_BYTES
    bytes, or a walk past caps.WALK_MAX_ENTRIES entries: before any is read."""
    listed = _git_files(repo)
    if not listed:  # not a git tree (or git lists nothing here): read the directory itself
        listed = _walk(repo)
    out = sorted(p for p in listed if p.endswith(".py") and not _vendored(p))
    _check_size(repo, out)
    return out


def _check_size(repo: Path, files: list[str]) -> None:
    from plan07 import caps
    from plan07.errors import InputError

    if len(files) > caps.RECON_MAX_FILES:
        raise InputError(f"{len(files)} Python files to read; plan the repository's own "
                         "folder, or pass --evidence", source=str(repo),
                         cap=f"RECON_MAX_FILES {caps.RECON_MAX_FILES}")
    prefix, total = path_prefix(repo), 0
    for f in files:
        try:
            total += os.stat(prefix + f).st_size  # noqa: PTH116 - text joined, as recon reads
        except OSError:
            continue
    if total > caps.RECON_MAX_BYTES:
        raise InputError(f"{total} bytes of Python to read; plan the repository's own folder, "
                         "or pass --evidence", source=str(repo),
                         cap=f"RECON_MAX_BYTES {caps.RECON_MAX_BYTES}")


def path_prefix(repo: Path) -> str:
    """What `str(repo / rel)` puts before a relative path `rel` as python_files lists them (to
    join the two as text: a pathlib join per file costs more than the read)."""
    root = str(repo)
    return "" if root == "." else root.rstrip("/") + "/"


def _vendored(rel: str) -> bool:
    dirs = rel.split("/")
    dirs.pop()
    return not VENDORED.isdisjoint(dirs) or (
        ".egg-info" in rel and any(p.endswith(".egg-info") for p in dirs))


def _git_files(repo: Path) -> list[str] | None:
    """Tracked plus untracked-but-not-ignored files, when `repo` is (inside) a git work tree."""
    try:
        res = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--", "*.py"],
            capture_output=True, timeout=60, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0:
        return None
    names = [n for n in res.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    # ls-files also lists tracked files deleted from the work tree; recon reads what is there
    # (os.path.isfile on the joined text: a pathlib join and stat per file cost 5x more)
    prefix, isfile = path_prefix(repo), os.path.isfile
    return [n for n in names if isfile(prefix + n)]


def _walk(repo: Path) -> list[str]:
    """A non-git directory: walk it, honouring the root .gitignore's simple patterns."""
    from plan07.store.boundedio import walk

    patterns = _gitignore(repo / ".gitignore")
    out: list[str] = []
    for root, dirs, files in walk(repo, what="the repository"):
        rel_root = Path(root).relative_to(repo).as_posix()
        rel_root = "" if rel_root == "." else rel_root + "/"
        dirs[:] = sorted(d for d in dirs if d not in VENDORED and not d.startswith(".")
                         and not _ignored(rel_root + d, patterns, is_dir=True))
        out += [rel_root + f for f in files if not _ignored(rel_root + f, patterns, is_dir=False)]
    return out


def _gitignore(path: Path) -> list[str]:
    try:
        lines = path.read_text("utf-8", "replace").splitlines()
    except OSError:
        return []
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def _ignored(rel: str, patterns: list[str], *, is_dir: bool) -> bool:
    """gitignore semantics, simplified: last match wins, `!` re-includes, a trailing `/` matches
    directories only, a pattern with a `/` is anchored at the root, one without matches any name."""
    ignored = False
    name = rel.rsplit("/", 1)[-1]
    for pat in patterns:
        neg = pat.startswith("!")
        p = pat[1:] if neg else pat
        if p.endswith("/"):
            if not is_dir:
                continue
            p = p[:-1]
        if "/" in p:
            anchored = p.lstrip("/")
            hit = fnmatch.fnmatchcase(rel, anchored) or fnmatch.fnmatchcase(rel, anchored + "/*")
        else:
            hit = fnmatch.fnmatchcase(name, p)
        if hit:
            ignored = not neg
    return ignored
