"""git plumbing for plan07's snapshots (design.md): git run with a clean environment and
plan07's own identity, a temporary index filled from the work tree, files kept byte for byte
(`working-tree-encoding`), trees and refs. I/O: runs git. Knows nothing of plans:
plan07.store.checkpoint names the refs and builds snapshots and restores from these steps.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from plan07.errors import InputError, PlanStateError

_IDENTITY = {
    "GIT_AUTHOR_NAME": "plan07", "GIT_AUTHOR_EMAIL": "plan07@localhost",
    "GIT_COMMITTER_NAME": "plan07", "GIT_COMMITTER_EMAIL": "plan07@localhost",
}
BLOB_MODES = {"100644", "100755", "120000"}


def _env(index: str | None) -> dict[str, str]:
    # A GIT_DIR/GIT_WORK_TREE/GIT_INDEX_FILE inherited from a hook would point git elsewhere.
    from plan07.sandbox import tool_env

    # ...and no credential reaches git (a repo's config may name filters that run with it)
    env = {k: v for k, v in tool_env().items() if not k.startswith("GIT_")}
    env.update(_IDENTITY)
    if index is not None:
        env["GIT_INDEX_FILE"] = index
    return env


def git(repo: Path, *args: str, index: str | None = None, stdin: bytes | None = None) -> str:
    proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=_env(index),
        check=False,
    )
    if proc.returncode != 0:
        err = " ".join(proc.stderr.decode("utf-8", "replace").split())
        raise PlanStateError(f"git {args[0]} failed in {repo}: {err}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def cat_batch(repo: Path, specs: list[str]) -> bytes:
    """`git cat-file --batch` over `specs` (`<treeish>:<path>` each): its raw output."""
    req = "".join(f"{x}\n" for x in specs).encode("utf-8", "surrogateescape")
    proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
        ["git", "-C", str(repo), "cat-file", "--batch"], input=req, capture_output=True,
        env=_env(None), check=False)
    return proc.stdout


def repo_prefix(repo: Path) -> str:
    return git(repo, "rev-parse", "--show-prefix").strip()


def kept(repo: Path, keep: Sequence[Path]) -> list[str]:
    """The `keep` paths inside the repo dir, repo-relative."""
    root = repo.resolve()
    return [Path(k).resolve().relative_to(root).as_posix() for k in keep
            if Path(k).resolve().is_relative_to(root) and Path(k).resolve() != root]


@contextmanager
def temp_index() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="plan07-index-") as d:
        yield str(Path(d) / "index")


def stage_worktree(repo: Path, index: str, keep: Sequence[Path]) -> None:
    """Fill the temporary index with the work tree as `git add -A` sees it (ignored files out),
    less the untracked files that are never the user's work (`junk`: virtualenvs, caches,
    node_modules, build output), ignored or not. It starts as a copy of the user's index (read
    only: its stat data spares re-hashing unchanged files, and a tracked-but-ignored file stays
    in), else from HEAD."""
    seed_index(repo, index)
    own = set(kept(repo, keep))
    tracked: list[str] = []
    untracked: list[str] = []
    listed_own: set[str] = set()
    for rec in git(repo, "ls-files", "-z", "-t", "-c", "-o", "--exclude-standard",
                   index=index).split("\0"):
        if not rec:
            continue
        path = rec[2:]
        if _under(path, own):
            listed_own.update(k for k in own if _under(path, {k}))
        else:
            (untracked if rec.startswith("? ") else tracked).append(path)
    # a `keep` path is excluded only when git lists something under it: an exclude pathspec
    # naming an ignored folder makes `git add` fail (a repo that ignores build/, where the
    # default state folder lies)
    spec = [".", *(f":(exclude){k}" for k in sorted(listed_own))]
    skipped = junk(repo, untracked, tracked)
    listed = tracked + [p for p in untracked if not _under(p, skipped)]
    files, big = _sized(repo, listed)
    raw = [p for p in raw_paths(repo, files) if p not in big]
    spec += [f":(exclude,literal){p}" for p in sorted(skipped) + raw + sorted(big)]
    git(repo, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", index=index,
        stdin="\0".join(spec).encode("utf-8", "surrogateescape"))
    add_raw(repo, index, raw)


def _sized(repo: Path, listed: Sequence[str]) -> tuple[list[str], set[str]]:
    """Of `listed`, the paths that are not symlinks, and those over
    caps.FINGERPRINT_FILE_MAX_BYTES: never hashed into the object store (a snapshot holds them
    as the user's index does; an untracked one is left out, as an ignored file is). Refused past
    caps.SNAPSHOT_MAX_FILES paths (docs/safety.md)."""
    import stat

    from plan07 import caps

    if len(listed) > caps.SNAPSHOT_MAX_FILES:
        raise InputError(f"the repository's work tree has {len(listed)} files to snapshot",
                         source=str(repo), cap=f"SNAPSHOT_MAX_FILES {caps.SNAPSHOT_MAX_FILES}")
    files, big, prefix = [], set(), str(repo).rstrip("/") + "/"
    for p in listed:
        try:
            st = os.lstat(prefix + p)
        except OSError:
            files.append(p)  # gone: git add records the removal
            continue
        if stat.S_ISLNK(st.st_mode):
            continue
        files.append(p)
        if st.st_size > caps.FINGERPRINT_FILE_MAX_BYTES:
            big.add(p)
    return files, big


# Never the user's work, so never in a snapshot when untracked, whether the repo ignores them or
# not (a repo that does not ignore its .venv would put all of it into git objects at every
# checkpoint): these folders anywhere, `TOP_JUNK` at the top of the repository (a package named
# `build` deeper down is code), `*.egg-info`, compiled Python, and any folder holding a virtual
# environment (pyvenv.cfg) whatever its name. A tracked file is never skipped.
JUNK_DIRS = frozenset({".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache",
                       ".ruff_cache", ".hypothesis", ".tox", ".nox", ".eggs", "node_modules",
                       ".ipynb_checkpoints"})
TOP_JUNK = frozenset({"build", "dist"})
JUNK_FILES = (".pyc", ".pyo")


def junk(repo: Path, untracked: Sequence[str], tracked: Sequence[str]) -> set[str]:
    """Of the `untracked` paths (repo-relative), the junk as the fewest paths to skip: a junk
    folder holding no tracked file stands for everything under it."""
    with_tracked = {"/".join(p.split("/")[:i]) for p in tracked
                    for i in range(1, p.count("/") + 1)}
    venv: dict[str, bool] = {}

    def is_venv(folder: str) -> bool:
        if folder not in venv:
            venv[folder] = (repo / folder / "pyvenv.cfg").is_file()
        return venv[folder]

    out: set[str] = set()
    for path in untracked:
        parts = path.split("/")
        hit = None
        for i, name in enumerate(parts[:-1]):
            folder = "/".join(parts[: i + 1])
            if name in JUNK_DIRS or name.endswith(".egg-info") or (i == 0 and name in TOP_JUNK) \
                    or is_venv(folder):
                hit = folder if folder not in with_tracked else path
                break
        if hit is None and path.endswith(JUNK_FILES):
            hit = path
        if hit is not None:
            out.add(hit)
    return {p for p in out if not _under(p, out, proper=True)}


def _under(path: str, folders: set[str], *, proper: bool = False) -> bool:
    """`path` is one of `folders` (unless `proper`) or lies under one."""
    parts = path.split("/")
    return any("/".join(parts[:i]) in folders for i in range(1, len(parts) + (not proper)))


def raw_paths(repo: Path, paths: Sequence[str], *, index: str | None = None) -> list[str]:
    """Of `paths` (repo-relative), those with a `working-tree-encoding` attribute: git would
    re-encode them on the way in and out and refuses a file its charset cannot decode (sphinx
    names `iso-8859`, which iconv does not know). plan07 keeps their bytes as they are: the
    snapshot stores them unconverted and a restore writes them back unconverted. With `index`,
    the attributes are those of the index's own .gitattributes (a snapshot's, at restore)."""
    if not paths:
        return []
    cached = ["--cached"] if index is not None else []
    out = git(repo, "check-attr", "-z", "--stdin", *cached, "working-tree-encoding",
              index=index, stdin="\0".join(paths).encode("utf-8", "surrogateescape"))
    values = out.split("\0")[2::3]  # path NUL attribute NUL value NUL, in the input's order
    return [p for p, v in zip(paths, values, strict=True)
            if v not in ("unspecified", "unset", "set")]


def add_raw(repo: Path, index: str, paths: Sequence[str]) -> None:
    """Stage `paths` (repo-relative) byte for byte (`hash-object --no-filters`); one that is no
    longer in the work tree leaves the index."""
    if not paths:
        return
    prefix = repo_prefix(repo)
    present = [p for p in paths if (repo / p).is_file()]
    shas = git(repo, "hash-object", "-w", "--no-filters", "--", *present).split() \
        if present else []
    blob = dict(zip(present, shas, strict=True))
    lines = []
    for p in paths:
        if p in blob:
            mode = "100755" if (repo / p).stat().st_mode & 0o100 else "100644"
            lines.append(f"{mode} {blob[p]}\t{prefix}{p}")
        else:
            lines.append(f"0 {'0' * 40}\t{prefix}{p}")
    git(repo, "update-index", "-z", "--index-info", index=index,
        stdin="\0".join(lines).encode("utf-8", "surrogateescape") + b"\0")


def write_raw(repo: Path, index: str, paths: Sequence[str]) -> None:
    """Write `paths` (repo-relative) from `index` back byte for byte (`cat-file`, no filter):
    the counterpart of `add_raw`."""
    if not paths:
        return
    prefix = repo_prefix(repo)
    entries = {}
    for rec in git(repo, "ls-files", "-s", "-z", "--full-name", "--",
                   *(f":(literal){p}" for p in paths), index=index).split("\0"):
        meta, _, path = rec.partition("\t")
        if rec and path.startswith(prefix):
            mode, sha = meta.split()[:2]
            entries[path[len(prefix):]] = (mode, sha)
    for p in paths:
        mode, sha = entries[p]
        proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
            ["git", "-C", str(repo), "cat-file", "blob", sha], capture_output=True,
            env=_env(None), check=False)
        if proc.returncode != 0:
            raise PlanStateError(f"git cat-file failed in {repo}: "
                                 f"{' '.join(proc.stderr.decode('utf-8', 'replace').split())}")
        target = repo / p
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(proc.stdout)
        target.chmod(0o755 if mode == "100755" else 0o644)


def blobs(repo: Path, index: str) -> set[str]:
    """Files (blobs and symlinks, not submodules) in the index under the repo dir, repo-relative."""
    prefix = repo_prefix(repo)
    out = set()
    for rec in git(repo, "ls-files", "-s", "-z", "--full-name", index=index).split("\0"):
        if not rec:
            continue
        meta, _, path = rec.partition("\t")
        if meta.split()[0] in BLOB_MODES and path.startswith(prefix):
            out.add(path[len(prefix):])
    return out


def set_ref(repo: Path, ref: str, commit: str) -> None:
    git(repo, "update-ref", ref, commit)


def ref_target(repo: Path, ref: str) -> str | None:
    """The commit `ref` points at, or None when it does not exist."""
    try:
        return git(repo, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}").strip()
    except PlanStateError:
        return None


def has_head(repo: Path) -> bool:
    try:
        git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    except PlanStateError:
        return False
    return True


def seed_index(repo: Path, index: str) -> bool:
    """Start the temporary `index` as a copy of the user's index (read only), else from HEAD;
    False when there is neither (the index is left absent)."""
    user_index = _user_index(repo)
    if user_index.is_file():
        # copy2 keeps the index file's mtime, so git's racy-entry check still sees a file
        # changed in the same second as the user's last index write
        shutil.copy2(user_index, index)
        return True
    if has_head(repo):
        git(repo, "read-tree", "HEAD", index=index)
        return True
    return False


_USER_INDEX: dict[str, Path] = {}  # repo -> its index file, seen in this process (speed)


def _user_index(repo: Path) -> Path:
    """The user's index file (`rev-parse --git-path index`); asked again when the one found
    before is no longer a file."""
    key = str(Path(repo).absolute())
    known = _USER_INDEX.get(key)
    if known is not None and known.is_file():
        return known
    path = Path(git(repo, "rev-parse", "--git-path", "index").strip())
    if not path.is_absolute():
        path = Path(key) / path
    _USER_INDEX[key] = path
    return path


def user_index_tree(repo: Path) -> str:
    """The tree of the user's index, written without changing it (through a temporary copy)."""
    with temp_index() as index:
        if not seed_index(repo, index):
            git(repo, "read-tree", "--empty", index=index)
        return git(repo, "write-tree", index=index).strip()
