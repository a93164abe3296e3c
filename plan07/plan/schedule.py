"""The §3.3 plan-DAG scheduler: obligations + the rule-derived order -> a PlanDAG. Pure.

`schedule()` is graphlib-shaped: a topological order over `order.edges` (ties broken by natural id
order, O2 < O10), the exact ready/blocked/alternative partition, cycle collapse, branch scores and
checkpoint markers; the same value under any PYTHONHASHSEED (no set is iterated).

Branch score (§3.3 step 3), for every node of a branch group that holds an `alternative`:

    score = round(0.4 * lex + 0.3 * cochange + 0.3 * confidence, 4)      in [0, 1]

`lex`/`cochange` are the soft-rank of the node's target (06), looked up at the target or its
nearest dotted ancestor; `confidence` is the highest impact-edge confidence touching the target (an
edge whose src or dst is the target, an ancestor or a descendant of it). A branch group is the set
of nodes with the same verb and the same predecessors among the non-alternative nodes (siblings
that could substitute for one another; an edge from an alternative does not split a group). A
group with a non-alternative member follows it; a group of alternatives only follows its
top-ranked member (ties: lowest id) among those that need no unfollowed alternative. Unfollowed
alternatives are never ordered or executed (§2 row 9); an edge from one does not hold back the
node it points to.

Partition: `ready`/`blocked`/`alternative` cover every node not yet complete, exactly once; a
complete node has left the schedule (its `state` says `complete`).

Checkpoints (§3.3 step 4): CP0 marks the start; CPk closes the steps listed in `after` and
requires every earlier checkpoint, so reaching it means every earlier obligation is validated.
A change that cannot be valid alone (a violation of a kind in ATOMIC_KINDS, rules/ordering.dl)
is one atomic step with its pending consumers' rebinds (or its tests' rewrite): one composite
validated as one unit, like a collapsed cycle, so no checkpoint or hand-out lies between them;
a merge that closes a cycle through other nodes collapses it too. Past 32 markers, the allowed
boundaries are thinned evenly: boundary j of the m kept is allowed boundary
floor((j+1) * n / m) - 1 of n: the last step ends on a checkpoint, adjacent steps merge evenly.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable, Sequence

from plan07 import caps
from plan07.engine.graphs import sccs
from plan07.errors import InputError
from plan07.model import Checkpoint, Evidence, Obligation, OrderResult, PlanDAG, PlanNode
from plan07.vocab import natural_key, related, sort_ids

# Violation kinds (rules/ordering.dl) whose nodes form one atomic step: a breaking change with no
# widening step and the rebinds of its planned consumers; an edit observed to change behaviour and
# the planned rewrite of the tests that assert it.
ATOMIC_KINDS = frozenset({"breaking_change", "behaviour_change"})
WEIGHTS = {"lex": 0.4, "cochange": 0.3, "confidence": 0.3}
COMPOSITE_SUFFIX = "_cycle"
ATOMIC_SUFFIX = "_atomic"


def schedule(
    obligations: Sequence[Obligation],
    order: OrderResult,
    evidence: Evidence,
    *,
    completed: Collection[str] = frozenset(),
    failed: Collection[str] = frozenset(),
) -> PlanDAG:
    """The §3.3 emit for `obligations` ordered by `order.edges`. `completed`/`failed` hold
    obligation (or composite) ids; a composite is complete when all its members are."""
    by_id = {o.id: o for o in obligations}
    if len(by_id) != len(obligations):
        raise InputError("duplicate obligation ids", field="obligations")
    if len(by_id) > caps.MAX_NODES:
        raise InputError(f"{len(by_id)} obligations", field="obligations", cap="MAX_NODES 64")
    edges = sorted(
        {(e.from_, e.to) for e in order.edges}, key=lambda e: (natural_key(e[0]), natural_key(e[1]))
    )
    for a, b in edges:
        for end in (a, b):
            if end not in by_id:
                raise InputError(
                    f"edge {a} -> {b} names unknown obligation {end!r}", field="order.edges"
                )

    scores, followed = _branches(by_id, edges, evidence)
    # a complete obligation never joins pending ones in an atomic step; one completed as one stays
    atomic = [v.nodes if set(v.nodes) <= set(completed) else [n for n in v.nodes if n not in
              completed] for v in order.violations if v.kind in ATOMIC_KINDS]
    composite_of, members_of, atomic_ids = _collapse(followed, edges, atomic, taken=set(by_id))
    plan_id = {o: composite_of.get(o, o) for o in by_id}
    plan_edges = sort_pairs(
        {(plan_id[a], plan_id[b]) for a, b in edges if plan_id[a] != plan_id[b]}
    )
    steps = sort_ids({plan_id[o] for o in followed})
    preds = {n: [a for a, b in plan_edges if b == n and a in steps] for n in steps}
    steps_order = _toposort(steps, preds)

    done = set(completed) | {c for c, ms in members_of.items() if set(ms) <= set(completed)}
    nodes: list[PlanNode] = []
    ready: list[str] = []
    blocked: list[str] = []
    alternative: list[str] = []
    for nid in sort_ids(plan_id.values()):
        if nid in members_of:
            node = _composite(nid, [by_id[m] for m in members_of[nid]], preds[nid], plan_edges,
                              atomic=nid in atomic_ids)
        else:
            deps = preds[nid] if nid in preds else [a for a, b in plan_edges if b == nid]
            node = PlanNode(
                **{**by_id[nid].model_dump(), "dependencies": _fit_deps(nid, deps, plan_edges)}
            )
        state = "complete" if nid in done else "failed" if nid in failed else "pending"
        if nid not in steps:
            status = "alternative"
        elif all(p in done for p in preds[nid]):
            status = "ready"
        else:
            status = "blocked"
        nodes.append(node.model_copy(update={"status": status, "state": state}))
        if state != "complete":
            {"ready": ready, "blocked": blocked, "alternative": alternative}[status].append(nid)

    return PlanDAG(
        nodes=nodes,
        edges=plan_edges,
        ready=ready,
        blocked=blocked,
        alternative=alternative,
        checkpoints=_checkpoints(steps_order),
        branch_scores={n: scores[n] for n in sort_ids(scores)},
    )


def topological_order(dag: PlanDAG) -> list[str]:
    """The followed steps of a scheduled DAG, in execution order (alternatives left out)."""
    steps = [n.id for n in dag.nodes if n.status != "alternative"]
    preds = {n: [a for a, b in dag.edges if b == n and a in steps] for n in steps}
    return _toposort(steps, preds)


def sort_pairs(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(set(pairs), key=lambda e: (natural_key(e[0]), natural_key(e[1])))


# ---------------------------------------------------------------------------------------------
# §3.3 step 3: branch groups and scores


def _branches(
    by_id: dict[str, Obligation], edges: list[tuple[str, str]], evidence: Evidence
) -> tuple[dict[str, float], list[str]]:
    alts = {o for o in by_id if by_id[o].status == "alternative"}
    # §3.3 step 3: siblings share a verb and the predecessors they have in the main plan; an
    # edge from an alternative orders that alternative's own branch, it does not make its
    # target a branch of its own (which would then be followed as "top-ranked").
    preds = {o: tuple(sort_ids(a for a, b in edges if b == o and a not in alts)) for o in by_id}
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for oid in sort_ids(by_id):
        groups.setdefault((by_id[oid].obligation, preds[oid]), []).append(oid)
    scores: dict[str, float] = {}
    followed = {o for o in by_id if o not in alts}
    pending: list[list[str]] = []
    for members in groups.values():
        if not any(m in alts for m in members):
            continue
        for m in members:
            scores[m] = branch_score(by_id[m].target_entity, evidence)
        if all(m in alts for m in members):
            pending.append(members)
    _follow_top_ranked(pending, edges, alts, scores, followed)
    return scores, sort_ids(followed)


def _follow_top_ranked(
    pending: list[list[str]],
    edges: list[tuple[str, str]],
    alts: set[str],
    scores: dict[str, float],
    followed: set[str],
) -> None:
    """Add to `followed` the top-ranked member (ties: lowest id) of each group of alternatives
    only. A member that needs an alternative outside its group which is not followed belongs to
    that unfollowed branch and is not eligible; so a group is decided after the groups its
    members depend on (a cycle between groups: the first group in id order is decided first,
    treating the undecided as not followed)."""
    alt_preds = {o: {a for a, b in edges if b == o and a in alts} for o in alts}
    decided = alts - {m for members in pending for m in members}  # in a group with a main node
    while pending:
        ready = [g for g in pending if all(alt_preds[m] - set(g) <= decided for m in g)]
        group = (ready or pending)[0]
        pending.remove(group)
        eligible = [m for m in group if alt_preds[m] - set(group) <= followed]
        if eligible:
            followed.add(min(eligible, key=lambda m: (-scores[m], natural_key(m))))
        decided.update(group)


def branch_score(target: str, evidence: Evidence) -> float:
    """The documented formula (module docstring): soft-rank lex/co-change + impact confidence."""
    rank = None
    probe = target
    while probe:
        rank = evidence.soft_rank.get(probe)
        if rank is not None or "." not in probe:
            break
        probe = probe.rsplit(".", 1)[0]
    lex, cochange = (rank.lex, rank.cochange) if rank else (0.0, 0.0)
    conf = max(
        (
            e.confidence
            for e in evidence.impact.edges
            if related(e.src, target) or related(e.dst, target)
        ),
        default=0.0,
    )
    raw = WEIGHTS["lex"] * lex + WEIGHTS["cochange"] * cochange + WEIGHTS["confidence"] * conf
    return round(min(1.0, max(0.0, raw)), 4)


# ---------------------------------------------------------------------------------------------
# §3.3 step 2: cycle collapse (Tarjan's SCC, visited in natural id order)


def _collapse(
    followed: list[str], edges: list[tuple[str, str]], atomic: Sequence[Sequence[str]] = (), *,
    taken: set[str] | None = None,
) -> tuple[dict[str, str], dict[str, list[str]], set[str]]:
    """Composites: each strongly connected component of two or more nodes (§3.3 step 2) and each
    atomic group (the nodes of an ATOMIC_KINDS violation), merged until the graph of groups has
    no cycle. Returns member -> composite id, composite id -> members, the atomic composites.
    Composite ids never equal an obligation id (`taken`): `O3_cycle` may be an obligation's own
    id, and a composite of that name would silently replace it."""
    used = set(taken or ()) | set(followed)
    inside = set(followed)
    succ: dict[str, list[str]] = {n: [] for n in followed}
    for a, b in edges:
        if a in inside and b in inside:
            if a == b:
                raise InputError(
                    f"obligation {a} depends on itself: a cycle that survives collapse cannot be "
                    "executed (§3.3 step 2); remove the self-dependency",
                    field=f"{a}.dependencies",
                )
            succ[a].append(b)
    root = {n: n for n in followed}

    def find(x: str) -> str:
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    def union(xs: Sequence[str]) -> bool:
        rs = sorted({find(x) for x in xs}, key=natural_key)
        for r in rs[1:]:
            root[r] = rs[0]
        return len(rs) > 1

    atomic_members: set[str] = set()
    for group in atomic:
        members = [n for n in group if n in inside]
        if len(members) > 1:
            union(members)
            atomic_members.update(members)
    while True:  # a merge can close a cycle through other nodes: collapse it too, until none
        groups = sort_ids(find(n) for n in followed)
        gsucc: dict[str, list[str]] = {g: [] for g in groups}
        for a in followed:
            for b in succ[a]:
                if find(a) != find(b):
                    gsucc[find(a)].append(find(b))
        merged = [union(c) for c in sccs(groups, gsucc) if len(c) > 1]
        if not any(merged):
            break
    comps: dict[str, list[str]] = {}
    for n in followed:
        comps.setdefault(find(n), []).append(n)
    composite_of: dict[str, str] = {}
    members_of: dict[str, list[str]] = {}
    atomic_ids: set[str] = set()
    multi = sorted((sort_ids(c) for c in comps.values() if len(c) > 1),
                   key=lambda c: natural_key(c[0]))
    for i, comp in enumerate(multi, start=1):
        is_atomic = bool(atomic_members & set(comp))
        cid = comp[0] + (ATOMIC_SUFFIX if is_atomic else COMPOSITE_SUFFIX)
        if len(cid) > caps.ID_MAX_CHARS:
            cid = f"{'atomic' if is_atomic else 'cycle'}{i}"
        k = 1
        while cid in used:
            k += 1
            suffix = ATOMIC_SUFFIX if is_atomic else COMPOSITE_SUFFIX
            cid = f"{comp[0]}{suffix}{k}" if len(comp[0]) + len(suffix) + 2 <= caps.ID_MAX_CHARS \
                else f"{'atomic' if is_atomic else 'cycle'}{i}_{k}"
        used.add(cid)
        members_of[cid] = comp
        composite_of.update({m: cid for m in comp})
        if is_atomic:
            atomic_ids.add(cid)
    return composite_of, members_of, atomic_ids


def _composite(
    cid: str, members: list[Obligation], deps: list[str], edges: list[tuple[str, str]], *,
    atomic: bool = False,
) -> PlanNode:
    verbs = {m.obligation for m in members}
    verb = next(v for v in ("modify", "preserve", "validate") if v in verbs)
    targets = " + ".join(m.target_entity for m in members)
    if len(targets) > caps.ENTITY_MAX_CHARS:
        targets = f"{members[0].target_entity} (+{len(members) - 1} more)"
    ids = ", ".join(m.id for m in members)
    checks = " && ".join(m.validation for m in members)
    return PlanNode(
        id=cid,
        target_entity=targets,
        obligation=verb,
        caused_by=(f"atomic step (rules: breaking_change): {ids} change an interface with no "
                   "widening step and rebind its consumers, so no order of separate steps keeps "
                   "the repository valid" if atomic else
                   f"cycle collapse (§3.3 step 2): {ids} require each other")[
            : caps.FIELD_MAX_CHARS],
        dependencies=_fit_deps(cid, deps, edges),
        evidence=("composite of a breaking change and its consumers' rebinds; validated as one "
                  "unit" if atomic else "composite of a dependency cycle; validated as one unit")[
            : caps.EVIDENCE_MAX_CHARS
        ],
        status="blocked",
        validation=checks[: caps.FIELD_MAX_CHARS],
        cycle_collapsed=True,
        members=[m.id for m in members],
    )


def _fit_deps(nid: str, deps: list[str], edges: list[tuple[str, str]]) -> list[str]:
    """A node's effective predecessors; past the 16-id cap, its transitive reduction."""
    deps = sort_ids(deps)
    if len(deps) <= caps.MAX_DEPENDENCIES:
        return deps
    succ: dict[str, set[str]] = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)

    def reaches(a: str, b: str) -> bool:
        seen, todo = set(), [a]
        while todo:
            x = todo.pop()
            for y in succ.get(x, ()):
                if y == b:
                    return True
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return False

    reduced = [d for d in deps if not any(o != d and reaches(d, o) for o in deps)]
    if len(reduced) > caps.MAX_DEPENDENCIES:
        raise InputError(
            f"{nid} has {len(reduced)} direct predecessors after reduction; split it",
            field=f"{nid}.dependencies",
            cap="MAX_DEPENDENCIES 16",
        )
    return reduced


def _toposort(steps: list[str], preds: dict[str, list[str]]) -> list[str]:
    """Kahn's algorithm with a min-heap on natural ids; refuses a cycle that survived collapse."""
    waiting = {n: len(set(preds[n])) for n in steps}
    succ: dict[str, list[str]] = {n: [] for n in steps}
    for n in steps:
        for p in set(preds[n]):
            succ[p].append(n)
    heap = [(natural_key(n), n) for n in steps if waiting[n] == 0]
    heapq.heapify(heap)
    out: list[str] = []
    while heap:
        _, n = heapq.heappop(heap)
        out.append(n)
        for s in succ[n]:
            waiting[s] -= 1
            if waiting[s] == 0:
                heapq.heappush(heap, (natural_key(s), s))
    if len(out) != len(steps):
        stuck = ", ".join(sort_ids(set(steps) - set(out)))
        raise InputError(
            f"a cycle survived collapse among {stuck}; it cannot be executed (§3.3 step 2)",
            field="order.edges",
        )
    return out


# ---------------------------------------------------------------------------------------------
# §3.3 step 4: checkpoints


def _checkpoints(steps: list[str]) -> list[Checkpoint]:
    n = len(steps)
    allowed = list(range(1, n + 1))
    room = caps.MAX_CHECKPOINTS - 1  # CP0 marks the start
    if len(allowed) > room:
        allowed = [allowed[(j + 1) * len(allowed) // room - 1] for j in range(room)]
    out = [Checkpoint(id="CP0", step=0, after=[])]
    prev = 0
    for i, k in enumerate(allowed, start=1):
        out.append(Checkpoint(id=f"CP{i}", step=k, after=steps[prev:k]))
        prev = k
    return out
