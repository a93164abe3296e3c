"""Git-backed checkpoints of the target repository's files (§3.3 step 4, design.md). I/O: runs git.

A snapshot is a commit object of plan07's own under `refs/plan07/<plan_id>/<CP>`, built through a
temporary GIT_INDEX_FILE (a copy of the user's index, `add -A`, `write-tree`, `commit-tree`), so
the user's branch, index, stash and HEAD are never touched. A file with a `working-tree-encoding`
attribute is kept byte for byte (no re-encoding either way). `restore` writes the snapshot's
files back and removes files added since, never touching `.git`, ignored files, or the paths in
`keep` (plan07's own state directory). A directory that is not a git work tree has no snapshots.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    spec = _pathspec(repo, keep)
    listed = _git(repo, "ls-files", "-z", "-c", "-o", "--exclude-standard", "--", *spec,
                  index=index).split("\0")
    raw = _raw_paths(repo, [p for p in listed if p and not (repo / p).is_symlink()])
    spec += [f":(exclude,literal){p}" for p in raw]
    _git(repo, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", index=index,
         stdin="\0".join(spec).encode("utf-8", "surrogateescape"))
    _add_raw(repo, index, raw)


def _raw_paths(repo: Path, paths: Sequence[str], *, index: str | None = None) -> list[str]:
    """Of `paths` (repo-relative), those with a `working-tree-encoding` attribute: git would
    re-encode them on the way in and out and refuses a file its charset cannot decode (sphinx
    names `iso-8859`, which iconv does not know). plan07 keeps their bytes as they are: the
    snapshot stores them unconverted and a restore writes them back unconverted. With `index`,
    the attributes are those of the index's own .gitattributes (a snapshot's, at restore)."""
    if not paths:
        return []
    cached = ["--cached"] if index is not None else []
    out = _git(repo, "check-attr", "-z", "--stdin", *cached, "working-tree-encoding",
               index=index, stdin="\0".join(paths).encode("utf-8", "surrogateescape"))
    values = out.split("\0")[2::3]  # path NUL attribute NUL value NUL, in the input's order
    return [p for p, v in zip(paths, values, strict=True)
            if v not in ("unspecified", "unset", "set")]


def _add_raw(repo: Path, index: str, paths: Sequence[str]) -> None:
    """Stage `paths` (repo-relative) byte for byte (`hash-object --no-filters`); one that is no
    longer in the work tree leaves the index."""
    if not paths:
        return
    prefix = _prefix(repo)
    present = [p for p in paths if (repo / p).is_file()]
    shas = _git(repo, "hash-object", "-w", "--no-filters", "--", *present).split() \
        if present else []
    blob = dict(zip(present, shas, strict=True))
    lines = []
    for p in paths:
        if p in blob:
            mode = "100755" if (repo / p).stat().st_mode & 0o100 else "100644"
            lines.append(f"{mode} {blob[p]}\t{prefix}{p}")
        else:
            lines.append(f"0 {'0' * 40}\t{prefix}{p}")
    _git(repo, "update-index", "-z", "--index-info", index=index,
         stdin="\0".join(lines).encode("utf-8", "surrogateescape") + b"\0")


def _write_raw(repo: Path, index: str, paths: Sequence[str]) -> None:
    """Write `paths` (repo-relative) from `index` back byte for byte (`cat-file`, no filter):
    the counterpart of `_add_raw`."""
    if not paths:
        return
    prefix = _prefix(repo)
    entries = {}
    for rec in _git(repo, "ls-files", "-s", "-z", "--full-name", "--",
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
    parents = ["-p", "HEAD"] if _has_head(repo) else []
    msg = f"plan07 {plan_id} checkpoint {cp_id}"
    return _git(repo, "commit-tree", tree, *parents, "-m", msg).strip()


def set_ref(repo: Path, ref: str, commit: str) -> None:
    _git(repo, "update-ref", ref, commit)


def ref_target(repo: Path, ref: str) -> str | None:
    """The commit `ref` points at, or None when it does not exist."""
    try:
        return _git(repo, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}").strip()
    except PlanStateError:
        return None


def _has_head(repo: Path) -> bool:
    try:
        _git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    except PlanStateError:
        return False
    return True


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
        _git(repo, "rev-parse", "--verify", "-q", f"{source}^{{commit}}")
    except PlanStateError:
        raise PlanStateError(f"checkpoint ref {ref} not found in {repo}; "
                             "`git for-each-ref refs/plan07` lists what exists") from None
    ref = source
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
        raw = set(_raw_paths(repo, sorted(wanted), index=then_index))
        if wanted - raw:
            # checkout-index takes paths relative to the repo dir (cwd), like `git add`
            paths = "\0".join(sorted(wanted - raw)).encode("utf-8", "surrogateescape")
            _git(repo, "checkout-index", "-f", "-z", "--stdin", index=then_index, stdin=paths)
        _write_raw(repo, then_index, sorted(raw))
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
    with _temp_index() as now_index, _temp_index() as then_index:
        _stage_worktree(repo, now_index, keep)
        _git(repo, "read-tree", ref, index=then_index)
        root = repo.resolve()
        wanted = _blobs(repo, then_index)
        current = _blobs(repo, now_index)
        # an ignored file the snapshot has would be overwritten: save it too
        forced = sorted(p for p in wanted - current if (root / p).is_file()
                        and not (root / p).is_symlink())
        raw = _raw_paths(repo, forced)
        forced = [p for p in forced if p not in raw]
        if forced:
            paths = "\0".join(forced).encode("utf-8", "surrogateescape")
            _git(repo, "add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul",
                 index=now_index, stdin=paths)
        _add_raw(repo, now_index, raw)
        tree = _git(repo, "write-tree", index=now_index).strip()
        then_tree = _git(repo, "write-tree", index=then_index).strip()
    if tree == then_tree:
        return None
    head = ["-p", "HEAD"] if _has_head(repo) else []
    user_tree = _user_index_tree(repo)
    index_commit = _git(repo, "commit-tree", user_tree, *head, "-m",
                        f"index on plan07 {plan_id} before restoring {ref}").strip()
    saved = _git(repo, "commit-tree", tree, *head, "-p", index_commit, "-m",
                 f"plan07 {plan_id}: work tree before restoring {ref}").strip()
    existing = _git(repo, "for-each-ref", "--format=%(refname)", f"{SAVED_ROOT}/{plan_id}/")
    n = 1 + max((int(r.rsplit("/", 1)[1]) for r in existing.split()
                 if r.rsplit("/", 1)[1].isdigit()), default=0)
    out = f"{SAVED_ROOT}/{plan_id}/{n}"
    _git(repo, "update-ref", out, saved)
    return out


def _user_index_tree(repo: Path) -> str:
    """The tree of the user's index, written without changing it (through a temporary copy)."""
    with _temp_index() as index:
        user_index = Path(_git(repo, "rev-parse", "--git-path", "index").strip())
        if not user_index.is_absolute():
            user_index = repo / user_index
        if user_index.is_file():
            shutil.copy2(user_index, index)
        elif _has_head(repo):
            _git(repo, "read-tree", "HEAD", index=index)
        else:
            _git(repo, "read-tree", "--empty", index=index)
        return _git(repo, "write-tree", index=index).strip()


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
# The plan state at each reached checkpoint: `<state>/checkpoints/<plan_id>/<CP>.<seq>.json`, so
# rollback and resume restore the plan as well as the files. `seq` orders them (a CP id can be
# reached again after a replan renumbers the schedule; the latest one wins).
#
# Write-ahead (issue 15): reaching a checkpoint writes, in this order, (1) the snapshot's commit
# object (invisible), (2) the record, naming the ref and the commit, (3) the ref, (4) plan.json
# with `checkpoint_seq` = the record's seq: that rename is the commit point. A record whose seq
# is above plan.json's `checkpoint_seq` is a half-done step (plan07 was killed between 2 and 4):
# `recover` discards it, its ref first (only when the ref still points at the record's commit),
# then the record, so any prefix of either sequence is recoverable and a ref is never left
# without the record that owns it. Records of a plan id other than plan.json's are those of an
# older plan this one replaced, or of a new plan killed before its plan.json was written: they
# are discarded too. Every step runs under plan.lock, so a record above the mark seen there is
# always a dead writer's.

CHECKPOINT_DIR = "checkpoints"
_RECORD = re.compile(r"^(?P<cp>CP[0-9]+)\.(?P<seq>[0-9]+)\.json$")


@dataclass(frozen=True)
class Reached:
    seq: int
    checkpoint: Checkpoint
    plan: PlanArtifact
    commit: str | None = None  # the snapshot commit (None: a record made before issue 15)

    @property
    def source(self) -> str | None:
        """What to restore the files from: the record's own commit, else its ref."""
        return self.commit or self.checkpoint.git_ref


@dataclass(frozen=True)
class Restored:
    """What a rollback or resume did: the checkpoint returned to, its git ref (None outside a
    git work tree: files were not touched), the files removed because they were added since, and
    the stash-like ref that keeps what the restore overwrote or removed (None: nothing was)."""

    checkpoint: str
    git_ref: str | None
    removed: list[str]
    saved: str | None = None


def records_dir(state_dir: Path, plan_id: str) -> Path:
    ref_name(plan_id, "CP0")  # a plan id that cannot name a ref cannot name a directory either
    return state_dir / CHECKPOINT_DIR / plan_id


def _files(state_dir: Path, plan_id: str) -> list[tuple[int, str, Path]]:
    """(seq, CP id, path) of every record file of `plan_id`, by name only (no read)."""
    d = records_dir(state_dir, plan_id)
    out = []
    for f in d.iterdir() if d.is_dir() else []:
        m = _RECORD.match(f.name)
        if m:
            out.append((int(m["seq"]), m["cp"], f))
    return sorted(out)


def _read(f: Path) -> dict[str, Any]:
    from plan07.boundedio import loads, read_bytes

    try:
        data = loads(read_bytes(f, what="checkpoint record"), source=str(f))
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        return data
    except (InputError, TypeError, UnicodeDecodeError) as exc:
        raise InputError(f"corrupt checkpoint record: {exc}; delete it to fall back to an "
                         "earlier checkpoint", source=str(f)) from None


def reached(state_dir: Path, plan_id: str, *, upto: int | None = None) -> list[Reached]:
    """Every committed checkpoint record of `plan_id`, oldest first: those with seq <= `upto`
    (plan.json's `checkpoint_seq`; None: a plan.json written before the mark existed, every
    record counts)."""
    out = []
    for seq, _, f in _files(state_dir, plan_id):
        if upto is not None and seq > upto:
            continue
        data = _read(f)
        try:
            commit = data.get("commit")
            out.append(Reached(int(data["seq"]), Checkpoint.model_validate(data["checkpoint"]),
                               PlanArtifact.model_validate(data["plan"]),
                               commit if isinstance(commit, str) else None))
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise InputError(f"corrupt checkpoint record: {exc}; delete it to fall back to an "
                             "earlier checkpoint", source=str(f)) from None
    return out


def last_seq(state_dir: Path, plan_id: str) -> int:
    return max((seq for seq, _, _ in _files(state_dir, plan_id)), default=0)


def _owned(state_dir: Path, plan_id: str, cp_id: str) -> bool:
    return any(cp == cp_id for _, cp, _ in _files(state_dir, plan_id))


def planned_ref(state_dir: Path, repo: Path | None, plan_id: str, cp_id: str) -> str | None:
    """The ref a snapshot of `cp_id` goes under (None outside a git work tree). Refused
    (PlanStateError) when that ref exists and no checkpoint record in `state_dir` owns it: it
    belongs to another plan with the same plan_id, whose rollback it would corrupt (a crash of
    this plan never leaves such a ref: the record is written before the ref, and discarded
    after it)."""
    if repo is None or not is_git_tree(repo):
        return None
    ref = ref_name(plan_id, cp_id)
    if ref_target(repo, ref) is not None and not _owned(state_dir, plan_id, cp_id):
        raise PlanStateError(
            f"checkpoint ref {ref} already exists in {repo} and belongs to another plan with "
            f"plan_id {plan_id!r}; plan again with a fresh plan_id (or delete the ref: "
            f"`git update-ref -d {ref}`)")
    return ref


def record(state_dir: Path, art: PlanArtifact, cp: Checkpoint, *,
           check_owner: bool = True, seq: int | None = None,
           tree: str | None = None) -> tuple[Checkpoint, int]:
    """Snapshot the repo (when a git tree) and record the plan state at `cp`, write-ahead (see
    above): returns `cp` with its `git_ref`, and the record's seq, which the caller puts in
    `art.checkpoint_seq` before it saves plan.json (the commit point). The state dir itself is
    never part of a snapshot. A ref of another plan is never overwritten (`planned_ref`;
    `check_owner=False` when the caller has checked). `tree`: the content the last check ran on
    (`tree_of`), recorded instead of the live tree. Call under plan.lock."""
    from plan07.boundedio import write_atomic
    from plan07.sandbox import redact

    discard_pending(state_dir, art)
    repo = Path(art.repo) if art.repo else None
    if check_owner and repo is not None:
        planned_ref(state_dir, repo, art.plan_id, cp.id)
    commit = snapshot_commit(repo, art.plan_id, cp.id, keep=[state_dir], tree=tree) \
        if repo else None
    ref = ref_name(art.plan_id, cp.id) if commit else None
    cp = cp.model_copy(update={"git_ref": ref})
    if seq is None:
        seq = max(art.checkpoint_seq or 0, last_seq(state_dir, art.plan_id)) + 1
    d = records_dir(state_dir, art.plan_id)
    d.mkdir(parents=True, exist_ok=True)
    plan = art.model_dump(mode="json", by_alias=True)
    plan["checkpoint_seq"] = seq
    for c in plan["checkpoints"]:
        if c["id"] == cp.id:
            c["git_ref"] = ref
    body = {"seq": seq, "plan_id": art.plan_id, "checkpoint": cp.model_dump(mode="json"),
            "commit": commit, "plan": plan}
    write_atomic(d / f"{cp.id}.{seq}.json", redact(json.dumps(body, ensure_ascii=False)))
    if repo is not None and ref is not None and commit is not None:
        set_ref(repo, ref, commit)
    return cp, seq


def _discard(state_dir: Path, f: Path, default_repo: Path | None,
             fallback: str | None = None) -> None:
    """Drop one record: its ref first (only when it still points at the record's commit: then
    it goes back to `fallback`, the commit of an older committed record of the same CP, or is
    deleted), then the file."""
    try:
        data = _read(f)
    except InputError:
        data = {}
    ref = (data.get("checkpoint") or {}).get("git_ref")
    commit = data.get("commit")
    plan = data.get("plan")
    repo_s = plan.get("repo") if isinstance(plan, dict) else None
    repo = Path(repo_s) if repo_s else default_repo
    if ref and commit and repo is not None and repo.is_dir() and is_git_tree(repo) \
            and ref.startswith(REF_ROOT + "/") and ref_target(repo, ref) == commit:
        if fallback:
            set_ref(repo, ref, fallback)
        else:
            delete_refs(repo, [ref])
    f.unlink(missing_ok=True)


def _commit_of(f: Path) -> str | None:
    try:
        c = _read(f).get("commit")
    except InputError:
        return None
    return c if isinstance(c, str) else None


def discard_pending(state_dir: Path, art: PlanArtifact) -> list[str]:
    """Discard this plan's half-done steps: records above `art.checkpoint_seq` (see above).
    Returns the record files dropped."""
    if art.checkpoint_seq is None:
        return []
    repo = Path(art.repo) if art.repo else None
    files = _files(state_dir, art.plan_id)
    out = []
    for seq, cp_id, f in reversed(files):
        if seq > art.checkpoint_seq:
            older = [g for s2, c2, g in files if c2 == cp_id and s2 <= art.checkpoint_seq]
            _discard(state_dir, f, repo, _commit_of(older[-1]) if older else None)
            out.append(f.name)
    return out


def recover(state_dir: Path, art: PlanArtifact) -> list[str]:
    """Repair what a killed plan07 left, under plan.lock: this plan's half-done checkpoint
    steps, the records of other plan ids (a replaced plan, or a new one killed before its
    plan.json), legacy `checkpoints/CP*.json` files of other plans, and temp files. Cheap when
    there is nothing to do (directory listings only). Returns what was dropped."""
    out = discard_pending(state_dir, art)
    root = state_dir / CHECKPOINT_DIR
    repo = Path(art.repo) if art.repo else None
    for d in root.iterdir() if root.is_dir() else []:
        if d.is_dir() and d.name != art.plan_id and not d.is_symlink():
            for f in sorted(d.iterdir()):
                if _RECORD.match(f.name):
                    _discard(state_dir, f, repo)
                    out.append(f"{d.name}/{f.name}")
                elif f.name.startswith(".") and f.name.endswith(".tmp"):
                    f.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                d.rmdir()
    for tmp in [*state_dir.glob(".*.tmp"), *root.glob("*/.*.tmp")]:
        tmp.unlink(missing_ok=True)
        out.append(tmp.name)
    return out


def forget(state_dir: Path, repo: Path | None, records: Sequence[Reached],
           keep: Sequence[Reached] = ()) -> None:
    """Drop checkpoint records (their git refs first), e.g. those after the one rolled back to
    (call after plan.json no longer counts them: its `checkpoint_seq` is below theirs). A ref
    an older kept record of the same CP id shares goes back to that record's commit."""
    for r in sorted(records, key=lambda r: -r.seq):
        f = records_dir(state_dir, r.plan.plan_id) / f"{r.checkpoint.id}.{r.seq}.json"
        older = [k for k in keep if k.checkpoint.id == r.checkpoint.id]
        _discard(state_dir, f, repo, older[-1].commit if older else None)


def clear_other_plans(state_dir: Path, plan_id: str) -> None:
    """After a new plan's plan.json is written: the older plans' records go (their refs stay in
    the repo, under their own plan ids)."""
    root = state_dir / CHECKPOINT_DIR
    for d in root.iterdir() if root.is_dir() else []:
        if d.is_dir() and d.name != plan_id and not d.is_symlink():
            shutil.rmtree(d, ignore_errors=True)
    for f in root.glob("CP*.json") if root.is_dir() else []:  # the pre-issue-15 layout
        f.unlink(missing_ok=True)


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
