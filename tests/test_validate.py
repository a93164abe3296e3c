"""§3.5 validation gate: parsing model-written validation strings, running them without a shell,
the affected subgraph, and the termination rule (spec §5 phase 6)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from plan07.errors import InputError
from plan07.gate.checks import run_check
from plan07.gate.grammar import check_env, classify, parse_check
from plan07.model import PlanArtifact, PlanNode, Requirement
from plan07.plan.criteria import can_terminate, criteria_status, termination_blockers
from plan07.plan.replan import affected_subgraph

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


def node(i: str, validation: str = "compile", deps: list[str] | None = None,
         status: str = "ready", state: str = "pending") -> PlanNode:
    return PlanNode(id=i, target_entity=f"pkg.{i}", obligation="modify", caused_by="req",
                    dependencies=deps or [], evidence="", status=status,  # type: ignore[arg-type]
                    validation=validation, state=state)  # type: ignore[arg-type]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / "pkg").mkdir(parents=True)
    (r / "tests").mkdir()
    (r / "pkg" / "__init__.py").write_text("")
    (r / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (r / "tests" / "test_mod.py").write_text(
        "from pkg.mod import f\n\ndef test_ok():\n    assert f() == 1\n\n"
        "def test_bad():\n    assert f() == 2\n"
    )
    return r


@pytest.mark.parametrize(("validation", "kind"), [
    ("compile", "compile"),
    ("  compile ", "compile"),
    ("import:pkg.mod", "import"),
    ("pytest:tests", "pytest_path"),
    ("pytest:tests/test_mod.py", "pytest_path"),
    ("tests/test_mod.py::test_ok", "pytest_node"),
    ("tests/test_mod.py::TestX::test_y", "pytest_node"),
    ("tests/test_mod.py::test_p[1-2]", "pytest_node"),
    ("", "unverifiable"),
    ("the timeout is honoured", "unverifiable"),
    ("tests/test_mod.py::test_ok; rm -rf /", "unverifiable"),
    ("tests/test_mod.py::test_ok && touch x", "unverifiable"),
    ("$(touch x)", "unverifiable"),
    ("`touch x`", "unverifiable"),
    ("import:os; touch x", "unverifiable"),
    ("import:os.$(x)", "unverifiable"),
    ("pytest:tests | sh", "unverifiable"),
    ("pytest:$(touch x)", "unverifiable"),
    ("tests/test_mod.py::test_ok\ntouch x", "unverifiable"),
    ("tests/test_mod.py", "unverifiable"),
    ("compile; touch x", "unverifiable"),
])
def test_classify_table(validation: str, kind: str) -> None:
    assert classify(validation) == kind


@pytest.mark.parametrize("validation", [
    "../../etc/passwd.py::test_x",
    "pytest:../../etc",
    "pytest:tests/../../..",
    "pytest:/etc",
    "/etc/x.py::test_y",
    "pytest:--help",
    "pytest:tests/-k",
])
def test_escaping_or_option_paths_are_refused(repo: Path, validation: str) -> None:
    with pytest.raises(InputError, match="refused"):
        parse_check(validation, repo)


def test_symlink_out_of_repo_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_evil.py").write_text("def test_x():\n    pass\n")
    (repo / "link").symlink_to(outside)
    with pytest.raises(InputError, match="leads out of the repo"):
        parse_check("link/test_evil.py::test_x", repo)
    v = run_check(node("O1", "pytest:link"), repo)
    assert (v.passed, v.kind, v.test_calls) == (False, "unverifiable", 0)


def test_parse_check_argv_is_a_list_without_shell(repo: Path) -> None:
    kind, argv = parse_check("tests/test_mod.py::test_ok", repo)
    assert kind == "pytest_node"
    assert argv[0] == sys.executable
    assert argv[1:] == ["-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/test_mod.py::test_ok"]
    assert parse_check("import:pkg.mod", repo)[1][-1] == "pkg.mod"
    assert parse_check("nonsense", repo) == ("unverifiable", [])


@pytest.mark.parametrize("payload", [
    "tests/test_mod.py::test_ok; touch {m}",
    "tests/test_mod.py::test_ok && touch {m}",
    "$(touch {m})",
    "`touch {m}`",
    "import:os; touch {m}",
    "pytest:tests; touch {m}",
    "pytest:$(touch {m})",
    "compile `touch {m}`",
    "../../etc/passwd; touch {m}",
])
def test_shell_metacharacters_are_never_executed(repo: Path, tmp_path: Path, payload: str) -> None:
    marker = tmp_path / "MARKER"
    v = run_check(node("O1", payload.format(m=marker)), repo)
    assert not marker.exists(), "the validation string was executed by a shell"
    assert (v.passed, v.kind, v.test_calls) == (False, "unverifiable", 0)


@pytest.mark.parametrize(("validation", "passed", "kind"), [
    ("tests/test_mod.py::test_ok", True, "pytest_node"),
    ("tests/test_mod.py::test_bad", False, "pytest_node"),
    ("tests/test_mod.py::test_missing", False, "pytest_node"),
    ("pytest:tests/test_mod.py", False, "pytest_path"),
    ("compile", True, "compile"),
    ("import:pkg.mod", True, "import"),
    ("import:pkg.nope", False, "import"),
])
def test_run_check_outcomes(repo: Path, validation: str, passed: bool, kind: str) -> None:
    v = run_check(node("O1", validation), repo)
    assert (v.passed, v.kind, v.test_calls) == (passed, kind, 1), v.output_tail
    assert v.check == validation
    assert not list(repo.rglob("__pycache__")), "the check wrote bytecode into the repo"


def test_repo_wide_build_check_fails_a_passing_test(repo: Path) -> None:
    # The node's own test passes, but another file no longer compiles: not temporally consistent.
    (repo / "pkg" / "broken.py").write_text("def g(:\n")
    v = run_check(node("O1", "tests/test_mod.py::test_ok"), repo)
    assert (v.passed, v.test_calls) == (False, 0)
    assert "build check failed" in v.output_tail
    assert "broken.py" in v.output_tail


def test_timeout_kills_the_check(repo: Path) -> None:
    (repo / "tests" / "test_slow.py").write_text(
        "import time\n\ndef test_sleep():\n    time.sleep(30)\n")
    v = run_check(node("O1", "tests/test_slow.py::test_sleep"), repo, timeout=2)
    assert not v.passed
    assert "timed out" in v.output_tail


def test_api_keys_are_not_passed_to_the_check(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAN07_LLM_API_KEY", "sk-secret")
    monkeypatch.setenv("OTHER_API_KEY", "sk-other")
    env = check_env()
    assert "PLAN07_LLM_API_KEY" not in env
    assert "OTHER_API_KEY" not in env
    (repo / "tests" / "test_env.py").write_text(
        "import os\n\ndef test_no_key():\n"
        "    assert 'PLAN07_LLM_API_KEY' not in os.environ\n"
        "    assert 'OTHER_API_KEY' not in os.environ\n")
    assert os.environ["PLAN07_LLM_API_KEY"] == "sk-secret"
    assert run_check(node("O1", "tests/test_env.py::test_no_key"), repo).passed


# --- affected subgraph (pure) -----------------------------------------------------------------

#  O1 -> O2 -> O4      O1 -> O3 (sibling of O2)      O5 -> O4 (upstream of O4 only)
DAG_NODES = [node("O1"), node("O2", deps=["O1"]), node("O3", deps=["O1"]),
             node("O4", deps=["O2", "O5"]), node("O5")]
DAG_EDGES = [("O1", "O2"), ("O1", "O3"), ("O2", "O4"), ("O5", "O4")]


@pytest.mark.parametrize(("failed", "affected"), [
    ("O1", ["O1", "O2", "O3", "O4"]),
    ("O2", ["O2", "O4"]),          # sibling O3 and upstream O1, O5 untouched
    ("O3", ["O3"]),
    ("O4", ["O4"]),
    ("O5", ["O4", "O5"]),
])
def test_affected_subgraph_table(failed: str, affected: list[str]) -> None:
    assert affected_subgraph(DAG_NODES, DAG_EDGES, failed) == affected


def test_affected_subgraph_follows_derived_edges_and_survives_cycles() -> None:
    nodes = [node("A"), node("B"), node("C")]
    assert affected_subgraph(nodes, [("A", "B"), ("B", "C"), ("C", "B")], "B") == ["B", "C"]
    with pytest.raises(InputError, match="no node 'Z'"):
        affected_subgraph(nodes, [], "Z")


# --- termination (pure) ----------------------------------------------------------------------

def artifact(nodes: list[PlanNode], *, confirm: bool = False) -> PlanArtifact:
    req = Requirement(goal="g", acceptance_criteria=["c"], needs_confirmation=confirm)
    return PlanArtifact(plan_id="p", requirement=req, nodes=nodes, checkpoints=[],
                        branch_scores={}, revision_history=[], audit=[])


@pytest.mark.parametrize(("nodes", "confirm", "ok", "why"), [
    ([node("O1", state="complete")], False, True, ""),
    ([node("O1", state="complete"), node("O2", "nonsense", status="alternative")], False, True, ""),
    ([node("O1", "the timeout works", state="complete")], False, False, "unverifiable"),
    ([node("O1", state="complete")], True, False, "needs_confirmation"),
    ([node("O1", state="complete"), node("O2")], False, False, "O2: not complete"),
])
def test_termination_rule(nodes: list[PlanNode], confirm: bool, ok: bool, why: str) -> None:
    art = artifact(nodes, confirm=confirm)
    assert can_terminate(art) is ok
    assert why in " ".join(termination_blockers(art))


T = "tests/t.py::test_a"


@pytest.mark.parametrize(("criterion", "derived", "validation", "confirmed", "ok", "why"), [
    # a criterion naming a test: settled only by a complete node's validation that runs it
    (T, False, T, [], True, ""),
    (f"{T} passes", False, "tests/t.py::test_a[1]", [], False, "no complete node's validation"),
    (T, False, "compile", [], False, "names tests/t.py::test_a"),
    (T, False, "pytest:tests", [], True, ""),
    (T, False, "pytest:tests/t.py", [], True, ""),
    (T, False, "pytest:tests/u.py", [], False, "plan07 confirm 1"),
    ("tests/t.py::C::test_a", False, "tests/t.py::C", [], True, ""),
    (T, False, "compile", [1], True, ""),  # the user checked it and said so
    # a command: a pytest run is covered like its paths; anything else only by confirmation
    ("`pytest tests/t.py` succeeds", False, "pytest:tests/t.py", [], True, ""),
    ("`python -m pytest -q` succeeds", False, "pytest:.", [], True, ""),
    ("`pytest tests/t.py` succeeds", False, T, [], False, "names tests/t.py"),
    ("`pytest -k slow` succeeds", False, "pytest:.", [], False, "command plan07 never runs"),
    ("`make check` succeeds", False, "compile", [], False, "command plan07 never runs"),
    ("`make check` succeeds", False, "compile", [1], True, ""),
    # derived (§3.1 step 2): never terminal until confirmed; named prose: terminal
    ("f is configurable", True, "compile", [], False, "needs_confirmation"),
    ("f is configurable", True, "compile", [1], True, ""),
    ("f is configurable", False, "compile", [], True, ""),
])
def test_acceptance_criteria_coverage_rule(criterion: str, derived: bool, validation: str,
                                           confirmed: list[int], ok: bool, why: str) -> None:
    req = Requirement(goal="g", acceptance_criteria=[criterion], needs_confirmation=derived)
    art = PlanArtifact(plan_id="p", requirement=req, checkpoints=[], branch_scores={},
                       nodes=[node("O1", validation, state="complete")], revision_history=[],
                       audit=[], confirmed_criteria=confirmed or None)
    assert can_terminate(art) is ok, termination_blockers(art)
    assert why in " ".join(termination_blockers(art))


def test_criteria_status_names_the_covering_node_and_what_confirm_all_takes() -> None:
    req = Requirement(goal="g", acceptance_criteria=[T, "`make check` succeeds", "prose"])
    art = PlanArtifact(plan_id="p", requirement=req, checkpoints=[], branch_scores={},
                       nodes=[node("O1", T, state="complete"), node("O2", T)],
                       revision_history=[], audit=[])
    got = [(c.kind, c.covered_by, c.settled, c.confirmable) for c in criteria_status(art)]
    assert got == [("check", ("O1",), True, False), ("command", (), False, True),
                   ("named", (), True, False)]


def test_build_check_sees_an_edit_that_keeps_mtime_and_size(repo: Path) -> None:
    # A bytecode cache keyed on mtime would miss this edit (same second, same size): the build
    # check must compile afresh every time.
    mod = repo / "pkg" / "mod.py"
    assert run_check(node("O1", "compile"), repo).passed
    st = mod.stat()
    broken = "def f((:\n    return 1\n"
    assert len(broken) == st.st_size
    mod.write_text(broken)
    os.utime(mod, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not run_check(node("O1", "compile"), repo).passed
