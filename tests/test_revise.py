"""§3.6 adaptive revision trigger (spec §5 phase 7): add the unforeseen obligation with its
caused_by, remove a falsified one, re-walk only the touched neighbourhood, record each revision."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from plan07.errors import InputError
from plan07.model import DerivedEdge, Evidence, Feedback, ImpactEdge, Obligation
from plan07.plan.revise import merge_evidence, revise, rewalk_scope, splice_edges
from plan07.store.schema import load


def ob(i: str, target: str, deps: Sequence[str] = ()) -> Obligation:
    return Obligation(id=i, target_entity=target, obligation="modify", caused_by="requirement",
                      dependencies=list(deps), evidence="", status="blocked" if deps else "ready",
                      validation="compile")


# O1 widens pkg.auth.SessionConfig; O2 rebinds SessionManager.load; O3 compiles; O4 is an
# unrelated sibling (pkg.web); O5 depends on O4.
PLAN = [
    ob("O1", "pkg.auth.SessionConfig"),
    ob("O2", "pkg.auth.SessionManager.load", ["O1"]),
    ob("O3", "pkg.auth", ["O2"]),
    ob("O4", "pkg.web.handler"),
    ob("O5", "pkg.web.view", ["O4"]),
]
EV = Evidence()


def edge(src: str, dst: str) -> ImpactEdge:
    return ImpactEdge(src=src, dst=dst, relation="CalledBy", cause="sig_change", confidence=0.9)


def test_unforeseen_consumer_is_added_with_caused_by() -> None:
    fb = Feedback(caused_by="O1", impact_edges=[edge("pkg.auth.SessionConfig", "pkg.cli.main")])
    new, touched, revs = revise(PLAN, EV, fb, first_rev=3, now="2026-01-01T00:00:00Z")
    added = [o for o in new if o.id not in {p.id for p in PLAN}]
    assert [(o.id, o.target_entity, o.dependencies, o.status) for o in added] == [
        ("O6", "pkg.cli.main", ["O1"], "blocked")]
    assert "O1" in added[0].caused_by
    assert "pkg.auth.SessionConfig -> pkg.cli.main" in added[0].caused_by
    assert touched == ["O1", "O6"]
    assert [(r.rev, r.change, r.caused_by, r.time) for r in revs] == [
        (3, "added O6 (pkg.cli.main) via impact feedback", "O1", "2026-01-01T00:00:00Z")]
    # the nodes outside the neighbourhood are unchanged
    assert [o for o in new if o.id in {"O2", "O3", "O4", "O5"}] == PLAN[1:]


def test_unforeseen_dependency_on_a_covered_consumer_is_wired() -> None:
    # O5 (pkg.web.view) turns out to call SessionConfig: it must now come after O1.
    fb = Feedback(caused_by="O1",
                  impact_edges=[edge("pkg.auth.SessionConfig", "pkg.web.view.render")])
    new, touched, revs = revise(PLAN, EV, fb)
    assert next(o for o in new if o.id == "O5").dependencies == ["O4", "O1"]
    assert len(new) == len(PLAN)
    assert touched == ["O1", "O5"]
    assert revs[0].change == "added dependency O1 -> O5 via impact feedback"


def test_already_known_edge_changes_nothing() -> None:
    fb = Feedback(caused_by="O1", impact_edges=[edge("pkg.auth.SessionConfig",
                                                     "pkg.auth.SessionManager.load")])
    assert revise(PLAN, EV, fb) == (PLAN, [], [])


@pytest.mark.parametrize(("fb", "gone", "rewired"), [
    # falsified obligation: its dependent inherits its dependencies (O3 now after O1)
    (Feedback(caused_by="O1", falsified_obligations=["O2"]), {"O2"}, {"O3": ["O1"]}),
    # falsified entity removes every obligation inside it
    (Feedback(caused_by="impact06", falsified_entities=["pkg.web"]), {"O4", "O5"}, {}),
    (Feedback(caused_by="O4", falsified_obligations=["O4"]), {"O4"}, {"O5": []}),
])
def test_falsified_obligations_are_removed(fb: Feedback, gone: set[str],
                                           rewired: dict[str, list[str]]) -> None:
    new, touched, revs = revise(PLAN, EV, fb)
    ids = {o.id for o in new}
    assert ids == {o.id for o in PLAN} - gone
    for i, deps in rewired.items():
        assert next(o for o in new if o.id == i).dependencies == deps
    assert set(touched) == set(rewired)
    assert sorted(r.change.split()[1] for r in revs) == sorted(gone)
    assert all(r.caused_by == fb.caused_by for r in revs)
    assert all(not (set(o.dependencies) & gone) for o in new)


def test_unknown_falsified_obligation_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown obligation.*O9"):
        revise(PLAN, EV, Feedback(caused_by="O1", falsified_obligations=["O9"]))


def test_rewalk_scope_is_the_touched_neighbourhood() -> None:
    scope = rewalk_scope(PLAN, ["O2"])
    assert [(o.id, o.dependencies) for o in scope] == [("O1", []), ("O2", ["O1"]), ("O3", ["O2"])]
    assert [o.id for o in rewalk_scope(PLAN, [])] == []


def fake_rules(obligations: Sequence[Obligation]) -> list[DerivedEdge]:
    """Stands in for plan07.order.derive.derive_order: declared edges, and it records what it
    saw."""
    fake_rules.seen = [o.id for o in obligations]  # type: ignore[attr-defined]
    return [DerivedEdge(**{"from": d, "to": o.id, "rule": "declared"})
            for o in obligations for d in o.dependencies]


def test_only_the_touched_neighbourhood_is_rewalked_and_spliced() -> None:
    old = fake_rules(PLAN)
    fb = Feedback(caused_by="O1", impact_edges=[edge("pkg.auth.SessionConfig", "pkg.cli.main")],
                  falsified_obligations=["O3"])
    new, touched, _ = revise(PLAN, EV, fb)
    walked = fake_rules(rewalk_scope(new, touched))
    assert fake_rules.seen == ["O1", "O2", "O6"]  # type: ignore[attr-defined]  # not O4, O5
    edges = splice_edges(old, walked, touched, removed=["O3"])
    pairs = [(e.from_, e.to) for e in edges]
    assert {("O4", "O5"), ("O1", "O6"), ("O1", "O2")} <= set(pairs)
    assert not [p for p in pairs if "O3" in p]
    # the untouched edge is the very same object, byte-identical when serialized
    assert next(e for e in edges if e.to == "O5") is old[-1]


def test_merge_evidence_adds_edges_and_drops_falsified() -> None:
    ev = Evidence.model_validate({"impact": {"edges": [
        {"src": "pkg.web.handler", "dst": "pkg.web.view", "relation": "CalledBy",
         "cause": "sig_change", "confidence": 1}]}})
    fb = Feedback(caused_by="O1", impact_edges=[edge("a", "b"), edge("a", "b")],
                  falsified_entities=["pkg.web"])
    out = merge_evidence(ev, fb)
    assert [(e.src, e.dst) for e in out.impact.edges] == [("a", "b")]
    assert ev.impact.edges[0].dst == "pkg.web.view"  # input untouched


def test_feedback_file_is_schema_checked(tmp_path: Path) -> None:
    p = tmp_path / "f.json"
    p.write_text(json.dumps({"caused_by": "O6", "impact_edges": [
        {"src": "a", "dst": "b", "relation": "CalledBy", "cause": "sig_change",
         "confidence": 0.5}], "falsified_obligations": ["O4"]}))
    fb = load("feedback", p)
    assert isinstance(fb, Feedback)
    assert fb.falsified_obligations == ["O4"]
    p.write_text(json.dumps({"caused_by": "O6", "surprise": 1}))
    with pytest.raises(InputError, match="surprise"):
        load("feedback", p)
    p.write_text(json.dumps({"caused_by": "O6", "impact_edges": [{"src": "a"}]}))
    with pytest.raises(InputError, match=r"impact_edges\[0\]"):
        load("feedback", p)


@pytest.mark.parametrize(("fb", "expect_deps", "n_revs"), [
    # the cause is evidence, not an obligation: the changer is whoever changes src
    (Feedback(caused_by="impact06", impact_edges=[edge("pkg.auth.SessionConfig", "pkg.cli.main")]),
     {"O6": ["O1"]}, 1),
    # wiring O4 after O5 would close a cycle (O5 already depends on O4): left alone
    (Feedback(caused_by="O5", impact_edges=[edge("pkg.web.view", "pkg.web.handler")]),
     {"O4": [], "O5": ["O4"]}, 0),
])
def test_changer_and_cycle_table(fb: Feedback, expect_deps: dict[str, list[str]],
                                 n_revs: int) -> None:
    new, _, revs = revise(PLAN, EV, fb)
    for i, deps in expect_deps.items():
        assert next(o for o in new if o.id == i).dependencies == deps
    assert len(revs) == n_revs


RECON = Evidence.model_validate({"recon": {"nodes": [
    {"id": n, "kind": k} for n, k in [
        ("pkg.auth.SessionConfig", "class"), ("pkg.auth.SessionManager.load", "method"),
        ("pkg.cli.main", "function"), ("pkg.legacy.shim", "function")]]}})


@pytest.mark.parametrize(("evidence", "fb", "field"), [
    # an edge end that is no recon node and no obligation's target
    (RECON, Feedback(caused_by="O1", impact_edges=[
        edge("pkg.auth.SessionConfig", "pkg.cli.main"),
        edge("pkg.auth.SessionConfig", "pkg.nosuch.f")]), r"impact_edges\[1\]\.dst"),
    (RECON, Feedback(caused_by="O1", impact_edges=[edge("pkg.nosuch", "pkg.cli.main")]),
     r"impact_edges\[0\]\.src"),
    # a falsified entity that is neither a recon node nor covers a target changes nothing
    (RECON, Feedback(caused_by="O1", falsified_entities=["pkg.legacy.shim", "pkg.nosuch"]),
     r"falsified_entities\[1\]"),
    (EV, Feedback(caused_by="O1", falsified_entities=["pkg.nosuch"]), r"falsified_entities\[0\]"),
    (EV, Feedback(caused_by="O1", falsified_obligations=["O2", "O9"]),
     r"falsified_obligations\[1\]"),
    # known: recon nodes, targets, what covers a target, any edge when recon has no nodes
    (RECON, Feedback(caused_by="O1", impact_edges=[edge("pkg.auth.SessionConfig", "pkg.web.view")],
                     falsified_entities=["pkg.legacy.shim", "pkg.web"]), None),
    (RECON, Feedback(caused_by="O1", impact_edges=[edge("pkg.web.view", "pkg.web.gone")],
                     falsified_entities=["pkg.web"]), None),  # the edge goes with pkg.web
    (EV, Feedback(caused_by="O1", impact_edges=[edge("a", "b")]), None),
])
def test_check_feedback_names_what_the_plan_does_not_know(
        evidence: Evidence, fb: Feedback, field: str | None) -> None:
    from plan07.plan.revise import check_feedback

    if field is None:
        check_feedback(PLAN, evidence, fb)
        return
    with pytest.raises(InputError) as exc:
        check_feedback(PLAN, evidence, fb)
    assert exc.value.one_line().startswith(field.replace("\\", "") + ": ")


def test_revise_refuses_an_edge_to_an_entity_outside_the_evidence() -> None:
    fb = Feedback(caused_by="O1", impact_edges=[edge("pkg.auth.SessionConfig", "pkg.nosuch.f")])
    with pytest.raises(InputError, match=r"pkg\.nosuch\.f"):
        revise(PLAN, RECON, fb)
    new, _, _ = revise(PLAN, EV, fb)  # no recon nodes: nothing to check against
    assert new[-1].target_entity == "pkg.nosuch.f"


@pytest.mark.parametrize(("fb", "field"), [
    ({"caused_by": "O1", "impact_edges": [{"src": "pkg.auth.SessionConfig", "dst": "pkg.nosuch",
                                           "relation": "CalledBy", "cause": "sig_change",
                                           "confidence": 0.9}]}, "impact_edges[0].dst"),
    ({"caused_by": "O1", "falsified_entities": ["pkg.nosuch"]}, "falsified_entities[0]"),
    ({"caused_by": "O1", "falsified_obligations": ["O9"]}, "falsified_obligations[0]"),
])
def test_cli_feedback_refuses_unknown_names_and_writes_nothing(
        fb: dict[str, object], field: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from plan07.cli import main
    from plan07.model import PlanArtifact, PlanNode, Requirement

    art = PlanArtifact(plan_id="plan-test", requirement=Requirement(goal="g",
                       acceptance_criteria=["x"]),
                       nodes=[PlanNode.model_validate(o.model_dump()) for o in PLAN],
                       checkpoints=[], branch_scores={}, revision_history=[], audit=[],
                       evidence=RECON)
    (tmp_path / "plan.json").write_text(art.model_dump_json(by_alias=True))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    (tmp_path / "f.json").write_text(json.dumps(fb))
    assert main(["feedback", str(tmp_path / "f.json"), "--state", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: {field}: ")
    assert captured.err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "f.json"} == before
