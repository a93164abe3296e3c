"""What `plan07 status` reports about a plan, as data: the nodes in schedule order, the
checkpoints reached, the acceptance criteria and how each is settled, whether anything is left
to hand out, and whether the plan may terminate. Pure.
"""

from __future__ import annotations

from plan07.model import CriterionRow, DriverView, NextStep, PlanArtifact, PlanStatus, StatusRow


def anything_left(art: PlanArtifact) -> bool:
    """True while a node is handed out or the driver would hand one out (failed nodes whose
    replans are spent are not handed out again)."""
    from plan07.plan import driver
    from plan07.plan.artifact import dag_of, stuck_nodes

    return art.active is not None or driver.pick(dag_of(art), skip=stuck_nodes(art)) is not None


def _pos(art: PlanArtifact, nid: str) -> tuple[int, str]:
    order = art.schedule.order
    return (order.index(nid), "") if nid in order else (len(order), nid)


def rows(art: PlanArtifact) -> list[StatusRow]:
    """One row per node, in execution order (alternatives after)."""
    return [
        StatusRow(id=n.id, verb=n.obligation, target=n.target_entity, state=n.state,
                  status=n.status, deps=list(n.dependencies), active=n.id == art.active,
                  score=art.branch_scores.get(n.id))
        for n in sorted(art.nodes, key=lambda n: _pos(art, n.id))
    ]


def status(art: PlanArtifact) -> PlanStatus:
    """The status of `art` (`plan07 status`), with `left`: anything left to hand out."""
    from plan07.plan.artifact import reached_checkpoints
    from plan07.plan.criteria import criteria_status, termination_blockers

    blockers = termination_blockers(art)
    criteria = [CriterionRow(n=c.index, criterion=c.text, kind=c.kind, settled=c.settled,
                             covered_by=list(c.covered_by), confirmed=c.confirmed)
                for c in criteria_status(art)]
    return PlanStatus(plan_id=art.plan_id, active=art.active, nodes=rows(art),
                      checkpoints_reached=reached_checkpoints(art), criteria=criteria,
                      can_terminate=not blockers, termination_blockers=blockers,
                      left=anything_left(art))


def next_step(view: DriverView | None, art: PlanArtifact) -> NextStep:
    """`next`'s answer: the view handed out, or (nothing left) whether `art` may terminate."""
    if view is not None:
        return NextStep(node=view, can_terminate=False, termination_blockers=[])
    from plan07.plan.criteria import termination_blockers

    blockers = termination_blockers(art)
    return NextStep(node=None, can_terminate=not blockers, termination_blockers=blockers)
