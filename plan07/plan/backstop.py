"""The runtime backstop of the compatible/breaking rules (design.md "Compatible vs breaking
interface changes"). Pure.

The rules make a change one atomic step with its consumers' rebinds only when an obligation says
the change is breaking. When a node's check fails and every failing test belongs to a planned
dependent that consumes the node's target, the failure showed the change is breaking after all:
the node and those dependents are merged into one composite (the same `breaking_change`
violation the rules derive, so the scheduler makes the same atomic step), and the composite is
offered again. No model call: nothing needs re-deciding, only landing together.

A failing test belongs to a dependent D when D's validation names it (or the path holding it), D's
target is the test or its test module, or a recon edge links the test to a part of D's target
(`tests`, `calls`, `by_name`). D consumes the node's target when a recon edge of a consume kind
runs from a part of D's target to a part of the node's target (a part: the entity, anything
defined inside it, a class for its `__init__`), or an impact edge from the one to the other has a
consumer cause.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from plan07.model import Evidence, Obligation, PlanNode, Violation

# pytest's short test summary (`-rfE`, on by default): `FAILED path::name - msg`, `ERROR path`.
_SUMMARY = re.compile(r"^(?:FAILED|ERROR)\s+(\S+)", re.M)
CONSUME_KINDS = ("calls", "imports", "inherits", "uses_type", "reads", "by_name", "references")
CONSUMER_CAUSES = ("sig_change", "schema_change", "consumer_rebind")
TEST_LINKS = ("tests", "calls", "by_name")
KIND = "breaking_change"


def failing_tests(output: str) -> list[str]:
    """The test ids (`path::name`, parameters dropped) or paths in pytest's short summary."""
    out = []
    for m in _SUMMARY.finditer(output):
        t = re.sub(r"\[.*$", "", m.group(1))
        if t not in out:
            out.append(t)
    return out


def _part(x: str, e: str) -> bool:
    return x == e or x.startswith(e + ".") or (
        e.rpartition(".")[2] in ("__init__", "__new__") and x == e.rpartition(".")[0])


def _owns(d: Obligation, test: str, evidence: Evidence, test_entity: dict[str, str]) -> bool:
    path, _, _name = test.partition("::")
    v = d.validation.strip()
    if v == test or v.startswith(test + "::") or (
            v.startswith("pytest:") and (path + "/").startswith(v.removeprefix("pytest:")
                                                             .rstrip("/") + "/")):
        return True
    if v.partition("::")[0] == path and "::" not in test:
        return True  # a collection error of the file D's own test lives in
    module = path[:-3].replace("/", ".") if path.endswith(".py") else path
    t = d.target_entity.strip()
    if t in (test, path) or _part(module, t) or _part(t, module) or _part(
            module.removeprefix("src."), t):
        return True
    ent = test_entity.get(test)
    return ent is not None and any(
        e.kind in TEST_LINKS and e.src == ent and _part(e.dst, t) for e in evidence.recon.edges)


def _consumes(d: str, s: str, evidence: Evidence) -> bool:
    return any(e.kind in CONSUME_KINDS and _part(e.src, d) and _part(e.dst, s)
               for e in evidence.recon.edges) or any(
        i.cause in CONSUMER_CAUSES and _part(i.src, s) and _part(i.dst, d)
        for i in evidence.impact.edges)


def merge_group(nodes: Sequence[PlanNode], members: dict[str, list[Obligation]], node_id: str,
                output: str, evidence: Evidence) -> list[Violation]:
    """The `breaking_change` violations that merge the failed `node_id` with the planned,
    pending dependents that consume its target, when every failing test in `output` is one of
    theirs; [] when there is no failing test or one is not theirs (a local failure)."""
    tests = failing_tests(output)
    if not tests:
        return []
    by_id = {n.id: n for n in nodes}
    succ: dict[str, list[str]] = {}
    for n in nodes:
        for p in n.dependencies:
            succ.setdefault(p, []).append(n.id)
    seen, todo = set(), list(succ.get(node_id, []))
    while todo:  # the true dependents: everything downstream, not yet complete
        x = todo.pop()
        if x not in seen and x in by_id and by_id[x].state != "complete":
            seen.add(x)
            todo += succ.get(x, [])

    def obs(nid: str) -> list[Obligation]:
        n = by_id[nid]
        return members.get(nid) or [
            Obligation(**n.model_dump(include=set(Obligation.model_fields)))]

    from plan07.vocab import normalize_test

    failed = [o for o in obs(node_id) if o.obligation == "modify"]
    test_entity = {}
    for rn in evidence.recon.nodes:
        if rn.kind == "test" and rn.file and (t := normalize_test(rn.id, rn.file)):
            test_entity[t] = rn.id
    consumers = [(nid, o) for nid in sorted(seen) for o in obs(nid)
                 if o.obligation == "modify" and any(
                     _consumes(o.target_entity, f.target_entity, evidence) for f in failed)]
    owners = {t: [o for _nid, o in consumers if _owns(o, t, evidence, test_entity)]
              for t in tests}
    if not consumers or not all(owners.values()):
        return []
    blamed = sorted({o.id for os in owners.values() for o in os})
    anchor = failed[0].id
    return [Violation(kind=KIND, nodes=[anchor, b],
                      detail=f"runtime: {node_id}'s check failed in {', '.join(tests[:3])}, tests "
                             f"of {b}, which consumes {failed[0].target_entity}: the change is "
                             "breaking; they land as one atomic step")
            for b in blamed]
