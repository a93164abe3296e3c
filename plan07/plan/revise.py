"""§3.6 the adaptive revision trigger: impact feedback -> add missing obligations, remove falsified
ones, and the touched neighbourhood whose edges alone are re-walked through the rules. Pure.

The feedback format is `plan07.model.Feedback` (docs/revise.md). Nothing here reads a clock or a
file: the caller passes `now` and the first revision number, and runs the rules itself over
`rewalk_scope(...)`, then splices the result with `splice_edges(...)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from plan07 import caps
from plan07.errors import InputError
from plan07.model import DerivedEdge, Evidence, Feedback, Impact, Obligation, Revision
from plan07.vocab import covers, sort_ids


def _next_ids(existing: Iterable[str]) -> Iterator[str]:
    taken = set(existing)
    nums = [int(m[1]) for i in taken if (m := re.fullmatch(r"O(\d+)", i))]
    n = max(nums, default=0)
    while True:
        n += 1
        if f"O{n}" not in taken:
            yield f"O{n}"


def _ancestors(by_id: dict[str, Obligation], start: str) -> set[str]:
    """Every obligation `start` transitively depends on."""
    seen: set[str] = set()
    todo = list(by_id[start].dependencies)
    while todo:
        d = todo.pop()
        if d not in seen and d in by_id:
            seen.add(d)
            todo.extend(by_id[d].dependencies)
    return seen


def _check_ids(obligations: Sequence[Obligation], fb: Feedback) -> None:
    ids = {o.id for o in obligations}
    for i, oid in enumerate(fb.falsified_obligations):
        if oid not in ids:
            raise InputError(f"feedback falsifies unknown obligation {oid!r}; the plan has "
                             f"{', '.join(sort_ids(ids)) or 'none'}",
                             field=f"falsified_obligations[{i}]")


def _check_edges(obligations: Sequence[Obligation], evidence: Evidence, fb: Feedback) -> None:
    """An impact edge's ends must be entities the plan knows: a recon node of its evidence or an
    obligation's target (checked only when the evidence has recon nodes). The ends of an edge the
    feedback also falsifies are skipped (that edge is dropped), so the merged evidence
    (`merge_evidence`) checks the same as the plan's own."""
    nodes = {n.id for n in evidence.recon.nodes}
    if not nodes:
        return
    known = nodes | {o.target_entity for o in obligations}
    for i, edge in enumerate(fb.impact_edges):
        if any(covers(e, end) for e in fb.falsified_entities for end in (edge.src, edge.dst)):
            continue
        for end in ("src", "dst"):
            entity = getattr(edge, end)
            if entity not in known:
                raise InputError(f"impact edge to {entity!r}, which is not an entity of the "
                                 "plan's evidence (no recon node, no obligation targets it); "
                                 "re-run recon or fix the feedback",
                                 field=f"impact_edges[{i}].{end}")


def check_feedback(obligations: Sequence[Obligation], evidence: Evidence, fb: Feedback) -> None:
    """Refuse feedback that names what the plan does not know, naming the JSON path: an unknown
    falsified obligation; an impact edge end that is no entity of the evidence; a falsified
    entity that is neither a recon node nor covers an obligation's target (it would change
    nothing). `evidence` is the plan's, before `merge_evidence` drops the falsified nodes."""
    _check_ids(obligations, fb)
    _check_edges(obligations, evidence, fb)
    nodes = {n.id for n in evidence.recon.nodes}
    for i, e in enumerate(fb.falsified_entities):
        if e not in nodes and not any(covers(e, o.target_entity) for o in obligations):
            raise InputError(f"feedback falsifies unknown entity {e!r}: no recon node of the "
                             "plan's evidence and no obligation's target is it or inside it",
                             field=f"falsified_entities[{i}]")


def revise(
    obligations: Sequence[Obligation],
    evidence: Evidence,
    feedback: Feedback,
    *,
    first_rev: int = 1,
    now: str = "",
) -> tuple[list[Obligation], list[str], list[Revision]]:
    """Apply impact feedback (§3.6 step 1). Returns (new obligations, touched ids, revisions).

    - removes every falsified obligation and every obligation targeting a falsified entity; a
      dependent that listed a removed obligation inherits its dependencies (order is kept);
    - for each new impact edge src -> dst: if no obligation covers dst, adds a `modify` on dst
      with `caused_by` naming the feedback and depending on the obligations that change src;
      if one covers dst but does not depend on src's obligation, adds that dependency;
    - touched = every added, changed or re-wired obligation (removed ids are not returned).

    Raises InputError naming the JSON path for an unknown falsified obligation or an impact edge
    end that is no entity of `evidence` (when it has recon nodes); callers check the falsified
    entities with `check_feedback` on the evidence before `merge_evidence`.
    """
    _check_ids(obligations, feedback)  # check_feedback checks the falsified entities, given
    _check_edges(obligations, evidence, feedback)  # the evidence before merge_evidence
    obs = [o.model_copy(deep=True) for o in obligations]
    revs: list[Revision] = []
    touched: set[str] = set()
    cause = feedback.caused_by

    def record(change: str) -> None:
        revs.append(Revision(rev=first_rev + len(revs), time=now, change=change, caused_by=cause))

    # 1. removals, bridging dependents over the removed node (its deps become theirs)
    falsified = set(feedback.falsified_obligations) | {
        o.id for o in obs for e in feedback.falsified_entities if covers(e, o.target_entity)
    }
    by_id = {o.id: o for o in obs}
    for rid in sorted(falsified):
        gone = by_id[rid]
        record(f"removed {rid} ({gone.target_entity}) falsified by impact feedback")
        for o in obs:
            if rid in o.dependencies:
                bridged = [d for d in o.dependencies if d != rid]
                bridged += [d for d in gone.dependencies if d not in bridged and d != o.id]
                o.dependencies = bridged
                touched.add(o.id)
    obs = [o for o in obs if o.id not in falsified]
    touched -= falsified

    # 2. additions and unforeseen dependencies, one per new impact edge (§3.6: caused_by = evidence)
    fresh = _next_ids(by_id)
    for edge in feedback.impact_edges:
        if any(covers(e, edge.dst) or covers(e, edge.src) for e in feedback.falsified_entities):
            continue
        live = {o.id: o for o in obs}
        # the changer: the obligation whose edit was observed, else those changing src itself
        changers = [cause] if cause in live else sorted(
            o.id for o in obs if covers(edge.src, o.target_entity))
        # a consumer is covered by a change obligation (modify) on it or on what contains it
        coverers = [o for o in obs if o.obligation == "modify" and o.id not in changers
                    and covers(o.target_entity, edge.dst)]
        why = f"impact feedback ({cause}): {edge.src} -> {edge.dst} {edge.relation}/{edge.cause}"
        if not coverers:
            if len(obs) >= caps.MAX_OBLIGATIONS:
                raise InputError("feedback would grow the plan past the obligation cap",
                                 cap=f"MAX_OBLIGATIONS={caps.MAX_OBLIGATIONS}")
            new = Obligation(
                id=next(fresh), target_entity=edge.dst, obligation="modify",
                caused_by=why[: caps.FIELD_MAX_CHARS], dependencies=changers,
                evidence=f"06 feedback edge {edge.relation} {edge.cause} "
                         f"conf={edge.confidence:g}"[: caps.EVIDENCE_MAX_CHARS],
                status="blocked" if changers else "ready", validation="compile",
            )
            obs.append(new)
            touched.update([new.id, *changers])
            record(f"added {new.id} ({edge.dst}) via impact feedback")
            continue
        # the most specific obligation covering dst is the consumer that must come after
        deepest = max(len(o.target_entity) for o in coverers)
        for o in (o for o in coverers if len(o.target_entity) == deepest):
            before = _ancestors(live, o.id)
            missing = [c for c in changers if c not in before and o.id not in _ancestors(live, c)]
            if missing:
                o.dependencies = [*o.dependencies, *missing]
                touched.update([o.id, *missing])
                record(f"added dependency {', '.join(missing)} -> {o.id} via impact feedback")
    return obs, sorted(touched), revs


def merge_evidence(evidence: Evidence, feedback: Feedback) -> Evidence:
    """The evidence after the feedback: new impact edges added, edges and nodes of falsified
    entities dropped. Pure."""
    dead = feedback.falsified_entities

    def alive(*entities: str) -> bool:
        return not any(covers(d, e) for d in dead for e in entities)

    edges = [e for e in evidence.impact.edges if alive(e.src, e.dst)]
    seen = {(e.src, e.dst, e.relation, e.cause) for e in edges}
    for e in feedback.impact_edges:
        key = (e.src, e.dst, e.relation, e.cause)
        if alive(e.src, e.dst) and key not in seen:
            seen.add(key)
            edges.append(e)
    out = evidence.model_copy(deep=True)
    out.impact = Impact(edges=edges)
    out.recon.nodes = [n for n in out.recon.nodes if alive(n.id)]
    out.recon.edges = [e for e in out.recon.edges if alive(e.src, e.dst)]
    return out


def rewalk_scope(obligations: Sequence[Obligation], touched: Iterable[str]) -> list[Obligation]:
    """The neighbourhood the rules re-walk (§3.6 step 1): the touched obligations and their direct
    dependencies and dependents, with dependencies outside that scope dropped (those edges are not
    re-walked; they are kept as they are). Pure."""
    t = set(touched)
    scope = set(t)
    for o in obligations:
        if o.id in t:
            scope.update(o.dependencies)
        if t & set(o.dependencies):
            scope.add(o.id)
    out = []
    for o in obligations:
        if o.id in scope:
            c = o.model_copy(deep=True)
            c.dependencies = [d for d in o.dependencies if d in scope]
            out.append(c)
    return out


def splice_edges(
    old: Sequence[DerivedEdge], rewalked: Sequence[DerivedEdge], touched: Iterable[str],
    removed: Iterable[str] = (),
) -> list[DerivedEdge]:
    """Keep every old edge that touches no touched or removed node; take the re-walked edges that
    touch a touched node. Nodes outside the neighbourhood keep their edges byte for byte. Pure."""
    t, r = set(touched), set(removed)
    keep = [e for e in old if not ({e.from_, e.to} & (t | r))]
    have = {(e.from_, e.to) for e in keep}
    for e in rewalked:
        if {e.from_, e.to} & t and (e.from_, e.to) not in have and not ({e.from_, e.to} & r):
            keep.append(e)
            have.add((e.from_, e.to))
    return keep
