"""§3.5 step 3 scoped replan over values (spec §5 phase 6): the re-decompose hook receives only
the failed node + its true dependents; siblings and upstream nodes are not re-planned."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from plan07.model import Decomposition, DerivedEdge, Obligation, OrderResult, PlanNode, Violation
from plan07.plan import replan


def ob(i: str, deps: Sequence[str] = (), evidence: str = "") -> Obligation:
    return Obligation(id=i, target_entity=f"pkg.{i.lower()}", obligation="modify",
                      caused_by="requirement", dependencies=list(deps), evidence=evidence,
                      status="blocked" if deps else "ready", validation="compile")


#  O1 -> O2 -> O4 <- O5,  O1 -> O3 (O3 is O2's sibling; O1, O5 are upstream of the failure)
OBS = [ob("O1"), ob("O2", ["O1"]), ob("O3", ["O1"]), ob("O4", ["O2", "O5"]), ob("O5")]
NODES = [PlanNode(**o.model_dump()) for o in OBS]


def declared(obs: Sequence[Obligation]) -> OrderResult:
    return OrderResult(edges=[DerivedEdge(**{"from": d, "to": o.id, "rule": "declared"})
                              for o in obs for d in o.dependencies])


ORDER = declared(OBS)
ORDER.violations = [Violation(kind="unplanned_consumer", nodes=["O3"]),
                    Violation(kind="contradicts_ladder", nodes=["O2", "O4"])]


def scoped_replan(nodes: Sequence[PlanNode], obligations: Sequence[Obligation],
                  order: OrderResult, failed: str, hooks: Hooks) -> replan.Replan:
    """The steps as the Planner takes them, the two effects done by the scripted hooks."""
    frag = replan.fragment(nodes, obligations, failed)
    dec = hooks.redecompose(frag.obligations)
    scope = replan.reply_scope(frag, order, dec)
    if isinstance(scope, replan.Replan):
        return scope
    return replan.splice_reply(frag, order, dec, scope, hooks.rewalk(scope))


class Hooks:
    """Scripted decomposer and rules: they record exactly what they were given."""

    def __init__(self, reply: Sequence[Obligation] | None) -> None:
        self.reply = reply
        self.fragments: list[list[str]] = []
        self.scopes: list[list[str]] = []

    def redecompose(self, fragment: Sequence[Obligation]) -> Decomposition:
        self.fragments.append([o.id for o in fragment])
        if self.reply is None:
            return Decomposition(obligations=[], re_decompose=True, reason="malformed")
        return Decomposition(obligations=list(self.reply))

    def rewalk(self, scope: Sequence[Obligation]) -> OrderResult:
        self.scopes.append([o.id for o in scope])
        out = declared(scope)
        out.violations = [Violation(kind="ungrounded", nodes=[scope[-1].id])]
        return out


def test_fail_replans_only_the_failed_node_and_its_true_dependents() -> None:
    # the model splits O2 into O2 + O2.r1 and re-points O4 at both
    reply = [ob("O2", ["O1"], "revised"), ob("O2.r1", ["O2"]), ob("O4", ["O2.r1", "O5"])]
    hooks = Hooks(reply)
    r = scoped_replan(NODES, OBS, ORDER, "O2", hooks)
    assert hooks.fragments == [["O2", "O4"]]  # ONE call, the subgraph's fragment only
    assert hooks.scopes == [["O1", "O5", "O2", "O2.r1", "O4"]]  # fragment + direct upstream
    assert (r.accepted, r.affected, r.removed) == (True, ["O2", "O4"], ["O2", "O4"])
    assert [o.id for o in r.added] == ["O2", "O2.r1", "O4"]
    pairs = [(e.from_, e.to) for e in r.edges]
    assert sorted(pairs) == [("O1", "O2"), ("O1", "O3"), ("O2", "O2.r1"), ("O2.r1", "O4"),
                             ("O5", "O4")]
    # the sibling's and upstream's edges are the very same objects: untouched
    untouched = next(e for e in ORDER.edges if (e.from_, e.to) == ("O1", "O3"))
    assert any(e is untouched for e in r.edges)
    # violations about the untouched sibling stay; those about the old fragment go
    assert [(v.kind, v.nodes) for v in r.violations] == [("unplanned_consumer", ["O3"]),
                                                         ("ungrounded", ["O4"])]


@pytest.mark.parametrize(("failed", "fragment"), [
    ("O1", ["O1", "O2", "O3", "O4"]),
    ("O3", ["O3"]),
    ("O4", ["O4"]),
    ("O5", ["O4", "O5"]),
])
def test_the_hook_sees_the_affected_fragment_only(failed: str, fragment: list[str]) -> None:
    hooks = Hooks([o for o in OBS if o.id in fragment])
    r = scoped_replan(NODES, OBS, ORDER, failed, hooks)
    assert hooks.fragments == [fragment]
    assert r.accepted


@pytest.mark.parametrize(("reply", "why"), [
    (None, "fell back"),
    ([ob("O2", ["O1"]), ob("O3")], "reused id"),  # O3 is an untouched sibling
    ([ob("O2", ["O9"])], "unknown dependencies"),
])
def test_unusable_scoped_decomposition_keeps_the_plan(reply: list[Obligation] | None,
                                                      why: str) -> None:
    hooks = Hooks(reply)
    r = scoped_replan(NODES, OBS, ORDER, "O2", hooks)
    assert not r.accepted
    assert why in r.reason
    assert r.edges == ORDER.edges
    assert r.added == []
    assert hooks.scopes == []  # nothing re-walked


def test_composite_node_failure_replans_all_its_members() -> None:
    # O2 and O3 collapsed into one composite (§3.3 step 2); O4 depends on the composite
    nodes = [PlanNode(**OBS[0].model_dump()),
             PlanNode(id="O2_cycle", target_entity="pkg.o2 + pkg.o3", obligation="modify",
                      caused_by="cycle", dependencies=["O1"], evidence="", status="ready",
                      validation="compile", cycle_collapsed=True, members=["O2", "O3"]),
             PlanNode(**OBS[3].model_copy(update={"dependencies": ["O2_cycle", "O5"]})
                      .model_dump()),
             PlanNode(**OBS[4].model_dump())]
    hooks = Hooks([o for o in OBS if o.id in {"O2", "O3", "O4"}])
    r = scoped_replan(nodes, OBS, ORDER, "O2_cycle", hooks)
    assert hooks.fragments == [["O2", "O3", "O4"]]
    assert r.affected == ["O2_cycle", "O4"]
