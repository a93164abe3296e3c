"""The steps that drive a plan, each over one loaded artifact (the Planner runs each inside one
transaction): hand out the next obligation, admit an edit or a test call, reserve the gate's
calls, settle a verdict, splice a scoped replan, apply impact feedback, confirm criteria, return
to a checkpoint. Pure: the caller passes the evidence and the time, and does the effects (the
check, the model call, the rules, the snapshots) between the steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from plan07 import caps
from plan07.errors import InputError, PlanStateError
from plan07.model import (
    Checkpoint,
    Evidence,
    Obligation,
    PlanArtifact,
    PlanNode,
    Verdict,
    Violation,
)
from plan07.plan import artifact, driver
from plan07.plan.criteria import record_pass
from plan07.vocab import sort_ids

if TYPE_CHECKING:  # a failed check's modules: a passing `complete` imports neither
    from plan07.plan.replan import ScopedCall


def hand_out(art: PlanArtifact, *, time: str) -> PlanNode | None:
    """§3.4: the handed-out node while it is not complete, else the next one `driver.pick`s
    (failed nodes whose replans are spent are skipped); None when nothing is left."""
    if art.halted:  # a failed edit could not be undone: nothing is handed out over it
        art.active = None
        return None
    nodes = {n.id: n for n in art.nodes}
    current = nodes.get(art.active or "")
    if current is None or current.state == "complete" or current.status != "ready":
        current = driver.pick(artifact.dag_of(art), skip=artifact.stuck_nodes(art))
    if current is None:
        art.active = None
        return None
    if art.active != current.id:
        art.active = current.id
        art.epoch = (art.epoch or 0) + 1  # a verdict must match its hand-out (docs/safety.md)
        artifact.record(art, current.id, "handed_out",
                        f"handed out: {current.obligation} {current.target_entity}", time=time)
    return current


def admit_edit(art: PlanArtifact, node_id: str, rel: str, *, time: str) -> None:
    """The handed-out node edited `rel`, a path relative to the repo (§3.4: at most 5 files per
    node)."""
    driver.require_active(art.active, node_id)
    b = artifact.bounds(art, node_id)
    art.bounds[node_id] = b.model_copy(
        update={"edited_files": driver.admit_edit(node_id, b.edited_files, rel)})
    node = artifact.node(art, node_id)
    artifact.record(art, node_id, "edit", f"edit accepted because {node_id} is the active "
                    f"obligation ({node.obligation} {node.target_entity})", accepted_edit=rel,
                    time=time)


def admit_test_call(art: PlanArtifact, node_id: str) -> None:
    """The handed-out node ran a test (§3.4: at most 10 calls per node)."""
    driver.require_active(art.active, node_id)
    b = artifact.bounds(art, node_id)
    art.bounds[node_id] = b.model_copy(
        update={"test_calls": driver.admit_test_call(node_id, b.test_calls)})


def validatable(art: PlanArtifact, node_id: str) -> tuple[PlanNode, list[Obligation]]:
    """The node `node_id` and its members (a collapsed cycle), when it may be validated now;
    refused when it may not (complete, stuck, not ready, not the handed-out one, no repo).
    Changes nothing."""
    node = artifact.node(art, node_id)
    if node.state == "complete":
        raise PlanStateError(f"obligation {node_id!r} is already complete; run `plan07 next`",
                             reason="complete", node=node_id)
    if node_id in artifact.stuck_nodes(art):
        raise PlanStateError(artifact.stuck_text(node_id, art.bounds[node_id]), reason="stuck",
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
        b = artifact.bounds(art, node_id)
        art.bounds[node_id] = b.model_copy(
            update={"test_calls": driver.admit_gate_calls(node_id, b.test_calls, reserved)})
    return art.epoch


def refund(art: PlanArtifact, node_id: str, unused: int) -> None:
    """Give back reserved gate calls that did not run (the build check failed first)."""
    b = art.bounds.get(node_id)
    if unused > 0 and b is not None:
        b = b.model_copy(update={"test_calls": max(0, b.test_calls - unused)})
        art.bounds[node_id] = b
        if b == type(b)():  # as before the reservation: plan.json's bytes as they were
            del art.bounds[node_id]


@dataclass(frozen=True)
class Settled:
    """A verdict recorded: `stale` when another process settled the node while its check ran
    (this verdict is then discarded); the checkpoints a pass reached; the fragment a failure
    re-plans (None: no replan, its count is spent or the node passed)."""

    stale: bool = False
    reached: tuple[Checkpoint, ...] = ()
    replan: ScopedCall | None = None
    spent: bool = False  # the node failed past its retry bound: never handed out again


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
    node = artifact.node(art, node_id)
    if node.state == "complete" or art.active != node_id or art.epoch != epoch:
        return Settled(stale=True)
    refund(art, node_id, reserved if verdict.inconclusive else reserved - verdict.test_calls)
    if verdict.inconclusive:
        artifact.record(art, node_id, "inconclusive", f"not judged: {verdict.inconclusive}",
                        time=time)
        return Settled()
    art.active = None
    if verdict.passed:
        before = artifact.reached_checkpoints(art)
        node.state = "complete"
        art.bounds.pop(node_id, None)
        record_pass(art, node, verdict, tree)
        artifact.record(art, node_id, "passed", _passed_trace(node, verdict), time=time)
        artifact.reschedule(art, evidence)
        reached = artifact.reached_checkpoints(art)
        return Settled(reached=tuple(c for c in art.checkpoints
                                     if c.id in reached and c.id not in before))
    node.state = "failed"
    artifact.record(art, node_id, "failed", f"validation failed: {verdict.check} ({verdict.kind})",
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

    spent = artifact.bounds(art, node_id)
    d = retry.decide(retry.facts_of(art, node_id, evidence), verdict.kind, verdict.output_tail,
                     retry.History(spent.retries, spent.replans, spent.signature, spent.repeats),
                     k=caps.LOCAL_RETRIES_BEFORE_REPLAN, max_retries=art.max_retries,
                     max_replans=caps.MAX_REPLANS_PER_NODE, repo=art.repo or "")
    retries = min(spent.retries + 1, caps.MAX_RETRIES_CAP + 1)
    attempt = spent.replans + (d.action == "plan")
    art.bounds[node_id] = spent.model_copy(update={
        "retries": retries, "signature": d.signature, "digest": d.digest, "replans": attempt,
        "repeats": min(d.repeats, caps.MAX_RETRIES_CAP + 1)})
    trace = {"stop": lambda: artifact.stuck_text(node_id, art.bounds[node_id]),
             "local": lambda: f"local retry ({d.reason}): {d.digest}",
             "reopen": lambda: f"re-opened {', '.join(d.reopen)} ({d.reason}): {d.digest}",
             "plan": lambda: f"scoped replan: {d.reason}"}[d.action]()
    artifact.record(art, node_id, _RETRY_EVENT[d.action], trace, time=time)
    if d.action == "plan":
        from plan07.plan.replan import ScopedCall, fragment

        frag = fragment(art.nodes, artifact.obligations_of(art), node_id)
        prefix = f"{node_id.split('_')[0]}.r{artifact.next_rev(art)}."
        return Settled(replan=ScopedCall(frag, prefix, attempt, mark(art)))
    for nid in d.reopen:  # only a reopen names nodes
        artifact.node(art, nid).state = "pending"
        art.bounds[nid] = artifact.bounds(art, nid).model_copy(update={
            "retries": retries, "digest": d.digest})
    artifact.reschedule(art, evidence)
    again = {"local": (node_id,), "reopen": d.reopen}.get(d.action, ())
    first = next((n for n in art.schedule.ready or [] if n in again), None)
    if first is not None:  # handed out again, before any other ready node: a new hand-out
        art.active = first
        art.epoch = (art.epoch or 0) + 1  # an older verdict is stale
    return Settled(spent=d.action == "stop")


def digest_of(art: PlanArtifact, node: PlanNode) -> str | None:
    """The failure digest a handed-out node carries: its last failure's (a passed node leaves
    its bounds, so only a node being retried, locally or re-decomposed under its id, has one)."""
    b = art.bounds.get(node.id)
    return (b.digest or None) if b is not None and node.state != "complete" else None


def merge_consumers(art: PlanArtifact, node_id: str, verdict: Verdict, evidence: Evidence, *,
                    time: str) -> bool:
    """The runtime backstop (plan07.plan.backstop): when the failing tests of the node's check
    exercise other work, the pending planned nodes whose targets they exercise join the node in
    one atomic step, and consumers the plan does not hold get their rebinds added (§3.6) and
    join too; offered again with no model call. False (nothing changed) when the failure is
    the node's own."""
    from plan07.plan.backstop import KIND, breakage
    from plan07.plan.observed import add_consumers

    found = breakage(art.nodes, art.collapsed, node_id, verdict.output_tail, evidence)
    if not found:
        return False
    members = artifact.node(art, node_id).members or [node_id]
    anchor = next((m for m in members if m in {o.id for o in artifact.obligations_of(art)}),
                  node_id)
    merged = list(found.violations)
    if found.consumers:
        added = add_consumers(art, anchor, found.consumers, evidence, time=time,
                              note=f"runtime: {node_id}'s check failed in their tests")
        if not added and not merged:
            return False
        evidence = art.evidence or evidence
        merged += [Violation(kind=KIND, nodes=[anchor, a], detail=f"runtime: {node_id}'s check "
                             f"failed in the tests of {a}'s target, which consumes it: one step")
                   for a in added]
    try:
        artifact.splice(art, artifact.obligations_of(art), edges=art.edges,
                        violations=[*art.violations, *merged], evidence=evidence, pending=members)
    except (InputError, PlanStateError):  # the scheduler refused the merge: a plain failure
        return False
    joined = sort_ids({n for v in merged for n in v.nodes})
    artifact.add_revision(art, f"runtime backstop: {node_id} failed in other work's tests; "
                          f"{', '.join(joined)} merged into one atomic step", node_id, time=time)
    artifact.record(art, node_id, "merged", merged[0].detail, time=time)
    return True


def _passed_trace(node: PlanNode, verdict: Verdict) -> str:
    """The audit line of a pass: red, the tests reaching the target, what failed already."""
    note = f"; pre-existing failures not blamed: {', '.join(verdict.preexisting)}" \
        if verdict.preexisting else ""
    if verdict.kind in ("import", "compile") and verdict.tests:
        note = f"; and the tests reaching {node.target_entity}: " \
               f"{', '.join(verdict.tests[:4])}{note}"
    elif verdict.kind == "regression":
        note = f" over {verdict.ran} tests of the modules the plan changed{note}"
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
