"""Changes to a plan between hand-outs, each over one loaded artifact (the Planner runs each
inside one transaction): a scoped replan spliced in or refused (§3.5 step 3), impact feedback
applied (§3.6), criteria confirmed (§3.1 step 2), a return to a checkpoint. Pure: the caller
passes the evidence and the time, and runs the model call and the rules between the steps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from plan07.errors import InputError
from plan07.model import (
    Checkpoint,
    Evidence,
    Feedback,
    Obligation,
    OrderResult,
    PlanArtifact,
    Revision,
)
from plan07.plan import artifact
from plan07.vocab import sort_ids

if TYPE_CHECKING:
    from plan07.plan.replan import Replan, ScopedCall


def keep_plan(art: PlanArtifact, node_id: str, why: str, evidence: Evidence, *,
              time: str) -> None:
    """The scoped replan fell back, or its fragment was refused: the plan stays as it was and
    the failed node is offered again."""
    artifact.record(art, node_id, "replan_kept", f"plan kept as it was: {why}", time=time)
    artifact.reschedule(art, evidence)


def apply_replan(art: PlanArtifact, call: ScopedCall, result: Replan, evidence: Evidence, *,
                 time: str) -> None:
    """Splice an accepted scoped replan in: the fragment is new work (pending), one revision,
    bounds follow the nodes (a reused id keeps its counters; the fresh fragment carries this
    replan's count). Raises (nothing changed) when the scheduler refuses the result."""
    node_id, fresh = result.failed, {o.id for o in result.added}
    failed = artifact.bounds(art, node_id)
    kept = [o for o in artifact.obligations_of(art) if o.id not in set(result.removed)]
    artifact.splice(art, [*kept, *result.added], edges=result.edges, violations=result.violations,
                    evidence=evidence, pending=fresh, roles=result.roles)
    artifact.add_revision(art, f"scoped replan after {node_id} failed: re-decomposed "
                          f"{', '.join(sort_ids(result.affected))} into "
                          f"{', '.join(sort_ids(o.id for o in result.added))}", node_id, time=time)
    if art.active in result.affected:
        art.active = None
    node_ids = {n.id for n in art.nodes}
    for nid in [*result.affected, *result.removed]:
        if nid not in node_ids:
            art.bounds.pop(nid, None)
    for n in art.nodes:
        if (set(n.members) or {n.id}) & fresh:
            b = artifact.bounds(art, n.id)
            art.bounds[n.id] = b.model_copy(update={
                "replans": max(b.replans, call.attempt),
                "retries": max(b.retries, failed.retries)})  # the bound holds across replans
    artifact.record(art, node_id, "replanned",
                    f"scoped replan of {', '.join(sort_ids(result.affected))} (failed node + "
                    f"true dependents); rules re-walked {', '.join(sort_ids(result.rewalked))}",
                    time=time)


def refuse_falsifying_complete(art: PlanArtifact, fb: Feedback) -> None:
    """A complete obligation's validation passed: feedback may not falsify it; a
    rollback to a checkpoint before it comes first. Changes nothing."""
    done = {m for n in art.nodes if n.state == "complete" for m in (n.members or [n.id])}
    hit = sorted(set(fb.falsified_obligations) & done)
    if hit:
        raise InputError(f"obligation(s) {', '.join(hit)} are complete (their validation "
                         "passed); feedback cannot falsify them: `plan07 rollback --to` a "
                         "checkpoint before them first", field="falsified_obligations")


@dataclass(frozen=True)
class Revised:
    """Impact feedback applied to the obligations (§3.6 step 1), before the rules re-walk."""

    obligations: list[Obligation]
    touched: list[str]
    removed: list[str]
    revisions: list[Revision]
    evidence: Evidence
    scope: list[Obligation]  # what the rules re-walk


def revise_feedback(art: PlanArtifact, fb: Feedback, evidence: Evidence, *,
                    time: str) -> Revised:
    """§3.6 step 1 over the plan (`revise.check_feedback` refused what it does not know): the
    revised obligations, one revision per change (numbered after the plan's), audited."""
    from plan07.plan.revise import merge_evidence, revise, rewalk_scope

    before = artifact.obligations_of(art)
    merged = merge_evidence(evidence, fb)
    new, touched, revs = revise(before, merged, fb, first_rev=artifact.next_rev(art), now=time)
    artifact.record(art, fb.caused_by, "feedback",
                    f"impact feedback: {len(fb.impact_edges)} edge(s), "
                    f"{len(fb.falsified_entities) + len(fb.falsified_obligations)} "
                    f"falsification(s) -> {len(revs)} revision(s)", time=time)
    removed = sorted({o.id for o in before} - {o.id for o in new})
    return Revised(new, touched, removed, revs, merged, rewalk_scope(new, touched))


def apply_feedback(art: PlanArtifact, rev: Revised, walked: OrderResult) -> None:
    """§3.6 step 2: splice the re-walked neighbourhood in; nodes outside it keep their edges."""
    from plan07.plan.revise import splice_edges

    hit = set(rev.touched) | set(rev.removed)
    violations = [v for v in art.violations if not set(v.nodes) & hit]
    violations += [v for v in walked.violations if set(v.nodes) & set(rev.touched)]
    artifact.splice(art, rev.obligations, evidence=rev.evidence, violations=violations,
                    edges=splice_edges(art.edges, walked.edges, rev.touched, rev.removed))
    art.evidence, art.evidence_file = rev.evidence, None
    if art.active in rev.removed:
        art.active = None
    for oid in rev.removed:
        art.bounds.pop(oid, None)
    art.revision_history.extend(rev.revisions)


def confirm(art: PlanArtifact, criteria: Iterable[int] | Literal["all"], *,
            time: str) -> list[int]:
    """§3.1 step 2: the user confirms acceptance criteria (1-based, or "all" confirmable ones);
    audited and one revision. Returns the newly confirmed numbers."""
    from plan07.plan.criteria import criteria_status

    status = criteria_status(art)
    if criteria == "all":
        wanted = [c.index for c in status if c.confirmable]
    else:
        wanted = sorted(set(criteria))
        for i in wanted:
            if not 1 <= i <= len(status):
                raise InputError(f"no acceptance criterion {i}; the plan has "
                                 f"1..{len(status)} (`plan07 status` lists them)",
                                 field="criteria")
            c = status[i - 1]
            if c.kind == "named" and c.proved:
                raise InputError(f"criterion {i} was named by the request and an executed "
                                 "test proved it; it needs no confirmation", field="criteria")
            if c.covered_by:
                raise InputError(f"criterion {i} is already proven by the passing "
                                 f"validation of {', '.join(c.covered_by)}", field="criteria")
    new = [i for i in wanted if not status[i - 1].confirmed]
    if not new:
        return []
    art.confirmed_criteria = sorted(set(art.confirmed_criteria or []) | set(new))
    nums = ", ".join(map(str, new))
    texts = "; ".join(repr(status[i - 1].text[:60]) for i in new)
    artifact.record(art, "plan", "confirmed", f"acceptance criteria {nums} confirmed by the user: "
                    f"{texts}", time=time)
    artifact.add_revision(art, f"confirmed acceptance criteria {nums} (§3.1 step 2)", "user",
                          time=time)
    return new


def returned(art: PlanArtifact, plan: PlanArtifact, cp: Checkpoint, event: str, files: str, *,
             time: str, seq: int | None = None) -> PlanArtifact:
    """The plan state back at checkpoint `cp` (`plan`, as recorded there), keeping the audit,
    the revision history and the usage, which say what happened; nothing handed out."""
    # the logs, the usage and the hand-out epoch only ever grow (a verdict of an older epoch must
    # never match a new hand-out)
    keep = ("audit", "audit_overflow", "revision_history", "revisions_overflow", "usage",
            "epoch")
    out = plan.model_copy(update={k: getattr(art, k) for k in keep} | {"active": None})
    what = event.replace("_", " ")
    if seq is not None:
        out.checkpoint_seq = seq  # plan.json commits the return to this record
    artifact.record(out, cp.id, event,
                    f"{what} to {cp.id}: plan state as at step {cp.step}; {files}", time=time)
    artifact.add_revision(out, f"{what} to checkpoint {cp.id}", cp.id, time=time)
    return out
