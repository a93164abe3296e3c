"""A new plan committed to its state dir, write-ahead (docs/safety.md "Crash order"). I/O.

Everything that can refuse ran before (`state.fit`): here, under the plan's lock, an older
plan's half-done steps are recovered, the new plan's sidecars are written, then its CP0 record
and snapshot, then plan.json (the commit point); only after that goes what the replaced plan
kept. A kill anywhere leaves the older plan whole, or the new one, never a mix: a half-written
new plan is discarded by the next command (`records.recover`), never adopted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plan07.errors import Plan07Error, PlanStateError
from plan07.model import PlanArtifact
from plan07.store import records, state


def load_or_none(d: Path) -> PlanArtifact | None:
    """The plan in `d`, or None when there is none (or it cannot be read)."""
    if not state.exists(d):
        return None
    try:
        return state.load(d)
    except Plan07Error:
        return None


def commit_new_plan(d: Path, artifact: PlanArtifact, prepared: state.Prepared, *,
                    cp0_ref: str | None, cp0_tree: str | None,
                    write_sidecars: Callable[[], None],
                    drop_sidecars: Callable[[], None]) -> None:
    """Write `artifact` (made ready as `prepared`) as the plan in `d`. `write_sidecars` writes
    what plan.json will name (before it); `drop_sidecars` removes the ones it does not name
    (after it)."""
    with state.lock(d):
        older = load_or_none(d)
        if older is not None:
            records.recover(d, older)
        write_sidecars()
        # the plan state as plan.json holds it (a large evidence bundle in its sidecar)
        taken, seq = records.record(d, prepared.out, artifact.checkpoints[0], check_owner=False,
                                    seq=1, tree=cp0_tree)
        if taken.git_ref != cp0_ref or seq != 1:
            raise PlanStateError(f"the CP0 snapshot went to {taken.git_ref}, not {cp0_ref}")
        state.write(d, artifact, prepared)  # the commit point: plan.json names the new plan
        records.clear_other_plans(d, artifact.plan_id)
        used = {o.file for o in (artifact.audit_overflow, artifact.revisions_overflow) if o}
        for stale in (state.AUDIT_OVERFLOW, state.REVISIONS_OVERFLOW):
            if stale not in used:
                (d / stale).unlink(missing_ok=True)
        state.drop_evidence_except(d, {artifact.evidence_file})
        drop_sidecars()


# audit events that record no work: the plan's own making, a hand-out, a check not judged
_NO_PROGRESS = {"planned", "handed_out", "inconclusive"}


def refuse_over_progress(d: Path) -> None:
    """`create` without `replace` over a plan that has progress: refused, naming it. A plan that
    cannot be read is no plan to keep (`create` replaces it, as before)."""
    art = load_or_none(d)
    if art is None:
        return
    done = sum(n.state == "complete" for n in art.nodes)
    work = [r for r in art.audit if r.event not in _NO_PROGRESS
            and not (r.event == "checkpoint" and r.obligation == art.checkpoints[0].id)]
    if not (done or work or art.audit_overflow or art.confirmed_criteria):
        return
    raise PlanStateError(
        f"the plan in {d} ({art.plan_id}) has progress: {done} of {len(art.nodes)} "
        f"obligations complete, {len(work)} recorded step(s); nothing was changed: pass "
        "--replace to start over (its checkpoints are dropped), or --state DIR to plan beside "
        "it", reason="has_progress")
