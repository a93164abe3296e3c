"""Git-backed checkpoints of the target repository's files (§3.3 step 4, design.md). I/O: runs git.

A snapshot is a commit object of plan07's own under `refs/plan07/<plan_id>/<CP>`, built through a
temporary GIT_INDEX_FILE (a copy of the user's index, `add -A`, `write-tree`, `commit-tree`), so
the user's branch, index, stash and HEAD are never touched. A file with a `working-tree-encoding`
attribute is kept byte for byte (no re-encoding either way). `restore` writes the snapshot's
files back and removes files added since, never touching `.git`, ignored files, or the paths in
`keep` (plan07's own state directory). A directory that is not a git work tree has no snapshots.
The git steps themselves (a clean environment, the temporary index, byte-for-byte files) are
plan07.store.git's; the plan state recorded at each checkpoint is plan07.store.records'.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from plan07.errors import InputError, PlanStateError
from plan07.store.git import (
    add_raw,
    blobs,
    git,
    has_head,
    raw_paths,
    set_ref,
    stage_worktree,
    temp_index,
    user_index_tree,
    write_raw,
)

REF_ROOT = "refs/plan07"
_REF_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


_GIT_TREES: set[str] = set()  # work trees seen in this process (a yes stays a yes; speed)


def is_git_tree(repo: Path) -> bool:
    """True iff `repo` is inside a git work tree (and git is installed)."""
    key = str(Path(repo).resolve())
    if key in _GIT_TREES and _git_dir_alive(repo):
        return True
    try:
        yes = git(repo, "rev-parse", "--is-inside-work-tree").strip() == "true"
    except (PlanStateError, OSError):
        return False
    if yes:
        _GIT_TREES.add(key)
    return yes


def _git_dir_alive(repo: Path) -> bool:
    """The repo, or a folder above it, still has its .git (a yes once seen is checked so)."""
    here = Path(repo).resolve()
    return any((p / ".git").exists() for p in (here, *here.parents))


def ref_name(plan_id: str, cp_id: str) -> str:
    for part, what in ((plan_id, "plan_id"), (cp_id, "checkpoint id")):
        if not _REF_PART.match(part) or ".." in part or part.endswith((".lock", ".")):
            raise InputError(f"{what} {part!r} cannot name a git ref; use letters, digits, "
                             "'-', '_' or '.'", field=what)
    return f"{REF_ROOT}/{plan_id}/{cp_id}"


def tree_of(repo: Path, *, keep: Sequence[Path] = ()) -> str | None:
    """The git tree id of the repo's files as they are now (`git add -A` into a temporary
    index, `write-tree`; nothing of the user's touched); None outside a git work tree. The gate
    takes it before a check runs, so a checkpoint certifies the content the check ran on."""
    if not is_git_tree(repo):
        return None
    with temp_index() as index:
        stage_worktree(repo, index, keep)
        return git(repo, "write-tree", index=index).strip()


def changed_files(repo: Path, old: str, new: str) -> list[str]:
    """Repo-relative paths added, changed or renamed from tree-ish `old` to tree-ish `new`."""
    out = git(repo, "diff-tree", "-r", "--no-commit-id", "--name-only", "-z",
              "--diff-filter=ACMRT", "--relative", old, new)
    return sorted(p for p in out.split("\0") if p)


def snapshot(repo: Path, plan_id: str, cp_id: str, *, keep: Sequence[Path] = (),
             tree: str | None = None) -> str | None:
    """Record the repo's file state as `refs/plan07/<plan_id>/<cp_id>`; None if not a git tree.
    `tree` (from `tree_of`, taken before the check ran) is what is recorded when given."""
    ref = ref_name(plan_id, cp_id)
    commit = snapshot_commit(repo, plan_id, cp_id, keep=keep, tree=tree)
    if commit is None:
        return None
    set_ref(repo, ref, commit)
    return ref


def snapshot_commit(repo: Path, plan_id: str, cp_id: str, *, keep: Sequence[Path] = (),
                    tree: str | None = None) -> str | None:
    """The commit object of the repo's file state (objects only: no ref is written, so a crash
    here leaves nothing anyone can see); None if not a git tree. `tree`: as for `snapshot`."""
    ref_name(plan_id, cp_id)
    if not is_git_tree(repo):
        return None
    if tree is None:
        tree = tree_of(repo, keep=keep)
        assert tree is not None
    parents = ["-p", "HEAD"] if has_head(repo) else []
    msg = f"plan07 {plan_id} checkpoint {cp_id}"
    commit = git(repo, "commit-tree", tree, *parents, "-m", msg).strip()
    if cp_id == "CP0":  # a new plan: its state folder, when inside the repo, leaves git status
        exclude_from_git(repo, keep)
    return commit


EXCLUDE_NOTE = "# plan07's state folder (kept out of `git status` and `git add` by plan07)"


def exclude_from_git(repo: Path, paths: Sequence[Path]) -> None:
    """Each of `paths` inside the repo's work tree is listed in its .git/info/exclude (the
    repository's own, never committed ignore file), once: `git status` does not show plan07's
    state folder as untracked, nor does `git add -A` take it. Nothing else is changed."""
    top, exclude = git(repo, "rev-parse", "--show-toplevel", "--git-path",
                       "info/exclude").splitlines()[:2]
    root = Path(top).resolve()
    path = Path(exclude) if Path(exclude).is_absolute() else Path(repo) / exclude
    wanted = []
    for p in paths:
        full = Path(p).resolve()
        if full != root and full.is_relative_to(root):
            wanted.append("/" + _escape(full.relative_to(root).as_posix()) + "/")
    if not wanted:
        return
    try:
        lines = path.read_text("utf-8").splitlines() if path.is_file() else []
    except (OSError, UnicodeDecodeError):
        return  # an exclude file plan07 cannot read is not plan07's to rewrite
    new = [w for w in wanted if w not in lines]
    if not new:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "" if not lines or path.read_bytes().endswith(b"\n") else "\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(head + "\n".join([EXCLUDE_NOTE, *new]) + "\n")


def _escape(rel: str) -> str:
    """A path as a literal gitignore pattern (`*?[\\` escaped, a trailing space kept)."""
    out = re.sub(r"([*?\[\\])", r"\\\1", rel)
    return out[:-1] + "\\ " if out.endswith(" ") else out


def restore(repo: Path, ref: str, *, keep: Sequence[Path] = (),
            commit: str | None = None) -> list[str]:
    """Put the repo's files back as they were at snapshot `ref` (its `commit` when the record
    knows it: a ref can have moved to a later record of the same CP). Returns the removed paths.

    Files of the snapshot are written back (changed or deleted ones); files added since (not
    ignored) are removed. `.git`, ignored files and `keep` paths are never touched; nor are the
    user's index, branch or stash.
    """
    if not is_git_tree(repo):
        raise PlanStateError(
            f"rollback needs a git work tree and {repo} is not one: plan07 keeps no file "
            "snapshots there; restore the files yourself, or `git init` before planning")
    if not ref.startswith(REF_ROOT + "/"):
        raise InputError(f"{ref!r} is not a plan07 checkpoint ref ({REF_ROOT}/...)", field="ref")
    source = commit or ref
    try:
        git(repo, "rev-parse", "--verify", "-q", f"{source}^{{commit}}")
    except PlanStateError:
        raise PlanStateError(f"checkpoint ref {ref} not found in {repo}; "
                             "`git for-each-ref refs/plan07` lists what exists") from None
    return put_back(repo, source, keep=keep)


def put_back(repo: Path, treeish: str, *, keep: Sequence[Path] = ()) -> list[str]:
    """The work tree made what `treeish` (a snapshot commit, or a tree plan07 fingerprinted)
    holds: its files written back, files added since removed (`.git`, ignored files and `keep`
    untouched). Returns the removed paths. Save first with `preserve`."""
    ref = treeish
    with temp_index() as now_index, temp_index() as then_index:
        stage_worktree(repo, now_index, keep)
        current = blobs(repo, now_index)
        git(repo, "read-tree", ref, index=then_index)
        wanted = blobs(repo, then_index)
        kept = [Path(k).resolve() for k in keep]
        root = repo.resolve()
        wanted = {p for p in wanted if not any((root / p).resolve().is_relative_to(k)
                                               for k in kept)}
        removed = sorted(current - wanted)
        for rel in removed:
            _remove(root, rel)
        raw = set(raw_paths(repo, sorted(wanted), index=then_index))
        if wanted - raw:
            # checkout-index takes paths relative to the repo dir (cwd), like `git add`
            paths = "\0".join(sorted(wanted - raw)).encode("utf-8", "surrogateescape")
            git(repo, "checkout-index", "-f", "-z", "--stdin", index=then_index, stdin=paths)
        write_raw(repo, then_index, sorted(raw))
    return removed


SAVED_ROOT = "refs/plan07-saved"


def preserve(repo: Path, plan_id: str, ref: str, *, keep: Sequence[Path] = ()) -> str | None:
    """Before `restore(repo, ref)`: save whatever it would overwrite or remove, stash-like, as
    `refs/plan07-saved/<plan_id>/<n>` and return that ref (None when the files already match
    the snapshot: nothing to lose). The saved commit's tree is the work tree as `git add -A`
    sees it (untracked files included), plus every ignored file the restore would overwrite;
    its parents are HEAD and a commit of the user's index, as `git stash` makes them, so
    `git stash apply --index REF` (or `git checkout REF -- PATH`) brings any of it back. The
    user's branch, index and stash are not touched."""
    if not is_git_tree(repo):
        return None
    with temp_index() as now_index, temp_index() as then_index:
        stage_worktree(repo, now_index, keep)
        git(repo, "read-tree", ref, index=then_index)
        root = repo.resolve()
        wanted = blobs(repo, then_index)
        current = blobs(repo, now_index)
        # an ignored file the snapshot has would be overwritten: save it too
        forced = sorted(p for p in wanted - current if (root / p).is_file()
                        and not (root / p).is_symlink())
        raw = raw_paths(repo, forced)
        forced = [p for p in forced if p not in raw]
        if forced:
            paths = "\0".join(forced).encode("utf-8", "surrogateescape")
            git(repo, "add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul",
                index=now_index, stdin=paths)
        add_raw(repo, now_index, raw)
        tree = git(repo, "write-tree", index=now_index).strip()
        then_tree = git(repo, "write-tree", index=then_index).strip()
    if tree == then_tree:
        return None
    head = ["-p", "HEAD"] if has_head(repo) else []
    user_tree = user_index_tree(repo)
    index_commit = git(repo, "commit-tree", user_tree, *head, "-m",
                       f"index on plan07 {plan_id} before restoring {ref}").strip()
    saved = git(repo, "commit-tree", tree, *head, "-p", index_commit, "-m",
                f"plan07 {plan_id}: work tree before restoring {ref}").strip()
    existing = git(repo, "for-each-ref", "--format=%(refname)", f"{SAVED_ROOT}/{plan_id}/")
    n = 1 + max((int(r.rsplit("/", 1)[1]) for r in existing.split()
                 if r.rsplit("/", 1)[1].isdigit()), default=0)
    out = f"{SAVED_ROOT}/{plan_id}/{n}"
    git(repo, "update-ref", out, saved)
    return out


def _remove(root: Path, rel: str) -> None:
    """Delete one added file and the directories its removal leaves empty (never `.git`)."""
    path = root / rel
    if ".git" in Path(rel).parts:
        return
    path.unlink(missing_ok=True)
    parent = path.parent
    while parent != root and parent.is_relative_to(root) and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


def list_refs(repo: Path, plan_id: str) -> list[str]:
    """The checkpoint refs recorded for `plan_id`, in checkpoint order (CP1, CP2, ... CP10)."""
    if not is_git_tree(repo):
        return []
    out = git(repo, "for-each-ref", "--format=%(refname)", f"{REF_ROOT}/{plan_id}/")
    refs = [r for r in out.splitlines() if r]
    return sorted(refs, key=lambda r: int(re.sub(r"\D", "", r.rsplit("/", 1)[1]) or 0))


def delete_refs(repo: Path, refs: Sequence[str]) -> None:
    """Drop checkpoint refs (e.g. those after the one rolled back to)."""
    for ref in refs:
        if ref.startswith(REF_ROOT + "/"):
            git(repo, "update-ref", "-d", ref)
