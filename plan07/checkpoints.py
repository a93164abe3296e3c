"""The repository's files at the plan's checkpoints (§3.3 step 4, §3.7 resumption), the effects
the Planner (plan07.api) runs inside its transactions: a checkpoint reached is audited,
snapshotted and recorded; a return (rollback, resume) restores the files and the plan state; a
node whose retries are spent leaves no failed edit under the next hand-out. I/O: git, the state
dir (plan07.store.records).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plan07.errors import PlanStateError
from plan07.model import Checkpoint, ObservedChange, PlanArtifact, PlanNode, Verdict
from plan07.plan import amend, artifact
from plan07.plan.observed import Adapted
from plan07.store import records, state
from plan07.store.records import Restored


def reached(state_dir: Path, art: PlanArtifact, cp: Checkpoint, *,
            tree: str | None = None) -> None:
    """A checkpoint was reached (every earlier obligation validated): audited, the repo's files
    snapshotted under refs/plan07/<plan>/<CP> when it is a git tree (`cp.git_ref`), and the plan
    state recorded beside plan.json for rollback/resume."""
    from plan07.gate.world import git_tree

    artifact.record(art, cp.id, "checkpoint", artifact.checkpoint_trace(cp),
                    time=artifact.now())
    # write-ahead (docs/safety.md): the record, then its ref; plan.json, saved by the caller's
    # transaction with the record's seq, is the commit point
    taken, art.checkpoint_seq = records.record(state_dir, art, cp, tree=git_tree(tree))
    for i, c in enumerate(art.checkpoints):
        if c.id == cp.id:
            art.checkpoints[i] = c.model_copy(update={"git_ref": taken.git_ref})


def leave_no_failed_edit(state_dir: Path, art: PlanArtifact, node_id: str) -> None:
    """`node_id` failed past its retry bound: the repository's files go back to the content the
    last validated check ran on (the state before its edit; what the files held is saved first,
    stash-like, as a rollback saves it), so the next hand-out starts from a validated state.
    Outside git there is no snapshot to return to: the plan halts, and `plan07 feedback` or the
    user moves it on."""
    try:
        saved = put_back_edit(state_dir, art)
    except PlanStateError:
        art.halted = (f"{node_id} failed past its retry bound and its edit cannot be undone "
                      "(no git snapshot of the state before it): fix the repository, then "
                      "`plan07 rollback` or `plan07 feedback`")
        artifact.record(art, node_id, "halted", art.halted, time=artifact.now())
        return
    artifact.record(art, node_id, "restored", "retries spent: the files are back as the last "
                    f"validated check saw them{kept_at(saved)}", time=artifact.now())


def put_back_edit(state_dir: Path, art: PlanArtifact) -> str | None:
    """The repository's files back at the content the last validated check ran on (CP0's when
    none ran), what they held saved first, stash-like: the saved ref (None: nothing differed).
    PlanStateError outside git (no snapshot to go back to)."""
    from plan07.store import checkpoint

    gate = art.gate
    trees = [r.tree for r in gate.validated.values() if r.tree] if gate else []
    last = trees[-1] if trees else (gate.cp0_tree if gate else None)
    repo = Path(art.repo) if art.repo else None
    if last is None or last.startswith("stat:") or repo is None:
        raise PlanStateError("no git snapshot")
    saved = checkpoint.preserve(repo, art.plan_id, last, keep=[state_dir])
    checkpoint.put_back(repo, last, keep=[state_dir])
    return saved


def kept_at(saved: str | None) -> str:
    """Where a put-back edit is saved, as a clause of an audit line."""
    return f"; its edit is saved in {saved} (`git stash apply --index {saved}` brings it " \
           "back)" if saved else ""


def set_aside(state_dir: Path, art: PlanArtifact, node: PlanNode, done: Adapted,
              changes: Sequence[ObservedChange]) -> Verdict:
    """`node`'s observed edit narrows what `done.set_aside_for` (pending) still use, or the step
    it merged into waits for them (plan07.plan.observed): its files go back to the last
    checkpoint, the edit saved stash-like, and those are handed out first; the verdict says so
    (nothing checked). Outside git nothing can be put back: the plan halts, the edit stays, and
    the user moves it on. Inside the caller's transaction."""
    from plan07.vocab import classify

    ahead, step = ", ".join(done.set_aside_for), done.merged_into or node.id
    try:
        saved = put_back_edit(state_dir, art)
        where = kept_at(saved)
        if saved:  # under an obligation of the edit: a merged step's id does not outlive it
            art.set_aside = {**(art.set_aside or {}), (node.members or [node.id])[0]: saved}
    except PlanStateError:
        art.halted = (f"{node.id}'s edit has to wait for {ahead} and it cannot be put aside "
                      "(no git snapshot): undo it, then `plan07 next`")
        artifact.record(art, node.id, "halted", art.halted, time=artifact.now())
        where = ""
    why = (f"{step}, which lands it with {', '.join(done.merged)}, waits for {ahead}"
           if done.merged_into else f"the edit narrows what {ahead} still use; they rebind "
           "first (rebind before narrow)")
    return Verdict(
        node_id=node.id, passed=False, check=node.validation, kind=classify(node.validation),
        set_aside_for=list(done.set_aside_for), merged=list(done.merged),
        observed=[f"{c.kind}: {c.what}" for c in changes][:16],
        output_tail=f"not checked: {why}; {step} comes again after them with the edit; the "
                    f"files are back at the last checkpoint{where}")


def saved_for(art: PlanArtifact, node: PlanNode) -> list[str]:
    """The refs the edits of `node` (and of the members it holds) were saved in when they were
    set aside: what its hand-out brings back."""
    aside = art.set_aside or {}
    return [aside[m] for m in dict.fromkeys([node.id, *node.members]) if m in aside]


def landed(art: PlanArtifact, node_id: str) -> None:
    """`node_id` passed: the edits saved for it and its members are in; none comes back."""
    node = next((n for n in art.nodes if n.id == node_id), None)
    for m in [node_id, *(node.members if node else [])]:
        (art.set_aside or {}).pop(m, None)


def return_to(state_dir: Path, to: str | None, *, files_required: bool, event: str) -> Restored:
    """Write-ahead (docs/safety.md "Killed at any moment"): the files are restored first
    (whatever the restore overwrites or removes is saved before, stash-like:
    `records.restore_files`), then plan.json commits the return (`checkpoint_seq` = the
    target's seq), and only then are the later records and their refs dropped; a kill anywhere
    leaves a state `resume` continues from."""
    with state.transaction(state_dir) as tx:
        art = tx.art
        done = records.reached(state_dir, art.plan_id, upto=art.checkpoint_seq)
        target = records.pick(done, to)
        cp, repo = target.checkpoint, Path(art.repo) if art.repo else None
        if files_required and cp.git_ref is None:
            raise PlanStateError(
                f"rollback restores files from git snapshots, and {art.repo or 'the repo'} "
                "is not a git work tree (no snapshot was taken at "
                f"{cp.id}); restore the files yourself, or `git init` before planning")
        restored = records.restore_files(state_dir, repo, art.plan_id, target)
        tx.art = amend.returned(art, target.plan, cp, event, restored.files,
                                time=artifact.now(), seq=target.seq)
        later = [r for r in done if r.seq > target.seq]
        kept = [r for r in done if r.seq <= target.seq]
    # after the commit point: the later records go, their refs first
    records.forget(state_dir, repo, later, keep=kept)
    state.drop_evidence_except(state_dir, {tx.art.evidence_file, *(
        r.plan.evidence_file for r in kept)})
    return restored
