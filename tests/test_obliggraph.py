"""obliggraph: obligations + evidence -> facts with sources -> derive_order (§3.2), caps, the
neighbourhood, the fact vocabulary of docs/rules.md, and `plan07 order`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plan07 import caps
from plan07.cli import main
from plan07.errors import InputError
from plan07.evidence import load_evidence
from plan07.model import Evidence, ImpactEdge, Obligation, Recon, ReconEdge, ReconNode
from plan07.order.derive import derive_order, roles
from plan07.order.inputs import prepare_facts
from plan07.order.load import load_obligations
from plan07.vocab import normalize_test

SPEC = Path(__file__).parent / "rules" / "session_timeout" / "spec_example"


def ob(i: str, verb: str = "modify", target: str = "pkg.x", **kw: object) -> Obligation:
    base = {"id": i, "target_entity": target, "obligation": verb, "caused_by": "c",
            "dependencies": [], "evidence": "", "status": "ready", "validation": "compile"}
    return Obligation.model_validate(base | kw)


@pytest.mark.parametrize("engine", ["pydatalog", "clingo"])
def test_spec_session_timeout_order(engine: str) -> None:
    """§3.1/§4: SessionConfig widen -> SessionManager.load rebind -> compile; preserve default ->
    old-default test re-runs -> custom timeout test passes."""
    res = derive_order(load_obligations(SPEC / "obligations.json"),
                       load_evidence(SPEC / "evidence.json"), engine=engine)
    edges = {(e.from_, e.to): e.rule for e in res.edges}
    assert edges[("O1", "O2")] == "widen_before_rebind"
    assert edges[("O2", "O3")] == "rebind_before_compile"
    assert edges[("O4", "O5")] == "preserve_before_recheck"
    assert edges[("O5", "O7")] == "recheck_before_rely"
    assert edges[("O6", "O7")] == "define_test_before_validate"
    assert res.violations == []
    # O2 declared O1 too: the ladder names the edge, declared does not appear twice
    assert [e.rule for e in res.edges if (e.from_, e.to) == ("O1", "O2")] == ["widen_before_rebind"]


def test_contradicting_declared_edge_is_flagged_and_not_followed() -> None:
    ev = Evidence(impact={"edges": [ImpactEdge(src="S", dst="D", relation="CalledBy",
                                               cause="sig_change", confidence=0.9)]})
    obs = [ob("O1", target="S", dependencies=["O2"]), ob("O2", target="D")]
    res = derive_order(obs, ev)
    assert [(e.from_, e.to, e.rule) for e in res.edges] == [("O1", "O2", "widen_before_rebind")]
    assert [(v.kind, v.nodes) for v in res.violations] == [("contradicts_ladder", ["O2", "O1"])]
    assert "not followed" in res.violations[0].detail


VIOLATIONS = [
    ([ob("O1", dependencies=["O7"])], "unknown_dependency", ["O1", "O7"]),
    ([ob("O1", caused_by="  ")], "ungrounded", ["O1"]),
]


@pytest.mark.parametrize(("obs", "kind", "nodes"), VIOLATIONS)
def test_violations(obs: list[Obligation], kind: str, nodes: list[str]) -> None:
    assert [(v.kind, v.nodes) for v in derive_order(obs, Evidence()).violations] == [(kind, nodes)]


def test_alternative_is_not_ungrounded() -> None:
    assert derive_order([ob("O1", caused_by="", status="alternative")], Evidence()).violations == []


def test_unplanned_consumer() -> None:
    ev = Evidence(impact={"edges": [ImpactEdge(src="S", dst="D", relation="CalledBy",
                                               cause="sig_change", confidence=0.9)]})
    res = derive_order([ob("O1", target="S")], ev)
    assert [(v.kind, v.nodes) for v in res.violations] == [("unplanned_consumer", ["O1", "D"])]


CAPS = [
    (lambda: [ob(f"O{i}") for i in range(caps.MAX_OBLIGATIONS + 1)], "MAX_OBLIGATIONS=64"),
    (lambda: [ob("O1").model_copy(update={"dependencies": [f"D{i}" for i in range(17)]})],
     "MAX_DEPENDENCIES=16"),
    (lambda: [ob("O1").model_copy(update={"evidence": "x" * 201})], "EVIDENCE_MAX_CHARS=200"),
    (lambda: [ob("O1"), ob("O1")], None),
]


@pytest.mark.parametrize(("make", "cap"), CAPS)
def test_caps_are_refused_with_the_cap_named(make, cap) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as exc:
        derive_order(make(), Evidence())
    assert exc.value.cap == cap
    if cap is None:
        assert "duplicate obligation id 'O1'" in str(exc.value)


def test_only_what_the_rules_can_use_is_loaded() -> None:
    chain = [ReconEdge(src=f"n{i}", dst=f"n{i + 1}", kind="calls") for i in range(50)]
    nodes = [ReconNode(id=f"n{i}", kind="function") for i in range(51)]
    nodes.append(ReconNode(id="tests.test_far.test_it", kind="test", file="tests/test_far.py"))
    ev = Evidence(recon=Recon(nodes=nodes, edges=chain))
    alone = prepare_facts([ob("O1", target="n0", validation="tests/test_far.py::test_it")], ev)
    assert not alone.facts.get("edge")  # n0 consumes n1, but n1 does not change: no rule's use
    fs = prepare_facts([ob("O1", target="n0", validation="tests/test_far.py::test_it"),
                        ob("O2", target="n1", caused_by="a breaking change")], ev)
    # n0 calls n1, which changes: a planned entity consuming something changed (rebind); n1 ->
    # n2 is used by no rule (n2 not planned), nor is the entity fact of a function no one plans
    # (a planned target's is: the plan lint's target_unknown reads it)
    assert fs.facts["edge"] == {("n0", "n1", "calls")}
    assert fs.facts.get("entity") == {("n0", "function"), ("n1", "function")}
    assert fs.facts["test_exists"] == {("tests/test_far.py::test_it",)}  # named tests: any distance
    assert fs.sources[("edge", ("n0", "n1", "calls"))] == ["evidence recon edge #0"]
    assert fs.sources[("targets", ("O1", "n0"))] == ["obligation O1 .target_entity"]


NORMALIZE = [
    ("tests/test_a.py::test_x", None, "tests/test_a.py::test_x"),
    ("./tests/test_a.py::TestK::test_x", None, "tests/test_a.py::TestK::test_x"),
    ("tests.test_a.test_x", None, "tests/test_a.py::test_x"),
    ("tests.test_a.TestK.test_x", None, "tests/test_a.py::TestK::test_x"),
    ("suite.test_a.test_x", "suite/test_a.py", "suite/test_a.py::test_x"),
    ("pkg.auth.SessionConfig", None, None),
    ("tests.test_a", None, None),
    ("pkg/auth.py::helper", None, "pkg/auth.py::helper"),
    # src/ layout: recon drops the source root from the dotted id, keeps it in the file
    ("pkg.tests.test_x.test_a", "src/pkg/tests/test_x.py", "src/pkg/tests/test_x.py::test_a"),
    ("pkg.tests.test_x.TestK.test_a", "src/pkg/tests/test_x.py",
     "src/pkg/tests/test_x.py::TestK::test_a"),
    ("pkg.tests.test_x.test_a", "./src/pkg/tests/test_x.py", "src/pkg/tests/test_x.py::test_a"),
]


@pytest.mark.parametrize(("ident", "file", "want"), NORMALIZE)
def test_normalize_test(ident: str, file: str | None, want: str | None) -> None:
    assert normalize_test(ident, file) == want


def test_vocabulary_facts() -> None:
    o = ob("O1", target="tests.test_s.test_custom", caused_by="a custom timeout is honoured",
           validation="tests/test_s.py::test_custom", evidence="keep the old default")
    f = prepare_facts([o], Evidence()).facts
    assert f["defines_test"] == {("O1", "tests/test_s.py::test_custom")}
    assert f["names_test"] == {("O1", "tests/test_s.py::test_custom")}
    assert f["check_kind"] == {("O1", "pytest_node")}
    assert f["mentions"] == {("O1", "default"), ("O1", "old_default"), ("O1", "new_default")}
    module_writer = ob("O2", target="tests/test_s.py", validation="tests/test_s.py::test_new")
    assert prepare_facts([module_writer], Evidence()).facts["defines_test"] == {
        ("O2", "tests/test_s.py::test_new")}


SRC_LAYOUT = Evidence(recon=Recon(nodes=[
    ReconNode(id="pkg.tests.test_x", kind="module", file="src/pkg/tests/test_x.py"),
    ReconNode(id="pkg.tests.test_x.test_a", kind="test", file="src/pkg/tests/test_x.py"),
]))


@pytest.mark.parametrize("engine", ["pydatalog", "clingo"])
def test_src_layout_tests_keep_the_source_root_in_their_path(engine: str) -> None:
    test, new = "src/pkg/tests/test_x.py::test_a", "src/pkg/tests/test_x.py::test_new"
    define = ob("O1", target="pkg.tests.test_x.test_a")  # a recon test node, by its dotted id
    module = ob("O2", target="pkg.tests.test_x", validation=new)  # adds a test to the module
    check = ob("O3", verb="validate", target="pkg.tests.test_x.test_a", validation=test)
    check_new = ob("O4", verb="validate", target="pkg.tests.test_x", validation=new)
    rewrite = ob("O5", target="src/pkg/tests/test_x.py", validation=test)
    f = prepare_facts([define, module, check, check_new], SRC_LAYOUT).facts
    assert f["test_exists"] == {(test,)}
    assert f["defines_test"] == {("O1", test), ("O2", new)}
    assert f["names_test"] == {("O2", new), ("O3", test), ("O4", new)}

    def rules(*obs: Obligation) -> dict[tuple[str, str], str]:
        return {(e.from_, e.to): e.rule for e in derive_order(obs, SRC_LAYOUT, engine=engine).edges}

    assert rules(module, check_new) == {("O2", "O4"): "define_test_before_validate"}
    assert rules(rewrite, check) == {}  # test_a already exists: nothing to define first


def test_roles_of_the_spec_example() -> None:
    obs = load_obligations(SPEC / "obligations.json")
    r = roles(obs, load_evidence(SPEC / "evidence.json"))
    assert r == {"O1": ["widen"], "O2": ["rebind"], "O3": ["compile"], "O4": ["preserve_default"],
                 "O5": ["recheck_default"], "O6": ["define_test", "rely_default"],
                 "O7": ["rely_default"]}


def test_cli_order_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["order", "--obligations", str(SPEC / "obligations.json"), "--evidence",
                 str(SPEC / "evidence.json"), "--engine", "clingo", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert {"from": "O1", "to": "O2", "rule": "widen_before_rebind"} in out["edges"]
    assert out["violations"] == []


def test_cli_order_bare_list_and_bad_input(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((SPEC / "obligations.json").read_text())["obligations"]
    (tmp_path / "o.json").write_text(json.dumps(data))
    assert main(["order", "--obligations", str(tmp_path / "o.json")]) == 0
    assert "edge(s)" in capsys.readouterr().out
    data[0]["obligation"] = "rewrite"
    (tmp_path / "bad.json").write_text(json.dumps(data))
    assert main(["order", "--obligations", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert "obligations[0].obligation" in err
    assert main(["order", "--obligations", str(tmp_path / "o.json"), "--engine", "x"]) == 2
    assert json.dumps(data)  # nothing written anywhere: only stdout/stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "o.json"]


FILE_CAPS = [
    ("dependencies", [f"D{i}" for i in range(17)], "MAX_DEPENDENCIES=16"),
    ("evidence", "x" * 201, "EVIDENCE_MAX_CHARS=200"),
]


@pytest.mark.parametrize(("key", "value", "cap"), FILE_CAPS)
def test_obligation_file_caps_name_the_cap(tmp_path: Path, key: str, value: object, cap: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((SPEC / "obligations.json").read_text())
    data["obligations"][2][key] = value
    (tmp_path / "o.json").write_text(json.dumps(data))
    assert main(["order", "--obligations", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert f"obligations[2].{key}" in err
    assert f"(cap {cap})" in err
    big = {"obligations": data["obligations"] * 10}
    (tmp_path / "big.json").write_text(json.dumps(big))
    assert main(["order", "--obligations", str(tmp_path / "big.json")]) == 2
    assert "(cap MAX_OBLIGATIONS=64)" in capsys.readouterr().err


def test_cli_order_reports_a_declared_cycle_with_its_members(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    obs = [ob("O1", dependencies=["O2"], target="pkg.a"), ob("O2", dependencies=["O1"],
                                                            target="pkg.b"), ob("O3")]
    (tmp_path / "o.json").write_text(json.dumps([o.model_dump() for o in obs]))
    assert main(["order", "--obligations", str(tmp_path / "o.json")]) == 0
    out = capsys.readouterr().out
    assert "1 cycle(s)" in out
    assert "cycle O1 O2: they require each other; the scheduler collapses them into one step" in out
    assert main(["order", "--obligations", str(tmp_path / "o.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cycles"] == [["O1", "O2"]]
    assert derive_order([ob("O1"), ob("O2", dependencies=["O1"])], Evidence()).cycles == []


def _consumer_pair(callee_text: str) -> tuple[list[Obligation], Evidence]:
    """A caller (planned first in the list) and the callee it calls, linked by recon only."""
    ev = Evidence(recon=Recon(
        nodes=[ReconNode(id="pkg.core", kind="module"),
               ReconNode(id="pkg.core.get", kind="function"),
               ReconNode(id="pkg.cli", kind="module"),
               ReconNode(id="pkg.cli.show", kind="function")],
        edges=[ReconEdge(src="pkg.core", dst="pkg.core.get", kind="defines"),
               ReconEdge(src="pkg.cli", dst="pkg.cli.show", kind="defines"),
               ReconEdge(src="pkg.cli.show", dst="pkg.core.get", kind="calls")]))
    return [ob("O1", target="pkg.cli", caused_by="pass the new keyword"),
            ob("O2", target="pkg.core.get", caused_by=callee_text)], ev


@pytest.mark.parametrize("engine", ["pydatalog", "clingo"])
def test_compatible_callee_precedes_its_planned_caller_module(engine: str) -> None:
    obs, ev = _consumer_pair("compatible change: a new optional parameter `limit` with a default")
    res = derive_order(obs, ev, engine=engine)
    assert [(e.from_, e.to, e.rule) for e in res.edges] == [("O2", "O1", "widen_before_rebind")]
    assert res.violations == []


@pytest.mark.parametrize("engine", ["pydatalog", "clingo"])
def test_breaking_callee_and_its_caller_are_flagged_atomic(engine: str) -> None:
    obs, ev = _consumer_pair("breaking change: remove the parameter `key`")
    res = derive_order(obs, ev, engine=engine)
    # the definition before its consumer (the prior); the atomic step makes the order moot
    assert [(e.from_, e.to, e.rule) for e in res.edges] == [("O2", "O1", "definition_before_use")]
    assert [(v.kind, v.nodes) for v in res.violations] == [("breaking_change", ["O2", "O1"])]
