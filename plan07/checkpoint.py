"""Git-backed checkpoints of the target repository's files (§3.3 step 4, design.md). I/O: runs git.

A snapshot is a commit object of plan07's own under `refs/plan07/<plan_id>/<CP>`, built through a
temporary GIT_INDEX_FILE (a copy of the user's index, `add -A`, `write-tree`, `commit-tree`), so
the user's branch, index, stash and HEAD are never touched. `restore` writes the snapshot's
files back and removes files added since, never touching `.git`, ignored files, or the paths in
`keep` (plan07's own state directory). A directory that is not a git work tree has no snapshots.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from plan07.errors import InputError, PlanStateError
from plan07.model import Checkpoint, PlanArtifact

REF_ROOT = "refs/plan07"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "plan07", "GIT_AUTHOR_EMAIL": "plan07@localhost",
    "GIT_COMMITTER_NAME": "plan07", "GIT_COMMITTER_EMAIL": "plan07@localhost",
}
_REF_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_BLOB_MODES = {"100644", "100755", "120000"}


def _env(index: str | None) -> dict[str, str]:
    # A GIT_DIR/GIT_WORK_TREE/GIT_INDEX_FILE inherited from a hook would point git elsewhere.
    from plan07.sandbox import tool_env

    # ...and no credential reaches git (a repo's config may name filters that run with it)
    env = {k: v for k, v in tool_env().items() if not k.startswith("GIT_")}
    env.update(_IDENTITY)
    if index is not None:
        env["GIT_INDEX_FILE"] = index
    return env


def _git(repo: Path, *args: str, index: str | None = None, stdin: bytes | None = None) -> str:
    proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=_env(index),
        check=False,
    )
    if proc.returncode != 0:
        err = " ".join(proc.stderr.decode("utf-8", "replace").split())
        raise PlanStateError(f"git {args[0]} failed in {repo}: {err}")
    return proc.stdout.decode("utf-8", "surrogateescape")


_GIT_TREES: set[str] = set()  # work trees seen in this process (a yes stays a yes; speed)


def is_git_tree(repo: Path) -> bool:
    """True iff `repo` is inside a git work tree (and git is installed)."""
    key = str(Path(repo).resolve())
    if key in _GIT_TREES and _git_dir_alive(repo):
        return True
    try:
        yes = _git(repo, "rev-parse", "--is-inside-work-tree").strip() == "true"
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


def _prefix(repo: Path) -> str:
    return _git(repo, "rev-parse", "--show-prefix").strip()


def _pathspec(repo: Path, keep: Sequence[Path]) -> list[str]:
    """`.` (the repo dir) minus every `keep` path inside it."""
    root = repo.resolve()
    spec = ["."]
    for k in keep:
        kp = Path(k).resolve()
        if kp.is_relative_to(root) and kp != root:
            spec.append(f":(exclude){kp.relative_to(root).as_posix()}")
    return spec


@contextmanager
def _temp_index() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="plan07-index-") as d:
        yield str(Path(d) / "index")


def _stage_worktree(repo: Path, index: str, keep: Sequence[Path]) -> None:
    """Fill the temporary index with the work tree as `git add -A` sees it (ignored files out).
    It starts as a copy of the user's index (read only: its stat data spares re-hashing
    unchanged files, and a tracked-but-ignored file stays in), else from HEAD."""
    user_index = Path(_git(repo, "rev-parse", "--git-path", "index").strip())
    if not user_index.is_absolute():
        user_index = repo / user_index
    if user_index.is_file():
        # copy2 keeps the index file's mtime, so git's racy-entry check still sees a file
        # changed in the same second as the user's last index write
        shutil.copy2(user_index, index)
    elif _has_head(repo):
        _git(repo, "read-tree", "HEAD", index=index)
    _git(repo, "add", "-A", "--", *_pathspec(repo, keep), index=index)


def _blobs(repo: Path, index: str) -> set[str]:
    """Files (blobs and symlinks, not submodules) in the index under the repo dir, repo-relative."""
    prefix = _prefix(repo)
    out = set()
    for rec in _git(repo, "ls-files", "-s", "-z", "--full-name", index=index).split("\0"):
        if not rec:
            continue
        meta, _, path = rec.partition("\t")
        if meta.split()[0] in _BLOB_MODES and path.startswith(prefix):
            out.add(path[len(prefix):])
    return out


def tree_of(repo: Path, *, keep: Sequence[Path] = ()) -> str | None:
    """The git tree id of the repo's files as they are now (`git add -A` into a temporary
    index, `write-tree`; nothing of the user's touched); None outside a git work tree. The gate
    takes it before a check runs, so a checkpoint certifies the content the check ran on."""
    if not is_git_tree(repo):
        return None
    with _temp_index() as index:
        _stage_worktree(repo, index, keep)
        return _git(repo, "write-tree", index=index).strip()


def changed_files(repo: Path, old: str, new: str) -> list[str]:
    """Repo-relative paths added, changed or renamed from tree-ish `old` to tree-ish `new`."""
    out = _git(repo, "diff-tree", "-r", "--no-commit-id", "--name-only", "-z",
               "--diff-filter=ACMRT", "--relative", old, new)
    return sorted(p for p in out.split("\0") if p)


def snapshot(repo: Path, plan_id: str, cp_id: str, *, keep: Sequence[Path] = (),
             tree: str | None = None) -> str | None:
    """Record the repo's file state as `refs/plan07/<plan_id>/<cp_id>`; None if not a git tree.
    `tree` (from `tree_of`, taken before the check ran) is what is recorded when given."""
    ref = ref_name(plan_id, cp_id)
    if not is_git_tree(repo):
        return None
    if tree is None:
        tree = tree_of(repo, keep=keep)
        assert tree is not None
    parents = ["-p", "HEAD"] if _has_head(repo) else []
    msg = f"plan07 {plan_id} checkpoint {cp_id}"
    commit = _git(repo, "commit-tree", tree, *parents, "-m", msg).strip()
    _git(repo, "update-ref", ref, commit)
    return ref


def _has_head(repo: Path) -> bool:
    try:
        _git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    except PlanStateError:
        return False
    return True


def restore(repo: Path, ref: str, *, keep: Sequence[Path] = ()) -> list[str]:
    """Put the repo's files back as they were at snapshot `ref`. Returns the removed paths.

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
    try:
        _git(repo, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
    except PlanStateError:
        raise PlanStateError(f"checkpoint ref {ref} not found in {repo}; "
                             "`git for-each-ref refs/plan07` lists what exists") from None
    with _temp_index() as now_index, _temp_index() as then_index:
        _stage_worktree(repo, now_index, keep)
        current = _blobs(repo, now_index)
        _git(repo, "read-tree", ref, index=then_index)
        wanted = _blobs(repo, then_index)
        kept = [Path(k).resolve() for k in keep]
        root = repo.resolve()
        wanted = {p for p in wanted if not any((root / p).resolve().is_relative_to(k)
                                               for k in kept)}
        removed = sorted(current - wanted)
        for rel in removed:
            _remove(root, rel)
        if wanted:
            # checkout-index takes paths relative to the repo dir (cwd), like `git add`
            paths = "\0".join(sorted(wanted)).encode("utf-8", "surrogateescape")
            _git(repo, "checkout-index", "-f", "-z", "--stdin", index=then_index, stdin=paths)
    return removed


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
    out = _git(repo, "for-each-ref", "--format=%(refname)", f"{REF_ROOT}/{plan_id}/")
    refs = [r for r in out.splitlines() if r]
    return sorted(refs, key=lambda r: int(re.sub(r"\D", "", r.rsplit("/", 1)[1]) or 0))


def delete_refs(repo: Path, refs: Sequence[str]) -> None:
    """Drop checkpoint refs (e.g. those after the one rolled back to)."""
    for ref in refs:
        if ref.startswith(REF_ROOT + "/"):
            _git(repo, "update-ref", "-d", ref)


# ---------------------------------------------------------------------------------------------
# The plan state at each reached checkpoint: `<state>/checkpoints/<CP>.json`, so rollback and
# resume restore the plan as well as the files. `seq` orders them (a CP id can be reached again
# after a replan renumbers the schedule; the latest one wins).

CHECKPOINT_DIR = "checkpoints"


@dataclass(frozen=True)
class Reached:
    seq: int
    checkpoint: Checkpoint
    plan: PlanArtifact


@dataclass(frozen=True)
class Restored:
    """What a rollback or resume did: the checkpoint returned to, its git ref (None outside a
    git work tree: files were not touched) and the files removed because they were added since."""

    checkpoint: str
    git_ref: str | None
    removed: list[str]


def reached(state_dir: Path) -> list[Reached]:
    """Every recorded checkpoint, oldest first (each with its plan state)."""
    out = [Reached(seq, cp, PlanArtifact.model_validate(plan))
           for seq, cp, plan, _ in _records(state_dir)]
    return sorted(out, key=lambda r: r.seq)


def _records(state_dir: Path) -> list[tuple[int, Checkpoint, dict[str, object], Path]]:
    """(seq, checkpoint, the plan state as JSON, file) of every record; the plan is not built
    into a model (what `record` and `planned_ref` need is the seq and the checkpoint)."""
    d = state_dir / CHECKPOINT_DIR
    out = []
    for f in sorted(d.glob("CP*.json")) if d.is_dir() else []:
        try:
            data = json.loads(f.read_text("utf-8"))
            if not isinstance(data["plan"], dict):
                raise TypeError("the plan state is not an object")
            out.append((int(data["seq"]), Checkpoint.model_validate(data["checkpoint"]),
                        data["plan"], f))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"corrupt checkpoint record: {exc}; delete it to fall back to an "
                             "earlier checkpoint", source=str(f)) from None
    return out


def _ref_exists(repo: Path, ref: str) -> bool:
    try:
        _git(repo, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
    except PlanStateError:
        return False
    return True


def planned_ref(state_dir: Path, repo: Path | None, plan_id: str, cp_id: str) -> str | None:
    """The ref a snapshot of `cp_id` goes under (None outside a git work tree). Refused
    (PlanStateError) when that ref exists and no checkpoint record in `state_dir` owns it: it
    belongs to another plan with the same plan_id, whose rollback it would corrupt."""
    if repo is None or not is_git_tree(repo):
        return None
    ref = ref_name(plan_id, cp_id)
    if _ref_exists(repo, ref) and ref not in {cp.git_ref for _, cp, _, _ in _records(state_dir)}:
        raise PlanStateError(
            f"checkpoint ref {ref} already exists in {repo} and belongs to another plan with "
            f"plan_id {plan_id!r}; plan again with a fresh plan_id (or delete the ref: "
            f"`git update-ref -d {ref}`)")
    return ref


def record(state_dir: Path, art: PlanArtifact, cp: Checkpoint, *,
           check_owner: bool = True, tree: str | None = None) -> Checkpoint:
    """Snapshot the repo (when a git tree) and record the plan state at `cp`; returns `cp` with
    its `git_ref`. The state dir itself is never part of a snapshot. A ref of another plan is
    never overwritten (`planned_ref`; `check_owner=False` when the caller has checked). `tree`:
    the content the last check ran on (`tree_of`), recorded instead of the live tree."""
    from plan07.state import write_atomic

    if check_owner and art.repo:
        planned_ref(state_dir, Path(art.repo), art.plan_id, cp.id)
    ref = snapshot(Path(art.repo), art.plan_id, cp.id, keep=[state_dir], tree=tree) \
        if art.repo else None
    cp = cp.model_copy(update={"git_ref": ref})
    seq = max((r[0] for r in _records(state_dir)), default=0) + 1
    d = state_dir / CHECKPOINT_DIR
    d.mkdir(parents=True, exist_ok=True)
    plan = art.model_dump(mode="json", by_alias=True)
    for c in plan["checkpoints"]:
        if c["id"] == cp.id:
            c["git_ref"] = ref
    body = {"seq": seq, "checkpoint": cp.model_dump(mode="json"), "plan": plan}
    from plan07.sandbox import redact

    write_atomic(d / f"{cp.id}.json", redact(json.dumps(body, ensure_ascii=False)))
    return cp


def forget(state_dir: Path, repo: Path | None, records: Sequence[Reached]) -> None:
    """Drop checkpoint records (and their git refs), e.g. those after the one rolled back to."""
    for r in records:
        (state_dir / CHECKPOINT_DIR / f"{r.checkpoint.id}.json").unlink(missing_ok=True)
        if repo is not None and r.checkpoint.git_ref and is_git_tree(repo):
            delete_refs(repo, [r.checkpoint.git_ref])


def clear(state_dir: Path) -> None:
    """Remove every checkpoint record (a new plan starts in this state dir)."""
    d = state_dir / CHECKPOINT_DIR
    for f in d.glob("CP*.json") if d.is_dir() else []:
        f.unlink()


def pick(records: Sequence[Reached], to: str | None) -> Reached:
    """The record to return to: `to`, or the last one reached."""
    if not records:
        raise PlanStateError("no checkpoint has been recorded for this plan; "
                             "re-run `plan07 plan` to start over")
    if to is None:
        return records[-1]
    for r in reversed(records):
        if r.checkpoint.id == to:
            return r
    raise InputError(f"checkpoint {to!r} was not reached; reached: "
                     f"{', '.join(r.checkpoint.id for r in records)}", field="--to")
