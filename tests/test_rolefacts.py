"""Role facts (docs/rules.md): plan07's own decomposer passes the `mentions` facts of the
obligations it wrote; the rules read those, not the prose, at create and at every re-walk (impact
feedback, the scoped replan, explain), and only while the obligation reads as it did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _smallplan import make_repo

from plan07.api import Planner
from plan07.decompose import make_client
from plan07.decompose.call import decompose
from plan07.decompose.client import Completion
from plan07.decompose.scripted import ScriptedClient
from plan07.model import Evidence, Feedback, Obligation, Requirement, Usage
from plan07.order.derive import derive_order, roles
from plan07.order.roles import bind, digest, kept, words_of

GOLDEN = Path(__file__).parent / "golden" / "decompose" / "session_timeout"
REQUEST = "Make f configurable.\n\n## Acceptance criteria\n\n- `tests/test_core.py::test_f` runs\n"


def ob(i: str, verb: str, target: str, deps: list[str], validation: str,
       caused_by: str = "requirement") -> dict[str, Any]:
    return {"id": i, "target_entity": target, "obligation": verb, "caused_by": caused_by,
            "dependencies": deps, "evidence": "03 recon", "status": "blocked" if deps else "ready",
            "validation": validation}


# a preserve and the re-run of its test whose prose says nothing of a default: only their role
# facts make them the old-default rungs (preserve_before_recheck)
PLAN = [
    ob("O1", "modify", "pkg.core.f", [], "compile"),
    ob("O2", "preserve", "pkg.core.f", ["O1"], "compile", "keep what f returns today"),
    ob("O3", "validate", "tests/test_core.py::test_f", ["O2"], "import:pkg.nothere",
       "re-run the test of f"),
]
WORDS: dict[str, list[Any]] = {"O1": [], "O2": ["default"], "O3": ["old_default"]}


def obligations(records: list[dict[str, Any]]) -> list[Obligation]:
    return [Obligation.model_validate(r) for r in records]


def rule(edges: Any, a: str, b: str) -> str | None:
    return next((e.rule for e in edges if (e.from_, e.to) == (a, b)), None)


def test_role_facts_replace_the_prose_reading() -> None:
    obs = obligations(PLAN)
    given = bind(obs, WORDS)
    assert roles(obs, Evidence(), role_facts=given) == {
        "O1": [], "O2": ["preserve_default"], "O3": ["compile", "recheck_default"]}
    assert roles(obs, Evidence()) == {"O1": [], "O2": [], "O3": ["compile"]}  # prose: nothing
    # prose that says "old default", under facts that say nothing: the facts win
    loud = obligations([{**r, "caused_by": "preserve the old default"} for r in PLAN])
    assert roles(loud, Evidence())["O3"] == ["compile", "recheck_default"]
    assert roles(loud, Evidence(), role_facts=bind(loud, {"O3": []}))["O3"] == ["compile"]


def test_role_facts_hold_only_while_the_obligation_reads_as_it_did() -> None:
    obs = obligations(PLAN)
    given = bind(obs, WORDS)
    moved = obs[2].model_copy(update={"status": "ready", "dependencies": []})
    assert digest(moved) == digest(obs[2])  # state and wiring change; the text is the same
    assert words_of(moved, given) == ["old_default"]
    rewritten = obs[2].model_copy(update={"caused_by": "a model's own words"})
    assert words_of(rewritten, given) is None  # read from its prose again
    assert kept(given, [obs[0], obs[1], rewritten]) == {k: given[k] for k in ("O1", "O2")}
    assert kept(given, []) is None


def _golden() -> tuple[Requirement, Evidence]:
    req = Requirement.model_validate_json((GOLDEN / "requirement.json").read_text())
    return req, Evidence.model_validate_json((GOLDEN / "evidence.json").read_text())


def test_the_builtins_order_is_carried_by_its_role_facts_not_its_prose() -> None:
    req, ev = _golden()
    dec = decompose(req, ev, make_client("builtin"))
    assert dec.roles is not None
    assert set(dec.roles) == {o.id for o in dec.obligations}
    order = derive_order(dec.obligations, ev, role_facts=dec.roles)
    assert order == derive_order(dec.obligations, ev)  # the same order as its prose gave
    # its prose reworded to nothing the keywords know: the same order from the same facts...
    plain = [o.model_copy(update={"caused_by": f"step {o.id}", "evidence": ""})
             for o in dec.obligations]
    words = {k: v.words for k, v in dec.roles.items()}
    assert derive_order(plain, ev, role_facts=bind(plain, words)) == order
    # ...which the prose alone no longer gives (the default rungs are gone)
    prose = derive_order(plain, ev)
    assert prose != order
    assert {e.rule for e in order.edges} - {e.rule for e in prose.edges} >= {
        "preserve_before_recheck", "recheck_before_rely"}


def test_a_models_reply_brings_no_role_facts(tmp_path: Path) -> None:
    req, ev = _golden()
    builtin = decompose(req, ev, make_client("builtin"))
    replay = tmp_path / "reply.json"
    replay.write_text(json.dumps({"obligations": [o.model_dump() for o in builtin.obligations]}))
    model = decompose(req, ev, make_client(f"replay:{replay}"))
    assert model.obligations == builtin.obligations
    assert model.roles is None  # the same text from a model is read from its prose
    # nor can a model's text carry them: a `roles` key is outside the §4 schema, the fallback
    words = {k: v.model_dump() for k, v in (builtin.roles or {}).items()}
    replay.write_text(json.dumps({"obligations": [o.model_dump() for o in builtin.obligations],
                                  "roles": words}))
    forged = decompose(req, ev, make_client(f"replay:{replay}"))
    assert forged.re_decompose
    assert forged.obligations == []
    assert forged.roles is None


def _create(tmp_path: Path, *later: str | Completion) -> Planner:
    first = Completion(text=json.dumps({"obligations": PLAN}), usage=Usage(),
                       finish_reason="stop", roles=WORDS)
    return Planner.create(REQUEST, repo=make_repo(tmp_path, use_git=False), evidence=Evidence(),
                          llm=ScriptedClient(first, *later, name="own"),
                          state_dir=tmp_path / "state", lint=False)  # the role facts alone


def test_the_plan_keeps_the_role_facts_and_explain_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from plan07.cli import main

    planner = _create(tmp_path, "unused")
    art = planner.artifact
    assert art.roles is not None
    assert {k: v.words for k, v in art.roles.items()} == WORDS
    assert rule(art.edges, "O2", "O3") == "preserve_before_recheck"
    plan_json = json.loads((tmp_path / "state" / "plan.json").read_text())
    assert plan_json["roles"]["O3"] == {"of": digest(obligations(PLAN)[2]),
                                        "words": ["old_default"]}
    capsys.readouterr()
    assert main(["explain", "O2", "O3", "--state", str(tmp_path / "state")]) == 0
    out = capsys.readouterr().out
    assert out.startswith('precedes("O2", "O3", "preserve_before_recheck") holds')
    assert 'mentions("O3", "old_default")  <- obligation O3 role fact' in out


def test_the_feedback_rewalk_reads_the_stored_role_facts(tmp_path: Path) -> None:
    planner = _create(tmp_path, "unused")
    # O1 falsified: O2 inherits its (no) dependencies, so O2 and O3 are re-walked
    revs = planner.feedback(Feedback(caused_by="O1", falsified_obligations=["O1"]))
    assert revs
    art = planner.artifact
    assert {n.id for n in art.nodes} == {"O2", "O3"}
    assert rule(art.edges, "O2", "O3") == "preserve_before_recheck"  # prose alone: "declared"
    assert art.roles is not None
    assert set(art.roles) == {"O2", "O3"}


@pytest.mark.parametrize(("reply", "expected"), [
    (PLAN[2], "preserve_before_recheck"),  # kept as it was: its stored facts hold
    ({**PLAN[2], "caused_by": "re-run it after the fix"}, "declared"),  # rewritten: its prose
])
def test_the_scoped_replan_rewalk_reads_the_stored_role_facts(
    tmp_path: Path, reply: dict[str, Any], expected: str,
) -> None:
    planner = _create(tmp_path, json.dumps({"obligations": [reply]}))
    for nid in ("O1", "O2"):
        view = planner.next()
        assert view is not None
        assert view.node_id == nid
        if nid == "O1":
            core = Path(planner.artifact.repo or "") / "pkg" / "core.py"
            core.write_text(core.read_text() + "# O1\n")
        assert planner.complete(nid).passed
    for _ in range(2):  # a local retry, then the same failure again: one scoped call
        assert planner.next() is not None
        assert not planner.complete("O3").passed
    art = planner.artifact
    assert art.audit[-1].event == "replanned"
    assert rule(art.edges, "O2", "O3") == expected
    assert art.roles is not None
    assert ("O3" in art.roles) == (expected != "declared")


def test_the_builtins_scoped_reply_keeps_the_stored_role_facts_valid() -> None:
    from plan07.decompose.call import decompose_scoped

    req, ev = _golden()
    client = make_client("builtin")
    dec = decompose(req, ev, client)
    sub = [o for o in dec.obligations if o.id in ("O3", "O4", "O5", "O7")]
    reply = decompose_scoped(req, ev, client, subgraph=sub, failure="boom", fresh_prefix="R")
    kept_ids = {o.id for o in reply.obligations} & {o.id for o in sub}
    assert kept_ids == {o.id for o in sub}
    # what came back through the scoped prompt reads as it did: the plan's facts still hold
    assert kept(dec.roles, reply.obligations) == {k: dec.roles[k] for k in sorted(kept_ids)}
    fresh = [o.id for o in reply.obligations if o.id.startswith("R")]
    assert fresh  # a rebind the evidence demands: facts with no words (its role is the evidence's)
    assert reply.roles is not None
    assert {k: v.words for k, v in reply.roles.items()} == {k: [] for k in fresh}
