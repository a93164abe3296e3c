"""The steps that drive a plan, each over one loaded artifact (the Planner runs each inside one
transaction): hand out the next obligation, admit an edit or a test call, reserve the gate's
calls, settle a verdict, splice a scoped replan, apply impact feedback, confirm criteria, return
to a checkpoint. Pure: the caller passes the evidence and the time, and does the effects (the
check, the model call, the rules, the snapshots) between the steps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from plan07 import caps
from plan07.errors import InputError, PlanStateError
from plan07.model import (
    Checkpoint,
    Evidence,
    Feedback,
    Obligation,
    OrderResult,
    PlanArtifact,
    PlanNode,
    Revision,
    Verdict,
)
from plan07.plan import artifact as A
from plan07.plan import driver
from plan07.plan.criteria import record_pass
from plan07.vocab import sort_ids

if TYPE_CHECKING:  # a failed check's modules: a passing `complete` imports neither
    from plan07.plan.replan import Fragment, Replan


def hand_out(art: PlanArtifact, *, time: str) -> PlanNode | None:
    """§3.4: the handed-out node while it is not complete, else the next one `driver.pick`s
    (failed nodes whose replans are spent are skipped); None when nothing is left."""
    nodes = {n.id: n for n in art.nodes}
    current = nodes.get(art.active or "")
    if current is None or current.state == "complete" or current.status != "ready":
        current = driver.pick(A.dag_of(art), skip=A.stuck_nodes(art))
    if current is None:
        art.active = None
        return None
    if art.active != current.id:
        art.active = current.id
        art.epoch = (art.epoch or 0) + 1  # a verdict must match its hand-out (docs/safety.md)
        A.record(art, current.id, "handed_out",
                 f"handed out: {current.obligation} {current.target_entity}", time=time)
    return current


def admit_edit(art: PlanArtifact, node_id: str, rel: str, *, time: str) -> None:
    """The handed-out node edited `rel`, a path relative to the repo (§3.4: at most 5 files per
    node)."""
    driver.require_active(art.active, node_id)
    b = A.bounds(art, node_id)
    art.bounds[node_id] = b.model_copy(
        update={"edited_files": driver.admit_edit(node_id, b.edited_files, rel)})
    node = A.node(art, node_id)
    A.record(art, node_id, "edit", f"edit accepted because {node_id} is the active obligation "
             f"({node.obligation} {node.target_entity})", accepted_edit=rel, time=time)


def admit_test_call(art: PlanArtifact, node_id: str) -> None:
    """The handed-out node ran a test (§3.4: at most 10 calls per node)."""
    driver.require_active(art.active, node_id)
    b = A.bounds(art, node_id)
    art.bounds[node_id] = b.model_copy(
        update={"test_calls": driver.admit_test_call(node_id, b.test_calls)})


def validatable(art: PlanArtifact, node_id: str) -> tuple[PlanNode, list[Obligation]]:
    """The node `node_id` and its members (a collapsed cycle), when it may be validated now;
    refused when it may not (complete, stuck, not ready, not the handed-out one, no repo).
    Changes nothing."""
    node = A.node(art, node_id)
    if node.state == "complete":
        raise PlanStateError(f"obligation {node_id!r} is already complete; run `plan07 next`",
                             reason="complete", node=node_id)
    if node_id in A.stuck_nodes(art):
        raise PlanStateError(A.stuck_text(node_id, art.bounds[node_id]), reason="stuck",
                             node=node_id)
    if node.status != "ready":
        done = {n.id for n in art.nodes if n.state == "complete"}
        waiting = [d for d in node.dependencies if d not in done]
        why = f"waits on {', '.join(waiting)}" if waiting else "is an alternative branch"
        raise PlanStateError(f"obligation {node_id!r} is {node.status}: it {why}; "
                             "complete those first (`plan07 next` shows the ready one)",
                             reason="not_ready", node=node_id)
    driver.require_active(art.active, node_id)  # §3.4: only the handed-out node
    if not art.repo:
        raise PlanStateError("the plan records no repository; re-run `plan07 plan --repo DIR`",
                             reason="no_repo", node=node_id)
    return node, list(art.collapsed.get(node_id, []))


def reserve(art: PlanArtifact, node_id: str, reserved: int) -> int | None:
    """§3.4 bounds: the gate's own checks count against max_test_calls; they are reserved before
    anything runs, so the 11th call is refused, not made. Returns the hand-out epoch the
    verdict must match, read under the same lock as the reservation."""
    driver.require_active(art.active, node_id)
    if reserved:
        b = A.bounds(art, node_id)
        art.bounds[node_id] = b.model_copy(
            update={"test_calls": driver.admit_gate_calls(node_id, b.test_calls, reserved)})
    return art.epoch


def refund(art: PlanArtifact, node_id: str, unused: int) -> None:
    """Give back reserved gate calls that did not run (the build check failed first)."""
    b = art.bounds.get(node_id)
    if unused > 0 and b is not None:
        art.bounds[node_id] = b.model_copy(update={"test_calls": max(0, b.test_calls - unused)})


@dataclass(frozen=True)
class Settled:
    """A verdict recorded: `stale` when another process settled the node while its check ran
    (this verdict is then discarded); the checkpoints a pass reached; the fragment a failure
    re-plans (None: no replan, its count is spent or the node passed)."""

    stale: bool = False
    reached: tuple[Checkpoint, ...] = ()
    replan: ScopedCall | None = None


@dataclass(frozen=True)
class ScopedCall:
    """A scoped re-decomposition to make (§3.5 step 3), outside the lock: the fragment, the id
    prefix fresh obligations take, this replan's count, and the audit mark the plan must still
    have when the reply is spliced in."""

    fragment: Fragment
    prefix: str
    attempt: int
    mark: tuple[int, str]


def settle(art: PlanArtifact, node_id: str, reserved: int, verdict: Verdict,
           evidence: Evidence, *, time: str, tree: str | None = None,
           epoch: int | None = None) -> Settled:
    """§3.5: record the verdict of `node_id`'s check (`reserved`: the test calls reserved for
    it). pass -> complete, reschedule, the checkpoints it reached; fail -> failed, then the
    runtime backstop (plan07.plan.backstop), else runtime-structured retry (plan07.plan.retry,
    no model call to decide, `_after_failure`). An inconclusive verdict (the environment, not
    the node) changes nothing but the audit and refunds its calls. `tree`: the content the check
    ran on. A verdict for a node settled meanwhile, or handed out again since its check started
    (another `epoch`: a resume, a rollback), is stale: nothing changes, no refund."""
    node = A.node(art, node_id)
    if node.state == "complete" or art.active != node_id or art.epoch != epoch:
        return Settled(stale=True)
    refund(art, node_id, reserved if verdict.inconclusive else reserved - verdict.test_calls)
    if verdict.inconclusive:
        A.record(art, node_id, "inconclusive", f"not judged: {verdict.inconclusive}", time=time)
        return Settled()
    art.active = None
    if verdict.passed:
        before = A.reached_checkpoints(art)
        node.state = "complete"
        art.bounds.pop(node_id, None)
        record_pass(art, node, verdict, tree)
        A.record(art, node_id, "passed", _passed_trace(node, verdict), time=time)
        A.reschedule(art, evidence)
        reached = A.reached_checkpoints(art)
        return Settled(reached=tuple(c for c in art.checkpoints
                                     if c.id in reached and c.id not in before))
    node.state = "failed"
    A.record(art, node_id, "failed", f"validation failed: {verdict.check} ({verdict.kind})",
             time=time)
    if merge_consumers(art, node_id, verdict, evidence, time=time):
        return Settled()
    return _after_failure(art, node_id, verdict, evidence, time=time)


# the audit row of each retry decision (plan07.plan.retry.Action)
_RETRY_EVENT = {"stop": "retry_refused", "local": "retry_local", "reopen": "retry_reopen",
                "plan": "retry_plan"}


def _after_failure(art: PlanArtifact, node_id: str, verdict: Verdict, evidence: Evidence, *,
                   time: str) -> Settled:
    """Runtime-structured retry, one decision (plan07.plan.retry.decide, no model call):
    stop (the bound is spent: never handed out again), local (the same node again, with its
    digest), reopen (complete nodes' work is at fault: them first, then this node) or plan (the
    scoped replan to make, returned)."""
    from plan07.plan import retry

    spent = A.bounds(art, node_id)
    d = retry.decide(retry.facts_of(art, node_id, evidence), verdict.kind, verdict.output_tail,
                     retry.History(spent.retries, spent.replans, spent.signature, spent.repeats),
                     k=caps.LOCAL_RETRIES_BEFORE_REPLAN, max_retries=art.max_retries,
                     max_replans=caps.MAX_REPLANS_PER_NODE, repo=art.repo or "")
    retries = min(spent.retries + 1, caps.MAX_RETRIES_CAP + 1)
    attempt = spent.replans + (d.action == "plan")
    art.bounds[node_id] = spent.model_copy(update={
        "retries": retries, "signature": d.signature, "digest": d.digest, "replans": attempt,
        "repeats": min(d.repeats, caps.MAX_RETRIES_CAP + 1)})
    trace = {"stop": lambda: A.stuck_text(node_id, art.bounds[node_id]),
             "local": lambda: f"local retry ({d.reason}): {d.digest}",
             "reopen": lambda: f"re-opened {', '.join(d.reopen)} ({d.reason}): {d.digest}",
             "plan": lambda: f"scoped replan: {d.reason}"}[d.action]()
    A.record(art, node_id, _RETRY_EVENT[d.action], trace, time=time)
    if d.action == "plan":
        from plan07.plan.replan import fragment

        frag = fragment(art.nodes, A.obligations_of(art), node_id)
        prefix = f"{node_id.split('_')[0]}.r{A.next_rev(art)}."
        return Settled(replan=ScopedCall(frag, prefix, attempt, mark(art)))
    for nid in d.reopen:  # only a reopen names nodes
        A.node(art, nid).state = "pending"
        art.bounds[nid] = A.bounds(art, nid).model_copy(update={
            "retries": retries, "digest": d.digest})
    A.reschedule(art, evidence)
    again = {"local": (node_id,), "reopen": d.reopen}.get(d.action, ())
    first = next((n for n in art.schedule.ready or [] if n in again), None)
    if first is not None:  # handed out again, before any other ready node: a new hand-out
        art.active = first
        art.epoch = (art.epoch or 0) + 1  # an older verdict is stale
    return Settled()


def digest_of(art: PlanArtifact, node: PlanNode) -> str | None:
    """The failure digest a handed-out node carries: its last failure's (a passed node leaves
    its bounds, so only a node being retried, locally or re-decomposed under its id, has one)."""
    b = art.bounds.get(node.id)
    return (b.digest or None) if b is not None and node.state != "complete" else None


def merge_consumers(art: PlanArtifact, node_id: str, verdict: Verdict, evidence: Evidence, *,
                    time: str) -> bool:
    """The runtime backstop (plan07.plan.backstop): when every failing test of the failed node's
    check belongs to a pending dependent consuming its target, the change was breaking: the
    node and those dependents become one atomic step (the rules' `breaking_change` violation),
    offered again with no model call. False (nothing changed) when the failure is not theirs."""
    from plan07.plan.backstop import merge_group

    merged = merge_group(art.nodes, art.collapsed, node_id, verdict.output_tail, evidence)
    if not merged:
        return False
    members = A.node(art, node_id).members or [node_id]
    try:
        A.splice(art, A.obligations_of(art), edges=art.edges,
                 violations=[*art.violations, *merged], evidence=evidence, pending=members)
    except (InputError, PlanStateError):  # the scheduler refused the merge: a plain failure
        return False
    joined = sort_ids({n for v in merged for n in v.nodes})
    A.revise(art, f"runtime backstop: {node_id} failed in its consumers' tests; "
             f"{', '.join(joined)} merged into one atomic step", node_id, time=time)
    A.record(art, node_id, "merged", merged[0].detail, time=time)
    return True
def _passed_trace(node: PlanNode, verdict: Verdict) -> str:
    """The audit line of a pass: red, the tests reaching the target, what failed already."""
    note = f"; pre-existing failures not blamed: {', '.join(verdict.preexisting)}" \
        if verdict.preexisting else ""
    if verdict.kind in ("import", "compile") and verdict.tests:
        note = f"; and the tests reaching {node.target_entity}: " \
               f"{', '.join(verdict.tests[:4])}{note}"
    red = " (red)" if verdict.red else ""
    return f"validated: {verdict.check} passed{red}{note}"


def mark(art: PlanArtifact) -> tuple[int, str]:
    """The audit's length and last row: every change a driver makes to a plan is audited, so an
    unchanged mark means nobody changed the plan meanwhile."""
    n = (art.audit_overflow.rows if art.audit_overflow else 0) + len(art.audit)
    return n, art.audit[-1].model_dump_json() if art.audit else ""


def failure_text(verdict: Verdict) -> str:
    """What the scoped decomposer is told about a failure: the check and the output's tail."""
    return f"{verdict.check} failed ({verdict.kind}): {verdict.output_tail[-400:]}"


def keep_plan(art: PlanArtifact, node_id: str, why: str, evidence: Evidence, *,
              time: str) -> None:
    """The scoped replan fell back, or its fragment was refused: the plan stays as it was and
    the failed node is offered again."""
    A.record(art, node_id, "replan_kept", f"plan kept as it was: {why}", time=time)
    A.reschedule(art, evidence)


def apply_replan(art: PlanArtifact, call: ScopedCall, result: Replan, evidence: Evidence, *,
                 time: str) -> None:
    """Splice an accepted scoped replan in: the fragment is new work (pending), one revision,
    bounds follow the nodes (a reused id keeps its counters; the fresh fragment carries this
    replan's count). Raises (nothing changed) when the scheduler refuses the result."""
    node_id, fresh = result.failed, {o.id for o in result.added}
    failed = A.bounds(art, node_id)
    kept = [o for o in A.obligations_of(art) if o.id not in set(result.removed)]
    A.splice(art, [*kept, *result.added], edges=result.edges, violations=result.violations,
             evidence=evidence, pending=fresh, roles=result.roles)
    A.revise(art, f"scoped replan after {node_id} failed: re-decomposed "
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
            b = A.bounds(art, n.id)
            art.bounds[n.id] = b.model_copy(update={
                "replans": max(b.replans, call.attempt),
                "retries": max(b.retries, failed.retries)})  # the bound holds across replans
    A.record(art, node_id, "replanned",
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

    before = A.obligations_of(art)
    merged = merge_evidence(evidence, fb)
    new, touched, revs = revise(before, merged, fb, first_rev=A.next_rev(art), now=time)
    A.record(art, fb.caused_by, "feedback",
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
    A.splice(art, rev.obligations, evidence=rev.evidence, violations=violations,
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
    A.record(art, "plan", "confirmed", f"acceptance criteria {nums} confirmed by the user: "
             f"{texts}", time=time)
    A.revise(art, f"confirmed acceptance criteria {nums} (§3.1 step 2)", "user", time=time)
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
    A.record(out, cp.id, event, f"{what} to {cp.id}: plan state as at step {cp.step}; {files}",
             time=time)
    A.revise(out, f"{what} to checkpoint {cp.id}", cp.id, time=time)
    return out
