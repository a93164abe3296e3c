"""What an observed edit does to the plan (§3.6 driven by the edit itself, as CodePlan adapts its
plan): the gate read the handed-out node's changes before its check (plan07.gate.observe); here
they become facts of the plan, the rules re-walk the node's neighbourhood with them, and

- a breaking change whose consumers the plan holds, still pending, makes the node and their
  rebinds one atomic step (no check is spent on a change that cannot be valid alone);
- a breaking change whose consumers the plan does not hold adds their rebind obligations
  (§3.6, one revision each, `caused_by` naming the observed change and the recon edge), then
  the same atomic step;
- an edit observed to change the behaviour of what a pending obligation's tests exercise lands
  with those tests;
- a compatible change orders its consumers after it (widen before rebind).

Pure: the caller passes the observed changes, the evidence and the time, and runs it inside one
transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plan07 import caps
from plan07.errors import InputError, PlanStateError
from plan07.model import (
    BREAKING_KINDS,
    Evidence,
    Feedback,
    ImpactEdge,
    Obligation,
    ObservedChange,
    OrderResult,
    PlanArtifact,
    PlanNode,
)
from plan07.plan import artifact
from plan07.plan.schedule import ATOMIC_KINDS
from plan07.vocab import covers, sort_ids

# recon edge kinds by which code consumes a definition (rules/ordering.dl consume_kind, less
# `imports`: importing a module is not a call of the function that changed)
CALL_KINDS = ("calls", "by_name", "references", "inherits", "uses_type")
MAX_ADDED = 16  # rebind obligations one observation may add (the §3.2 dependency cap)


@dataclass(frozen=True)
class Adapted:
    """What the observation did: the changes recorded, the obligations it added, and the atomic
    step the node became (None: it stays alone and its check runs)."""

    changes: tuple[ObservedChange, ...] = ()
    added: tuple[str, ...] = ()
    merged_into: str | None = None
    merged: tuple[str, ...] = ()
    # the pending obligations that now go first (rebind before narrow, or what the merged step
    # waits for): the node is set aside, nothing handed out until the next `next`; the caller
    # puts its files back, and the edit comes back with the node (or `merged_into`)
    set_aside_for: tuple[str, ...] = ()


def _owner(members: Sequence[Obligation], c: ObservedChange) -> str:
    """The member obligation a change belongs to: the one whose target holds it (the deepest),
    else the first modify."""
    holding = [o for o in members if covers(o.target_entity, c.entity)]
    if holding:
        return max(holding, key=lambda o: len(o.target_entity)).id
    return next((o.id for o in members if o.obligation == "modify"), members[0].id)


def _part(x: str, e: str) -> bool:
    """`x` is `e`, inside `e`, or the class whose constructor `e` is."""
    return covers(e, x) or (e.rpartition(".")[2] in ("__init__", "__new__")
                            and x == e.rpartition(".")[0])


def _rewritten(obligations: Sequence[Obligation]) -> list[str]:
    """The targets `obligations` rewrite: a modify's (only a modify rebinds a consumer, rules
    `rebind`, `rebind_before_narrow`; a validate that runs the package's tests, the plan's
    closing regression run, holds none of its code)."""
    return [o.target_entity for o in obligations if o.obligation == "modify"]


def unplanned_consumers(art: PlanArtifact, changes: Sequence[ObservedChange],
                        evidence: Evidence) -> list[ImpactEdge]:
    """For each breaking change, the entities it left unbound (its observed consumers: recon
    callers whose calls no longer bind, holders of an override in the old form) that no
    modify obligation of the plan covers: one edge each, changed entity -> consumer, as impact
    feedback (cause `sig_change`, the relation naming the recon edge, the field, or the source
    read: an override in the old form, a string key or a keyword written in a string)."""
    targets = _rewritten(artifact.obligations_of(art))
    known = {n.id for n in evidence.recon.nodes}
    out: dict[str, ImpactEdge] = {}
    for c in changes:
        # a changed mapping is no recon node: the edge starts at the definition holding it
        parts = c.entity.split(".")
        src = next((x for x in (".".join(parts[:i]) for i in range(len(parts), 0, -1))
                    if x in known), None)
        if c.kind not in BREAKING_KINDS or src is None:
            continue
        via = {e.src: e.kind for e in evidence.recon.edges if e.kind in CALL_KINDS
               and _part(e.dst, c.entity) and not _part(e.src, c.entity)}
        for x in c.consumers:  # its calls, its uses, no longer bind (plan07.gate.observe)
            if x in out or x not in known or any(covers(t, x) for t in targets):
                continue
            how = (f"a subclass left without .{c.fields[0]}" if c.fields
                   else f"recon {via[x]}" if x in via else f"holds key {c.keys[0]}"
                   if c.keys else "an override, or a keyword in a string")
            out[x] = ImpactEdge(src=src, dst=x, relation=f"observed change, {how}"[:64],
                                cause="sig_change", confidence=0.9)
    return [out[k] for k in sorted(out)][:MAX_ADDED]


def add_consumers(art: PlanArtifact, cause: str, edges: Sequence[ImpactEdge],
                  evidence: Evidence, *, note: str, time: str) -> list[str]:
    """The rebind obligations of `edges` (changed entity -> consumer) added through §3.6 impact
    feedback caused by obligation `cause` (one revision each, only the touched edges re-walked);
    the ids added, [] when the plan refuses them (a cap, an unknown entity)."""
    from plan07.order.derive import derive_order
    from plan07.plan.amend import apply_feedback, revise_feedback

    if art.revision is False or not edges or \
            len(artifact.obligations_of(art)) + len(edges) > caps.MAX_OBLIGATIONS:
        return []  # the trigger is off (§7.5 ablation), or the plan would outgrow its cap
    fb = Feedback(caused_by=cause, impact_edges=list(edges), note=note[: caps.FIELD_MAX_CHARS])
    before = {o.id for o in artifact.obligations_of(art)}
    try:
        rev = revise_feedback(art, fb, evidence, time=time)
        walked = derive_order(rev.scope, rev.evidence, engine=art.engine, role_facts=art.roles,
                              observed=art.observed) if rev.scope else OrderResult()
        apply_feedback(art, rev, walked)
    except (InputError, PlanStateError):  # refused: the plan stays, the check will tell
        return []
    return sort_ids({o.id for o in artifact.obligations_of(art)} - before)


def worth_adapting(art: PlanArtifact, node_id: str, changes: Sequence[ObservedChange],
                   evidence: Evidence) -> bool:
    """Whether the rules could change the plan for these changes (a cheap test before the
    re-walk, which costs more than reading the edit): a breaking or narrowing change some
    consumer outside the handed-out step uses (a pending modify, or code no modify covers), or
    a behaviour change while a pending obligation outside the step targets tests; and not what
    the plan already acted on (a merged step's own changes, read again at its `complete`).

    A change observed compatible (every old call still binds) is no such case: by the ladder it
    orders its consumers after the node (widen before rebind), and at `complete` the handed-out
    node is ahead of every pending obligation already. Nor is a change every consumer of which
    is inside the step, or complete (it rebound before). Either is recorded with the verdict
    (`keep_changes`), and every later re-walk (a merge, a replan, feedback) and `explain` read
    it."""
    mine = set(artifact.node(art, node_id).members or [node_id])
    seen = {(c.entity, c.kind) for o, cs in (art.observed or {}).items() if o in mine
            for c in cs}
    if {(c.entity, c.kind) for c in changes} <= seen:
        return False
    others = [o for n in art.nodes if n.state != "complete" and n.id != node_id
              for o in (art.collapsed.get(n.id) or [n])]
    if any(_used_outside(art, c, _rewritten(others), evidence)
           for c in changes if c.kind in BREAKING_KINDS):
        return True
    if not any(c.kind == "behaviour" for c in changes):
        return False
    tests = {n.id for n in evidence.recon.nodes if n.kind == "test"}
    return any(any(covers(o.target_entity, t) for t in tests) for o in others
               if o.obligation == "modify")


# recon edge kinds by which the rules say a target consumes a definition (rules/ordering.dl
# consume_kind)
CONSUME_KINDS = (*CALL_KINDS, "imports", "reads")


def _used_outside(art: PlanArtifact, c: ObservedChange, pending: Sequence[str],
                  evidence: Evidence) -> bool:
    """Some consumer of changed entity `c.entity` lies in a `pending` target (or holds one), or
    is one the observation named that no modify of the plan covers (its rebind is to be
    added): what the observation named, recon's consumers (`CONSUME_KINDS` edges into it or
    into a part of it) and the impact edges out of it: a superset of what the rules read."""
    e = c.entity
    xs = set(c.consumers)
    xs |= {x.src for x in evidence.recon.edges if x.kind in CONSUME_KINDS and _part(x.dst, e)}
    xs |= {x.dst for x in evidence.impact.edges if covers(e, x.src) or covers(x.src, e)}
    if any(covers(t, x) or covers(x, t) for x in xs for t in pending):
        return True
    planned = _rewritten(artifact.obligations_of(art))
    uncovered = any(not any(covers(t, x) for t in planned) for x in c.consumers)
    return uncovered and bool(unplanned_consumers(art, [c], evidence))


def keep_changes(art: PlanArtifact, node_id: str, changes: Sequence[ObservedChange], *,
           time: str) -> list[Obligation]:
    """Record `changes` as what `node_id`'s edit did (replacing what an earlier attempt of it
    recorded), each under the member obligation holding it, with an audit row; the members."""
    members = art.collapsed.get(node_id) or [
        o for o in artifact.obligations_of(art) if o.id == node_id]
    observed = {k: v for k, v in (art.observed or {}).items()
                if k not in {o.id for o in members}}
    for c in changes:
        observed.setdefault(_owner(members, c), []).append(c)
    art.observed = observed
    artifact.record(art, node_id, "observed", f"observed before the check: {_lines(changes)}",
                    time=time)
    return members


def _lines(changes: Sequence[ObservedChange]) -> str:
    more = f" (+{len(changes) - 4} more)" if len(changes) > 4 else ""
    return "; ".join(f"{c.kind}: {c.what}" for c in changes[:4]) + more


def _ahead(art: PlanArtifact, node: PlanNode) -> list[str]:
    """The pending nodes `node` now waits for (its scheduled dependencies: its edit has to land
    after them), in id order."""
    pending = {n.id for n in art.nodes if n.state != "complete"}
    return sort_ids(set(node.dependencies) & pending - {node.id})


def adapt(art: PlanArtifact, node_id: str, changes: Sequence[ObservedChange],
          evidence: Evidence, *, time: str) -> Adapted:
    """Record `changes` as what `node_id`'s edit did (replacing what an earlier attempt of it
    recorded), add the rebinds of unplanned consumers, re-walk the rules over the node's
    neighbourhood and let the scheduler merge what cannot land apart. The handed-out node is
    the merged step when one forms (a new hand-out: an older verdict is stale)."""
    from plan07.order.derive import derive_order
    from plan07.plan.revise import rewalk_scope, splice_edges

    node = artifact.node(art, node_id)
    members = keep_changes(art, node_id, changes, time=time)
    owners = sort_ids({_owner(members, c) for c in changes})
    lines = "; ".join(f"{c.kind}: {c.what}" for c in changes[:4])
    if art.ordering is False:  # the §7.5 ablation of the rules: recorded, nothing derived from it
        return Adapted(tuple(changes))
    edges = unplanned_consumers(art, changes, evidence)
    added = add_consumers(art, owners[0], edges, evidence,
                          note=f"observed in {node_id}'s edit: {lines}", time=time)
    evidence = art.evidence or evidence
    obligations = artifact.obligations_of(art)
    # the facts: the owners' neighbourhood and every pending obligation (a planned consumer of
    # an observed change need not be linked to it yet); the edges re-walked: the owners' only
    pending = {m for n in art.nodes if n.state != "complete" for m in {n.id, *n.members}}
    near = {o.id for o in rewalk_scope(obligations, owners)}
    scope = [o for o in rewalk_scope(obligations, [*owners, *sort_ids(pending)])
             if o.id in near | pending]
    walked = derive_order(scope, evidence, engine=art.engine, role_facts=art.roles,
                          observed=art.observed)
    touched = {o.id for o in scope}
    kept = [v for v in art.violations if not set(v.nodes) & touched]
    # a consumer already complete rebound before this change (widen, rebind, then narrow): it
    # is not re-opened into a step with it
    done = {m for n in art.nodes if n.state == "complete" for m in {n.id, *n.members}}
    fresh = [v for v in walked.violations if set(v.nodes) & set(owners)
             and not (v.kind in ATOMIC_KINDS and set(v.nodes) & done)]
    # and the atomic ones joined to those (tests landing with the change join every pending
    # change they exercise: rule tests_land_with_all_they_exercise)
    linked = {n for v in fresh if v.kind in ATOMIC_KINDS for n in v.nodes}
    grown = True
    while grown:
        more = [v for v in walked.violations if v not in fresh and v.kind in ATOMIC_KINDS
                and set(v.nodes) & linked and not set(v.nodes) & done]
        fresh += more
        linked.update(n for v in more for n in v.nodes)
        grown = bool(more)
    # a step merged to land as one stays one until its check: read again at its complete, a
    # breaking change whose consumers landed with it binds (compatible now), which must not
    # split the step the edit was made for (its members checked apart, the hand-out gone)
    mine = set(node.members or [node_id])
    held = [v for v in art.violations if len(mine) > 1 and v.kind in ATOMIC_KINDS
            and set(v.nodes) <= mine and v not in fresh]
    try:
        artifact.splice(art, obligations, evidence=evidence, violations=kept + fresh + held,
                        edges=splice_edges(art.edges, walked.edges, owners))
    except (InputError, PlanStateError):  # the scheduler refused the merge: the check decides
        return Adapted(tuple(changes), tuple(added))
    now = next((n for n in art.nodes if mine <= set(n.members or [n.id])), None)
    ahead = _ahead(art, now) if now is not None else []
    if now is not None and now.id == node_id and ahead:
        # its edit narrows what pending consumers still use: they rebind first, against the old
        # form (rebind before narrow), and the node comes again after them
        art.active = None
        art.epoch = (art.epoch or 0) + 1
        artifact.add_revision(art, f"observed: {node_id}'s edit narrows what {', '.join(ahead)} "
                              f"still use ({lines}); they rebind first, {node_id} after them",
                              node_id, time=time)
        artifact.record(art, node_id, "set_aside", f"{', '.join(ahead)} rebind first; "
                        f"{node_id} comes again after them", time=time)
        return Adapted(tuple(changes), tuple(added), set_aside_for=tuple(ahead))
    # a step that grew keeps its id when it was already atomic: its new members are still a
    # merge, and the edit in hand is not yet the whole step (never checked, never completed)
    if now is None or set(now.members or [now.id]) == mine:
        art.active = node_id
        return Adapted(tuple(changes), tuple(added))
    joined = sort_ids(set(now.members) - mine)
    # the merged step is the one handed out now, unless it waits for pending work (a member's
    # dependency, a rebind that goes first): other nodes are handed out before it, and the edit
    # cannot stay in the tree under theirs; it is set aside and comes back with the step
    art.active = None if ahead else now.id
    art.epoch = (art.epoch or 0) + 1
    artifact.add_revision(art, f"observed: {node_id}'s edit cannot be valid alone ({lines}); "
                          f"{now.id} lands it with {', '.join(joined)}", node_id, time=time)
    artifact.record(art, now.id, "merged", f"{node_id}'s observed change lands with "
                    f"{', '.join(joined)} as one step, before any check", time=time)
    if ahead:
        artifact.record(art, node_id, "set_aside", f"{now.id} waits for {', '.join(ahead)}; "
                        f"{node_id}'s edit comes back with it", time=time)
        return Adapted(tuple(changes), tuple(added), now.id, tuple(joined), tuple(ahead))
    return Adapted(tuple(changes), tuple(added), now.id, tuple(joined))
