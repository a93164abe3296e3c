"""The runtime backstop (design: the rules and the observed edit decide first; this catches what
neither foresaw). Pure.

When a node's check fails and its failing tests are the tests of other work, the change was
breaking after all, and no retry of the node alone can pass:

- a failing test that exercises the target of a pending planned node (whether or not an edge
  linked the two): the node and that one become one atomic step (the `breaking_change`
  violation the rules derive, so the scheduler makes the same composite);
- a failing test that exercises only code the plan does not hold, code that consumes the failed
  node's target: that consumer's rebind is added (§3.6, an impact edge) and joins the step.

The merged step is offered again with no model call. A failing test that exercises the failed
node's own target, or that nothing links to anything, is the node's own failure: no merge.

A test exercises a target when a recon edge links the test to a part of the target (`tests`,
`calls`, `by_name`), or, weakest, the test's module imports the target's module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from plan07.model import Evidence, ImpactEdge, Obligation, PlanNode, Violation

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


@dataclass(frozen=True)
class Breakage:
    """What a failure in other work's tests asks for: the violations that merge the failed node
    with pending planned nodes, and the consumers to add (impact edges, changed -> consumer)."""

    violations: list[Violation] = field(default_factory=list)
    consumers: list[ImpactEdge] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.violations or self.consumers)


def _module_of_test(test: str) -> str:
    path = test.partition("::")[0]
    return path[:-3].replace("/", ".") if path.endswith(".py") else path


def _imports(evidence: Evidence, test: str, target: str) -> bool:
    """The test's module imports the module holding `target` (or a package above it)."""
    mod = _module_of_test(test)
    return any(e.kind == "imports" and (e.src == mod or e.src == mod.removeprefix("src."))
               and (_part(target, e.dst)) for e in evidence.recon.edges)


def breakage(nodes: Sequence[PlanNode], members: dict[str, list[Obligation]], node_id: str,
             output: str, evidence: Evidence) -> Breakage:
    """What the failing tests in `output` of node `node_id`'s check ask for (module docstring):
    empty when there is no failing test, or one of them is the node's own failure."""
    tests = failing_tests(output)
    if not tests:
        return Breakage()
    by_id = {n.id: n for n in nodes}

    def obs(nid: str) -> list[Obligation]:
        n = by_id[nid]
        return members.get(nid) or [
            Obligation(**n.model_dump(include=set(Obligation.model_fields)))]

    from plan07.vocab import normalize_test

    failed = [o for o in obs(node_id) if o.obligation == "modify"]
    if not failed:
        return Breakage()
    test_entity = {}
    for rn in evidence.recon.nodes:
        if rn.kind == "test" and rn.file and (t := normalize_test(rn.id, rn.file)):
            test_entity[t] = rn.id
    pending = [o for n in nodes if n.id != node_id and n.state != "complete"
               and n.status != "alternative" for o in obs(n.id) if o.obligation == "modify"]
    # what the plan rewrites (a validate, the closing regression run over the package, holds
    # none of the code a consumer is in)
    planned = [o.target_entity for n in nodes for o in obs(n.id) if o.obligation == "modify"]
    blamed: dict[str, str] = {}  # pending obligation id -> the first test of its that failed
    add: dict[str, ImpactEdge] = {}
    for t in tests:
        ent = test_entity.get(t)
        hit = sorted({e.dst for e in evidence.recon.edges if ent and e.src == ent
                      and e.kind in TEST_LINKS})
        owners = [o for o in pending if any(_part(x, o.target_entity) for x in hit)] or [
            o for o in pending if _imports(evidence, t, o.target_entity)]
        if owners:  # it exercises pending planned work: that work lands with the node
            for o in owners:
                blamed.setdefault(o.id, t)
            continue
        users = [x for x in hit if not any(_part(x, p) for p in planned) and any(
            _consumes(x, f.target_entity, evidence) for f in failed)]
        if not users:  # it tests the node's own target, or nothing known: its own failure
            return Breakage()
        for x in users:
            add.setdefault(x, ImpactEdge(src=failed[0].target_entity, dst=x,
                                         relation=f"runtime: {t} failed"[:64],
                                         cause="sig_change", confidence=0.8))
    anchor = failed[0].id
    return Breakage(
        [Violation(kind=KIND, nodes=[anchor, b],
                   detail=f"runtime: {node_id}'s check failed in {t}, a test of {b}'s target: "
                          "the change is breaking; they land as one atomic step")
         for b, t in sorted(blamed.items())],
        [add[k] for k in sorted(add)])
