"""§3.5 step 3 the scoped replan over values: the affected subgraph of a failed node, the fragment
handed to ONE scoped decomposition, and the splice of its reply. Pure.

The caller does the effects between the steps (graphlib-shaped: `fragment` -> the caller asks the
model -> `reply_scope` -> the caller runs the rules over that scope -> `splice`):

    frag = fragment(nodes, obligations, failed)
    dec = <one scoped model call over frag.obligations>
    scope = reply_scope(frag, order, dec)    # a Replan refusal when the reply is unusable
    walked = <the rules over scope>
    result = splice_reply(frag, order, dec, scope, walked)

Upstream and sibling nodes keep their obligations and edges; the re-walked edges and violations
are spliced in with `revise.splice_edges`, as impact feedback's are (§3.6).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from plan07.errors import InputError, PlanStateError
from plan07.model import (
    Decomposition,
    DerivedEdge,
    Evidence,
    Obligation,
    OrderResult,
    PlanArtifact,
    PlanNode,
    RoleFacts,
    Violation,
)
from plan07.plan.revise import rewalk_scope, splice_edges


def affected_subgraph(
    nodes: Sequence[PlanNode], edges: Sequence[tuple[str, str]], failed: str
) -> list[str]:
    """§3.5 step 3: the failed node plus its true dependents (reachable through dependency edges,
    the declared `dependencies` included), sorted."""
    ids = {n.id for n in nodes}
    if failed not in ids:
        raise InputError(f"no node {failed!r} in the plan", field="node_id")
    succ: dict[str, set[str]] = {}
    pairs: Iterable[tuple[str, str]] = list(edges) + [
        (d, n.id) for n in nodes for d in n.dependencies
    ]
    for a, b in pairs:
        succ.setdefault(a, set()).add(b)
    seen, todo = {failed}, [failed]
    while todo:
        for nxt in succ.get(todo.pop(), ()):
            if nxt in ids and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return sorted(seen)


@dataclass(frozen=True)
class Fragment:
    """What a failure re-plans: the affected plan nodes, the obligations they hold (handed to the
    scoped decomposition, alone) and the obligations that stay as they are."""

    failed: str
    affected: list[str]  # plan node ids: the failed node + its true dependents
    removed: list[str]  # obligation ids the fragment replaces
    obligations: list[Obligation]  # the fragment
    kept: list[Obligation]  # every other obligation, untouched


@dataclass
class Replan:
    """The outcome of a scoped replan (§3.5 step 3). `accepted` is False when the scoped
    decomposition fell back or gave an unusable fragment: the plan is then left as it was."""

    failed: str
    affected: list[str]  # plan node ids: the failed node + its true dependents
    removed: list[str]  # obligation ids replaced
    added: list[Obligation]  # the re-decomposed fragment
    edges: list[DerivedEdge]  # the plan's derived edges after the splice
    violations: list[Violation]
    decomposition: Decomposition | None = None
    accepted: bool = True
    reason: str = ""
    rewalked: list[str] = field(default_factory=list)  # obligation ids the rules saw

    @property
    def roles(self) -> dict[str, RoleFacts] | None:
        """The role facts the reply gave its obligations (plan07's own decomposer only)."""
        return self.decomposition.roles if self.decomposition else None


@dataclass(frozen=True)
class ScopedCall:
    """A scoped re-decomposition to make (§3.5 step 3), outside the lock: the fragment, the id
    prefix fresh obligations take, this replan's count, and the audit mark the plan must still
    have when the reply is spliced in."""

    fragment: Fragment
    prefix: str
    attempt: int
    mark: tuple[int, str]


def fragment(nodes: Sequence[PlanNode], obligations: Sequence[Obligation], failed: str) -> Fragment:
    """The failed node + its true dependents, expanded to their obligations (a collapsed cycle
    re-plans all its members)."""
    plan_edges = [(d, n.id) for n in nodes for d in n.dependencies]
    affected = affected_subgraph(nodes, plan_edges, failed)
    members = {n.id: (n.members or [n.id]) for n in nodes}
    gone = sorted({m for a in affected for m in members[a]})
    return Fragment(failed, affected, gone, [o for o in obligations if o.id in gone],
                    [o for o in obligations if o.id not in gone])


def refused(frag: Fragment, order: OrderResult, dec: Decomposition | None, why: str) -> Replan:
    """The plan kept as it was, with the reason."""
    return Replan(frag.failed, frag.affected, [], [], list(order.edges), list(order.violations),
                  dec, accepted=False, reason=why)


def reply_scope(
    frag: Fragment, order: OrderResult, dec: Decomposition
) -> list[Obligation] | Replan:
    """The obligations the rules re-walk for the scoped reply `dec`: the new fragment and its
    direct upstream. A `Replan` refusal instead when the reply is unusable: it fell back, reused
    an untouched node's id or named an unknown dependency."""
    if not dec.obligations:
        return refused(frag, order, dec, f"scoped decomposition fell back ("
                       f"{dec.reason or 're_decompose'}); the subgraph is kept as it was")
    keep_ids = {o.id for o in frag.kept}
    clash = sorted({o.id for o in dec.obligations} & keep_ids)
    known = keep_ids | {o.id for o in dec.obligations}
    dangling = sorted({d for o in dec.obligations for d in o.dependencies} - known)
    if clash or dangling:
        return refused(frag, order, dec, f"scoped decomposition reused id(s) {clash} of untouched "
                       f"nodes or named unknown dependencies {dangling}; the subgraph is kept as "
                       "it was")
    return rewalk_scope([*frag.kept, *dec.obligations], {o.id for o in dec.obligations})


def splice_reply(frag: Fragment, order: OrderResult, dec: Decomposition,
                 scope: Sequence[Obligation], walked: OrderResult) -> Replan:
    """The reply spliced in: the re-walked edges into the new fragment replace the fragment's
    edges (an untouched node never gains a dependency on the replanned fragment, §3.5); the
    violations about the old fragment go, those the rules found about the new one come in."""
    new_ids = {o.id for o in dec.obligations}
    into_new = [e for e in walked.edges if e.to in new_ids]
    edges = splice_edges(order.edges, into_new, new_ids, removed=set(frag.removed) - new_ids)
    hit = new_ids | set(frag.removed)
    violations = [v for v in order.violations if not set(v.nodes) & hit]
    violations += [v for v in walked.violations if set(v.nodes) & new_ids]
    return Replan(frag.failed, frag.affected, frag.removed, list(dec.obligations), edges,
                  violations, dec, rewalked=[o.id for o in scope])


def respond(frag: Fragment, art: PlanArtifact, dec: Decomposition,
            evidence: Evidence) -> Replan:
    """The scoped reply `dec` over the plan `art`: the rules re-walk the new fragment and its
    direct upstream (only they), and the result is spliced in. Raises PlanStateError when the
    reply is refused (a fallback, a reused or unknown id); the rules' own refusals propagate."""
    from plan07.order.derive import derive_order

    order = OrderResult(edges=art.edges, violations=art.violations)
    scope = reply_scope(frag, order, dec)
    if isinstance(scope, Replan):
        raise PlanStateError(scope.reason, reason="replan_refused", node=frag.failed)
    walked = derive_order(scope, evidence, engine=art.engine,
                          role_facts={**(art.roles or {}), **(dec.roles or {})},
                          observed=art.observed)
    return splice_reply(frag, order, dec, scope, walked)
