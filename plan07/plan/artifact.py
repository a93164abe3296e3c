"""The §3.7 plan artifact as a value: building it, applying a schedule, the views a driver reads
(obligations, DAG, reached checkpoints, stuck nodes), audit rows, revision numbers and the one
splice every change of the plan's obligations goes through (scoped replan §3.5, feedback §3.6).
Pure: the caller passes the evidence and the clock; nothing here reads a file.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from plan07 import caps
from plan07.errors import PlanStateError
from plan07.model import (
    AuditRow,
    Checkpoint,
    DerivedEdge,
    Evidence,
    NodeBounds,
    Obligation,
    OrderResult,
    PlanArtifact,
    PlanDAG,
    PlanNode,
    PlanSchedule,
    Requirement,
    Revision,
    RoleFacts,
    Usage,
    Violation,
)
from plan07.plan.schedule import schedule, topological_order
from plan07.vocab import sort_ids


def now() -> str:
    """The timestamp audit rows and revisions carry (UTC, to the second)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_artifact(
    requirement: Requirement, obligations: Sequence[Obligation], order: OrderResult,
    evidence: Evidence, *, repo: Path | None, engine: str, llm: str, usage: list[Usage], now: str,
    plan_id: str | None = None,
) -> PlanArtifact:
    """A fresh §3.7 artifact: the schedule of `obligations` with revision 1 and one audit row.
    `plan_id` defaults to a fresh unique one (`new_plan_id`)."""
    dag = schedule(obligations, order, evidence)
    art = PlanArtifact(
        plan_id=plan_id or new_plan_id(now), requirement=requirement, nodes=[], checkpoints=[],
        branch_scores={}, revision_history=[
            Revision(rev=1, time=now, caused_by=f"decomposition ({llm})",
                     change=f"planned {len(obligations)} obligations, {len(order.edges)} "
                            f"edges, {len(order.violations)} violations")],
        audit=[AuditRow(obligation="plan", trace=f"planned {len(obligations)} obligations "
                        f"with engine {engine}", event="planned", time=now)],
        repo=str(repo) if repo else None, engine=engine, llm=llm, edges=order.edges,
        violations=order.violations, evidence=evidence, usage=usage,
    )
    apply_schedule(art, dag, obligations)
    return art


def new_plan_id(now: str) -> str:
    """A plan id unique per plan: `plan-YYYYMMDD-HHMMSS-<8 random hex>`. Two plans made in the
    same second of the same request still differ (their checkpoint refs
    `refs/plan07/<plan_id>/...` must never collide in one repo)."""
    stamp = now[:19].replace("-", "").replace("T", "-").replace(":", "")
    return f"plan-{stamp}-{secrets.token_hex(4)}"


def apply_schedule(art: PlanArtifact, dag: PlanDAG, obligations: Sequence[Obligation]) -> None:
    """Take `dag` (the schedule of `obligations`) as the plan's nodes, checkpoints (a checkpoint
    closing the same steps keeps its snapshot ref), branch scores, collapsed cycles and order."""
    by_id = {o.id: o for o in obligations}
    old_refs = {(c.id, tuple(c.after)): c.git_ref for c in art.checkpoints}
    art.nodes = dag.nodes
    art.checkpoints = [
        c.model_copy(update={"git_ref": old_refs.get((c.id, tuple(c.after)), c.git_ref)})
        for c in dag.checkpoints
    ]
    art.branch_scores = dict(dag.branch_scores)
    art.collapsed = {n.id: [by_id[m] for m in n.members] for n in dag.nodes if n.cycle_collapsed}
    art.schedule = PlanSchedule(order=topological_order(dag), ready=dag.ready,
                                blocked=dag.blocked, alternative=dag.alternative)


def reschedule(art: PlanArtifact, evidence: Evidence) -> None:
    """Recompute the §3.3 DAG from the plan's obligations, edges and node states."""
    obligations = obligations_of(art)
    dag = schedule(
        obligations, OrderResult(edges=art.edges, violations=art.violations), evidence,
        completed=[m for n in art.nodes if n.state == "complete" for m in {n.id, *n.members}],
        failed=[n.id for n in art.nodes if n.state == "failed"],
    )
    apply_schedule(art, dag, obligations)


def splice(
    art: PlanArtifact, obligations: Sequence[Obligation], *, edges: Sequence[DerivedEdge],
    violations: Sequence[Violation], evidence: Evidence, pending: Iterable[str] = (),
    roles: Mapping[str, RoleFacts] | None = None,
) -> None:
    """Take `obligations` as the plan's (with `edges` and `violations`) and reschedule: every
    obligation keeps the state its node had; a node holding one of `pending` (new work) that had
    failed is pending again. The plan's role facts gain `roles` (the new obligations') and keep
    only those that still hold. Nothing changes when the scheduler refuses the result."""
    from plan07.order.roles import kept

    states = {m: n.state for n in art.nodes for m in (n.members or [n.id])}
    nodes = [PlanNode(**o.model_dump(), state=states.get(o.id, "pending")) for o in obligations]
    dag = schedule(
        obligations, OrderResult(edges=list(edges), violations=list(violations)), evidence,
        completed=[n.id for n in nodes if n.state == "complete"],
        failed=[n.id for n in nodes if n.state == "failed"],
    )
    art.edges, art.violations = list(edges), list(violations)
    art.roles = kept({**(art.roles or {}), **(roles or {})}, obligations)
    apply_schedule(art, dag, obligations)
    fresh = set(pending)
    if fresh:  # the same obligations, edges and caps as above: this schedule cannot refuse
        for n in art.nodes:
            if (set(n.members) or {n.id}) & fresh and n.state == "failed":
                n.state = "pending"
        reschedule(art, evidence)


def obligations_of(art: PlanArtifact) -> list[Obligation]:
    """The plan's obligations: its nodes, with every collapsed cycle expanded to its members."""
    out: list[Obligation] = []
    fields = set(Obligation.model_fields)
    for n in art.nodes:
        if n.cycle_collapsed:
            out.extend(art.collapsed.get(n.id, []))
        else:
            out.append(Obligation(**n.model_dump(include=fields)))
    return out


def dag_of(art: PlanArtifact) -> PlanDAG:
    """The §3.3 view of a persisted plan (edges from the nodes' effective dependencies)."""
    return PlanDAG(
        nodes=art.nodes,
        edges=[(d, n.id) for n in art.nodes for d in n.dependencies],
        ready=art.schedule.ready, blocked=art.schedule.blocked,
        alternative=art.schedule.alternative, checkpoints=art.checkpoints,
        branch_scores=art.branch_scores,
    )


def reached_checkpoints(art: PlanArtifact) -> list[str]:
    """Checkpoints whose steps, and every earlier checkpoint's, are all complete."""
    done = {n.id for n in art.nodes if n.state == "complete"}
    out = []
    for cp in art.checkpoints:
        if not set(cp.after) <= done:
            break
        out.append(cp.id)
    return out


def stuck_nodes(art: PlanArtifact) -> list[str]:
    """Failed nodes whose retry bound is spent (more failures than `art.max_retries`, local
    retries and scoped replans together; plan07.plan.retry): never handed out again, `complete`
    refuses them; `plan07 feedback` or `plan07 rollback` moves the plan on."""
    return sorted(n.id for n in art.nodes if n.state == "failed" and n.id in art.bounds
                  and art.bounds[n.id].retries > art.max_retries)


def stuck_text(node_id: str, b: NodeBounds) -> str:
    return (f"obligation {node_id!r} failed {b.retries} times ({b.replans} scoped replans); "
            "its retry bound is spent (max_retries, default MAX_RETRIES_PER_NODE "
            f"{caps.MAX_RETRIES_PER_NODE}, ours), so no further model call is made: revise the "
            "plan with `plan07 feedback` or return to a checkpoint with `plan07 rollback`")


def checkpoint_trace(cp: Checkpoint) -> str:
    return (f"checkpoint {cp.id} reached after step {cp.step}: "
            f"{', '.join(cp.after) or 'the start'} validated")


def node(art: PlanArtifact, node_id: str) -> PlanNode:
    """The plan node `node_id`, or PlanStateError naming the nodes the plan has."""
    for n in art.nodes:
        if n.id == node_id:
            return n
    shown = node_id if len(node_id) <= 2 * caps.ID_MAX_CHARS else \
        f"{node_id[: caps.ID_MAX_CHARS]}… ({len(node_id)} chars)"  # a 100 KB id is not echoed
    raise PlanStateError(f"no obligation {shown!r} in the plan; it has "
                         f"{', '.join(sort_ids(n.id for n in art.nodes))}", reason="no_node",
                         node=node_id)


def bounds(art: PlanArtifact, node_id: str) -> NodeBounds:
    return art.bounds.get(node_id, NodeBounds())


def record(art: PlanArtifact, node_id: str, event: str, trace: str, *, time: str,
           accepted_edit: str = "") -> None:
    """Append one audit row; its trace is cut to caps.FIELD_MAX_CHARS."""
    art.audit.append(AuditRow(obligation=node_id, accepted_edit=accepted_edit,
                              trace=trace[: caps.FIELD_MAX_CHARS], event=event, time=time))


def next_rev(art: PlanArtifact) -> int:
    """The number the plan's next revision gets. The newest revisions stay inline when older ones
    spill to the overflow sidecar, so the last inline one is the last of all."""
    if art.revision_history:
        return art.revision_history[-1].rev + 1
    return (art.revisions_overflow.rows if art.revisions_overflow else 0) + 1


def add_revision(art: PlanArtifact, change: str, caused_by: str, *, time: str) -> Revision:
    """Record one revision of the plan."""
    rev = Revision(rev=next_rev(art), time=time, change=change, caused_by=caused_by)
    art.revision_history.append(rev)
    return rev
