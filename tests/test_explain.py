"""Explain: minimal-height proofs naming rule ids, `rules/ordering.dl:LINE` and leaf sources;
checked absences; depth cut; why-not with the candidate rule and its missing premise; the CLI
from files and from a persisted plan (`--state DIR`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plan07.cli import main
from plan07.engine import load_program
from plan07.engine.provenance import explain_facts, render
from plan07.evidence import load_evidence
from plan07.model import PlanArtifact, PlanNode, Requirement
from plan07.model.proof import ProofNode
from plan07.order.derive import explain, explain_violation, load_obligations
from plan07.order.fixtures import case_facts, discover

SPEC = Path(__file__).parent / "rules" / "session_timeout" / "spec_example"
LADDER = ["widen_before_rebind", "widen_before_compile", "rebind_before_compile",
          "preserve_before_recheck", "recheck_before_rely", "preserve_before_rely",
          "shared_type_before_consumer", "migration_before_usage",
          "define_test_before_validate", "declared"]


def _spec() -> tuple[list, object]:  # type: ignore[type-arg]
    return load_obligations(SPEC / "obligations.json"), load_evidence(SPEC / "evidence.json")


def _walk(n: ProofNode) -> list[ProofNode]:
    return [n, *(x for c in n.children for x in _walk(c))]


@pytest.mark.parametrize("rung", LADDER)
def test_each_ladder_rule_fixture_has_a_readable_proof(rung: str) -> None:
    prog = load_program()
    case = next(c for c in discover(rule=rung) if c.name.startswith("pos"))
    proof = explain_facts(prog, case_facts(case), {}, "precedes", (None, None, rung))
    assert proof.holds
    assert proof.tree is not None
    cand = proof.tree.children[0]
    rule = prog.by_id(rung)
    assert rule is not None
    assert (cand.rule, cand.location) == (rung, f"rules/ordering.dl:{rule.line}")
    assert proof.tree.children[-1].kind == "absent"  # !beaten(...) as a checked absence
    text = "\n".join(render(proof.tree))
    assert f"[{rung} @ rules/ordering.dl:{rule.line}]" in text


def test_leaves_name_their_sources() -> None:
    proof = explain(load_obligations(SPEC / "obligations.json"),
                    load_evidence(SPEC / "evidence.json"), "O1", "O2")
    assert proof.holds
    assert proof.tree is not None
    leaves = {n.atom: n.sources for n in _walk(proof.tree) if n.kind == "fact"}
    assert leaves['targets("O1", "pkg.auth.SessionConfig")'] == ["obligation O1 .target_entity"]
    impact = 'impact("pkg.auth.SessionConfig", "pkg.auth.SessionManager.load", "sig_change")'
    assert leaves[impact] == ["evidence impact edge #0 (CalledBy, sig_change)"]


def test_minimal_height_and_deterministic_ties() -> None:
    obs, ev = _spec()
    a = explain(obs, ev, "O1", "O2")
    b = explain(obs, ev, "O1", "O2", engine="clingo")
    assert a == b
    # consumes(load, SessionConfig) is derivable from the impact edge and from the recon calls
    # edge, at the same height: the tie goes to the first rule in the file (consumes_impact)
    rules = [n.rule for n in _walk(a.tree) if n.atom.startswith("consumes(")]  # type: ignore[arg-type]
    assert set(rules) == {"consumes_impact"}
    assert a.height == 5


def test_depth_cuts_the_tree() -> None:
    obs, ev = _spec()
    full = explain(obs, ev, "O1", "O2")
    cut = explain(obs, ev, "O1", "O2", depth=1)
    assert len(_walk(cut.tree)) < len(_walk(full.tree))  # type: ignore[arg-type]
    assert any(n.kind == "cut" for n in _walk(cut.tree))  # type: ignore[arg-type]


def test_why_not_names_candidate_rule_and_missing_premise() -> None:
    obs, ev = _spec()
    proof = explain(obs, ev, "O2", "O1")
    assert not proof.holds
    assert proof.why_not[0].startswith(
        "the reverse edge O1 -> O2 holds by rule widen_before_rebind")
    assert proof.candidate_rule == "first_applicable_wins"
    assert proof.missing_premise == 'cand("O2", "O1", _)'
    # an existing test needs no define-test edge: the why-not says where the rung stops
    p2 = explain_facts(load_program(), case_facts(next(
        c for c in discover(rule="define_test_before_validate") if c.name == "neg_test_exists")),
        {}, "cand", ("O6", "O7", "define_test_before_validate"))
    assert p2.candidate_rule == "define_test_before_validate"
    assert p2.missing_premise == '!test_exists("tests/test_s.py::test_custom")'


def test_violation_is_explained() -> None:
    obs = load_obligations(SPEC.parent / "reversed_declared" / "obligations.json")
    ev = load_evidence(SPEC / "evidence.json")
    proof = explain_violation(obs, ev, "contradicts_ladder", ["O2", "O1"])
    assert proof.holds
    assert proof.tree is not None
    assert proof.tree.rule == "contradicts_ladder"
    assert [c.atom for c in proof.tree.children][:2] == [
        'declared_dep("O1", "O2")', 'precedes("O1", "O2", "widen_before_rebind")']


def _plan(tmp_path: Path, with_evidence: bool) -> Path:
    obs = load_obligations(SPEC / "obligations.json")
    art = PlanArtifact(plan_id="plan-test", requirement=Requirement(
        goal="Make the session timeout configurable", acceptance_criteria=["x"]),
        nodes=[PlanNode.model_validate(o.model_dump()) for o in obs], checkpoints=[],
        branch_scores={}, revision_history=[], audit=[],
        evidence=load_evidence(SPEC / "evidence.json") if with_evidence else None)
    (tmp_path / "plan.json").write_text(art.model_dump_json(by_alias=True))
    return tmp_path


def test_cli_explain_from_state_and_files(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    state = _plan(tmp_path, with_evidence=True)
    assert main(["explain", "O1", "O2", "--state", str(state)]) == 0
    out = capsys.readouterr().out
    assert "[widen_before_rebind @ rules/ordering.dl:" in out
    assert "<- evidence impact edge #0" in out
    assert main(["explain", "O2", "O1", "--state", str(state), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["holds"] is False
    assert data["candidate_rule"] == "first_applicable_wins"
    args = ["--obligations", str(SPEC / "obligations.json"), "--evidence",
            str(SPEC / "evidence.json")]
    assert main(["explain", "O6", "O7", *args, "--depth", "1"]) == 0
    assert "cut by --depth" in capsys.readouterr().out
    assert main(["explain", "O7", "--violation", "ungrounded", *args]) == 1
    assert main(["explain", "O1", "O2", "--state", str(tmp_path / "nowhere")]) == 2
    assert "no plan here" in capsys.readouterr().err


@pytest.mark.parametrize("source", ["state", "files", "facts"])
def test_cli_explain_unknown_violation_kind_is_bad_input(
        source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown kind exits 2 listing the kinds the rules define (a kind that does not hold
    for the nodes is the domain "no", exit 1)."""
    args = {"state": ["--state", str(_plan(tmp_path, with_evidence=True))],
            "files": ["--obligations", str(SPEC / "obligations.json")],
            "facts": ["--facts", str(next(c.path / "facts.dl" for c in discover()
                                          if (c.path / "facts.dl").exists()))]}[source]
    assert main(["explain", "--violation", "nosuch", "O1", *args]) == 2
    err = capsys.readouterr().err
    assert err == ("error: --violation: unknown violation kind 'nosuch'; known kinds: "
                   "behaviour_change, breaking_change, contradicts_ladder, ungrounded, "
                   "unknown_dependency, unplanned_consumer\n")


def test_cli_explain_from_state_evidence_sidecar_or_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = _plan(tmp_path, with_evidence=False)
    # no evidence anywhere: the rebind rung has no impact edge, so the edge is the declared one
    assert main(["explain", "O1", "O2", "--state", str(state), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["goal"] == 'precedes("O1", "O2", "declared")'
    assert main(["explain", "O1", "O2", "--state", str(state), "--evidence",
                 str(SPEC / "evidence.json"), "--json"]) == 0
    assert "widen_before_rebind" in json.loads(capsys.readouterr().out)["goal"]
    plan = json.loads((state / "plan.json").read_text())
    plan["evidence_file"] = "evidence.json"
    (state / "plan.json").write_text(json.dumps(plan))
    (state / "evidence.json").write_text((SPEC / "evidence.json").read_text())
    assert main(["explain", "O1", "O2", "--state", str(state), "--json"]) == 0
    assert "widen_before_rebind" in json.loads(capsys.readouterr().out)["goal"]


@pytest.mark.parametrize("rung", LADDER)
def test_cli_explain_prints_each_ladder_fixture(rung: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    facts_cases = [c for c in discover(rule=rung) if (c.path / "facts.dl").exists()]
    pos = next(c for c in facts_cases if c.name.startswith("pos"))
    a, b, _ = next(t for t in _expected(pos) if t[2] == rung)
    assert main(["explain", a, b, "--facts", str(pos.path / "facts.dl")]) == 0
    out = capsys.readouterr().out
    assert f'precedes("{a}", "{b}", "{rung}") holds' in out
    assert f"[{rung} @ rules/ordering.dl:" in out
    assert "facts.dl:" in out  # leaves name the line of the fact they came from
    neg = next(c for c in facts_cases if c.name.startswith("neg"))
    if (a, b, rung) not in _expected(neg):
        code = main(["explain", a, b, "--facts", str(neg.path / "facts.dl")])
        out = capsys.readouterr().out
        assert code in (0, 1)
        assert f'precedes("{a}", "{b}", "{rung}") holds' not in out


def _expected(case) -> set[tuple[str, ...]]:  # type: ignore[no-untyped-def]
    from plan07.order.fixtures import read_expected

    return read_expected(case).get("precedes", set())
