"""Checkpoint records: the plan state at each reached checkpoint, written ahead of plan.json, and
the recovery of what a killed plan07 left. I/O: files under the state dir, refs through git.

A record is `<state>/checkpoints/<plan_id>/<CP>.<seq>.json`, so rollback and resume restore the
plan as well as the files. `seq` orders them (a CP id can be
reached again after a replan renumbers the schedule; the latest one wins).

Write-ahead (docs/safety.md "Killed at any moment"): reaching a checkpoint writes, in this order,
(1) the snapshot's commit object (invisible), (2) the record, naming the ref and the commit, (3)
the ref, (4) plan.json with `checkpoint_seq` = the record's seq: that rename is the commit point. A
record whose seq is above plan.json's `checkpoint_seq` is a half-done step (plan07 was killed
between 2 and 4): `recover` discards it, its ref first (only when the ref still points at the
record's commit), then the record, so any prefix of either sequence is recoverable and a ref is
never left without the record that owns it. Records of a plan id other than plan.json's are those
of an older plan this one replaced, or of a new plan killed before its plan.json was written: they
are discarded too. Every step runs under plan.lock, so a record above the mark seen there is
always a dead writer's.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plan07 import caps
from plan07.errors import InputError, PlanStateError
from plan07.model import Checkpoint, PlanArtifact
from plan07.store.checkpoint import (
    REF_ROOT,
    delete_refs,
    is_git_tree,
    preserve,
    ref_name,
    restore,
    snapshot_commit,
)
from plan07.store.git import ref_target, set_ref

CHECKPOINT_DIR = "checkpoints"
_RECORD = re.compile(r"^(?P<cp>CP[0-9]+)\.(?P<seq>[0-9]+)\.json$")


@dataclass(frozen=True)
class Reached:
    seq: int
    checkpoint: Checkpoint
    plan: PlanArtifact
    commit: str | None = None  # the snapshot commit (None: a record of an older plan07)

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

    @property
    def files(self) -> str:
        """What happened to the files, in the audit's words."""
        if self.git_ref is None:
            return "files not restored (not a git work tree)"
        out = f"files restored from {self.git_ref}"
        if self.removed:
            out += f", removed {', '.join(self.removed)}"
        if self.saved:
            out += f"; what the restore replaced is saved in {self.saved}"
        return out


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
    from plan07.store.boundedio import loads, read_bytes

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
            errors = getattr(exc, "errors", None)  # pydantic's: the first, with its JSON path
            why = str(exc) if not callable(errors) else (
                f"{'.'.join(map(str, errors()[0]['loc']))}: {errors()[0]['msg']}")
            raise InputError(f"corrupt checkpoint record: {why}; delete it to fall back to an "
                             "earlier checkpoint", source=str(f)) from None
    return out


def planned_ref(state_dir: Path, repo: Path | None, plan_id: str, cp_id: str) -> str | None:
    """The ref a snapshot of `cp_id` goes under (None outside a git work tree). Refused
    (PlanStateError) when that ref exists and no checkpoint record in `state_dir` owns it: it
    belongs to another plan with the same plan_id, whose rollback it would corrupt (a crash of
    this plan never leaves such a ref: the record is written before the ref, and discarded
    after it)."""
    if repo is None or not is_git_tree(repo):
        return None
    return _own_ref(repo, plan_id, cp_id, _files(state_dir, plan_id))


def _own_ref(repo: Path, plan_id: str, cp_id: str, files: Sequence[tuple[int, str, Path]]) -> str:
    """`planned_ref` over the record files `files` (listed once by the caller)."""
    ref = ref_name(plan_id, cp_id)
    if ref_target(repo, ref) is not None and not any(cp == cp_id for _, cp, _ in files):
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
    (`tree_of`), recorded instead of the live tree. Call under plan.lock.

    Its cost does not grow with the records before it: their directory is listed once, by name,
    and none of them is read (only a half-done one, when there is one to discard)."""
    from plan07.sandbox import redact
    from plan07.store.boundedio import write_atomic

    files = _files(state_dir, art.plan_id)
    dropped = set(discard_pending(state_dir, art, files))
    files = [x for x in files if x[2].name not in dropped]
    repo = Path(art.repo) if art.repo else None
    if check_owner and repo is not None and is_git_tree(repo):
        _own_ref(repo, art.plan_id, cp.id, files)
    commit = snapshot_commit(repo, art.plan_id, cp.id, keep=[state_dir], tree=tree) \
        if repo else None
    ref = ref_name(art.plan_id, cp.id) if commit else None
    cp = cp.model_copy(update={"git_ref": ref})
    if seq is None:
        seq = max(art.checkpoint_seq or 0, *(s for s, _, _ in files)) + 1
    d = records_dir(state_dir, art.plan_id)
    d.mkdir(parents=True, exist_ok=True)
    plan = art.model_dump(mode="json", by_alias=True)
    plan["checkpoint_seq"] = seq
    # the logs as plan.json keeps them inline (§3.7 caps; a return keeps the current logs, so
    # a record needs none older): a record past the caps would not load again
    plan["audit"] = plan["audit"][-caps.MAX_AUDIT_ROWS:]
    plan["revision_history"] = plan["revision_history"][-caps.MAX_REVISIONS:]
    for c in plan["checkpoints"]:
        if c["id"] == cp.id:
            c["git_ref"] = ref
    body = {"seq": seq, "plan_id": art.plan_id, "checkpoint": cp.model_dump(mode="json"),
            "commit": commit, "plan": plan}
    write_atomic(d / f"{cp.id}.{seq}.json", redact(json.dumps(body, ensure_ascii=False)))
    if repo is not None and ref is not None and commit is not None:
        set_ref(repo, ref, commit)
    return cp, seq


def restore_files(state_dir: Path, repo: Path | None, plan_id: str, target: Reached) -> Restored:
    """Put the repo's files back as they were at `target` (in a git work tree; elsewhere nothing
    is touched), saving first, stash-like, whatever the restore overwrites or removes
    (`checkpoint.preserve`). The state dir is never touched."""
    cp = target.checkpoint
    removed: list[str] = []
    saved: str | None = None
    if cp.git_ref is not None and repo is not None:
        saved = preserve(repo, plan_id, target.source or cp.git_ref, keep=[state_dir])
        removed = restore(repo, cp.git_ref, keep=[state_dir], commit=target.commit)
    return Restored(cp.id, cp.git_ref, removed, saved)


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


def discard_pending(state_dir: Path, art: PlanArtifact,
                    files: Sequence[tuple[int, str, Path]] | None = None) -> list[str]:
    """Discard this plan's half-done steps: records above `art.checkpoint_seq` (see above).
    `files`: this plan's record files when the caller has listed them. Returns the record
    files dropped."""
    if art.checkpoint_seq is None:
        return []
    repo = Path(art.repo) if art.repo else None
    files = _files(state_dir, art.plan_id) if files is None else files
    out = []
    for seq, cp_id, f in reversed(files):
        if seq > art.checkpoint_seq:
            older = [g for s2, c2, g in files if c2 == cp_id and s2 <= art.checkpoint_seq]
            _discard(state_dir, f, repo, _commit_of(older[-1]) if older else None)
            out.append(f.name)
    return out


def recover(state_dir: Path, art: PlanArtifact) -> list[str]:
    """Repair what a killed plan07 left, under plan.lock: a check still running whose plan07
    and supervisor are gone (plan07.store.running), this plan's half-done checkpoint steps,
    the records of other plan ids (a replaced plan, or a new one killed before its plan.json),
    legacy `checkpoints/CP*.json` files of other plans, and temp files. Cheap when there is
    nothing to do (directory listings only). Returns what was dropped."""
    from plan07.store import running

    running.sweep()
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
