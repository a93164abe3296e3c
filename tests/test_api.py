"""The library API (plan07.api.Planner) and the PLAN flag router, on a small real repo with the
model scripted by a replay file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plan07 import InputError, ModelOutputError, Planner, PlanStateError, enabled, route, state
from plan07.model import Evidence

REQUEST = """Make f configurable.

## Acceptance criteria

- `tests/test_core.py::test_f` passes
"""


def ob(i: str, target: str, verb: str, deps: list[str], validation: str,
       status: str = "ready") -> dict[str, object]:
    return {"id": i, "target_entity": target, "obligation": verb, "caused_by": "requirement",
            "dependencies": deps, "evidence": "03 recon", "status": status,
            "validation": validation}


OBLIGATIONS = [
    ob("O1", "pkg.core.f", "modify", [], "compile"),
    ob("O2", "pkg.core.g", "modify", ["O1"], "import:pkg.core"),
    ob("O3", "pkg.other", "modify", [], "compile"),
    ob("O4", "tests/test_core.py::test_f", "validate", ["O2"], "tests/test_core.py::test_f"),
    ob("O5", "pkg.core.h", "modify", [], "import:pkg.core", status="alternative"),
]


def make_repo(root: Path, *, broken_test: bool = False) -> Path:
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "core.py").write_text("def f(x):\n    return x\n")
    body = "assert f(1) == 2" if broken_test else "assert f(1) == 1"
    (repo / "tests" / "test_core.py").write_text(
        f"from pkg.core import f\n\n\ndef test_f():\n    {body}\n")
    return repo


def make_plan(tmp_path: Path, obligations: list[dict[str, object]] | None = None,
              **kw: bool) -> Planner:
    replay = tmp_path / "completion.json"
    replay.write_text(json.dumps({"obligations": obligations or OBLIGATIONS}))
    return Planner.create(REQUEST, repo=make_repo(tmp_path, **kw), evidence=Evidence(),
                          llm=f"replay:{replay}", state_dir=tmp_path / "state")



@pytest.fixture(autouse=True)
def _fast_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The small repos' checks need no pytest plugin; not loading the venv's is ~5x cheaper."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

@pytest.mark.parametrize(
    ("env", "expected"),
    [({}, "current"), ({"PLAN": ""}, "current"), ({"PLAN": "current"}, "current"),
     ({"PLAN": "plan07"}, "plan07"), ({"PLAN": " plan07 "}, "plan07")],
)
def test_route_follows_the_plan_flag_default_current(env: dict[str, str], expected: str) -> None:
    assert route("any task", env=env) == expected
    assert enabled(env) is (expected == "plan07")


def test_route_refuses_an_unknown_flag_value() -> None:
    with pytest.raises(InputError, match="PLAN='on'; use PLAN=plan07 or PLAN=current"):
        route(env={"PLAN": "on"})


def test_create_persists_the_37_artifact_with_history_and_usage(tmp_path: Path) -> None:
    planner = make_plan(tmp_path)
    art = planner.artifact
    data = json.loads((tmp_path / "state" / "plan.json").read_text())
    assert list(data)[:7] == ["plan_id", "requirement", "nodes", "checkpoints", "branch_scores",
                              "revision_history", "audit"]
    assert [n.id for n in art.nodes] == ["O1", "O2", "O3", "O4", "O5"]
    assert art.schedule.alternative == ["O5"]
    assert "O5" in art.branch_scores
    assert [r.rev for r in art.revision_history] == [1]
    assert [e["event"] for e in planner.events] == ["planned", "checkpoint"]
    assert len(planner.usage) == 1  # one model call
    assert {(e.from_, e.to) for e in art.edges} >= {("O1", "O2"), ("O2", "O4")}
    assert Planner.open(tmp_path / "state").artifact == art


def test_next_then_complete_in_a_loop_yields_the_ladder_order(tmp_path: Path) -> None:
    planner = make_plan(tmp_path)
    order = planner.artifact.schedule.order
    seen = []
    while (view := planner.next()) is not None:
        assert planner.next() == view  # the handed-out node stays handed out until complete
        seen.append(view.node_id)
        assert planner.complete(view.node_id).passed
    assert seen == order
    pos = {n: i for i, n in enumerate(seen)}
    assert all(pos[e.from_] < pos[e.to] for e in planner.artifact.edges if e.to in pos
               and e.from_ in pos)
    art = planner.artifact
    assert all(n.state == "complete" for n in art.nodes if n.id != "O5")
    assert [e["event"] for e in planner.events].count("checkpoint") == len(art.checkpoints)
    passed = [e for e in planner.events if e["event"] == "passed"]
    assert [e["node"] for e in passed] == order
    assert {e["verdict"] for e in passed} == {"pass"}


def test_edits_and_test_calls_are_bounded_and_audited(tmp_path: Path) -> None:
    planner = make_plan(tmp_path)
    with pytest.raises(PlanStateError, match="was not handed out"):
        planner.report_edit("O1", "pkg/core.py")
    view = planner.next()
    assert view is not None
    for i in range(5):
        planner.report_edit(view.node_id, f"pkg/m{i}.py")
    planner.report_edit(view.node_id, tmp_path / "repo" / "pkg" / "m0.py")  # same file
    with pytest.raises(PlanStateError, match="at most 5 files"):
        planner.report_edit(view.node_id, "pkg/m5.py")
    for _ in range(10):
        planner.report_test_call(view.node_id)
    with pytest.raises(PlanStateError, match="at most 10 test calls"):
        planner.report_test_call(view.node_id)
    edits = [r for r in state.full_audit(planner.state_dir, planner.artifact) if r.accepted_edit]
    assert [r.accepted_edit for r in edits] == [f"pkg/m{i}.py" for i in range(5)] + ["pkg/m0.py"]
    assert {r.obligation for r in edits} == {view.node_id}
    assert planner.artifact.bounds[view.node_id].test_calls == 10


def test_the_gate_check_counts_against_max_test_calls(tmp_path: Path) -> None:
    # §3.4 bounds: 10 test calls per obligation, the validation gate's included (issue 7).
    planner = make_plan(tmp_path, broken_test=True)
    for node in ("O1", "O2", "O3"):
        assert planner.complete(node).passed
    assert planner.artifact.bounds == {}  # a passed node leaves the bounds
    view = planner.next()
    assert view is not None
    assert view.node_id == "O4"
    for _ in range(9):
        planner.report_test_call("O4")
    verdict = planner.complete("O4")  # call 10, made by the gate: admitted, and it fails
    assert (verdict.passed, verdict.test_calls) == (False, 1)
    assert planner.artifact.bounds["O4"].test_calls == 10
    assert planner.next() == view  # the scoped replan kept the plan: O4 is offered again
    with pytest.raises(PlanStateError, match="at most 10 test calls"):
        planner.report_test_call("O4")  # call 11, reported by the harness
    events = len(planner.events)
    with pytest.raises(PlanStateError, match="used 10 of its 10 test calls"):
        planner.complete("O4")  # call 11, by the gate: refused before anything runs
    assert len(planner.events) == events
    assert planner.artifact.bounds["O4"].test_calls == 10


def test_the_gate_reserves_a_call_per_check_and_returns_those_not_run(tmp_path: Path) -> None:
    obs = [ob("O1", "pkg.core.f", "modify", ["O2"], "compile"),
           ob("O2", "pkg.core.g", "modify", ["O1"], "import:pkg.core")]
    planner = make_plan(tmp_path, obs)
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1_cycle"  # two checks: two calls
    for _ in range(8):
        planner.report_test_call("O1_cycle")
    (tmp_path / "repo" / "pkg" / "broken.py").write_text("def oops(:\n")
    verdict = planner.complete("O1_cycle")  # the build check fails first: no call is made
    assert (verdict.passed, verdict.test_calls) == (False, 0)
    assert planner.artifact.bounds["O1_cycle"].test_calls == 8
    planner.next()
    planner.report_test_call("O1_cycle")
    with pytest.raises(PlanStateError, match="used 9 of its 10 test calls.*need 2 more"):
        planner.complete("O1_cycle")


def test_complete_refuses_a_blocked_or_unknown_node(tmp_path: Path) -> None:
    planner = make_plan(tmp_path)
    with pytest.raises(PlanStateError, match="'O2' is blocked: it waits on O1"):
        planner.complete("O2")
    with pytest.raises(PlanStateError, match="no obligation 'O9'"):
        planner.complete("O9")
    with pytest.raises(PlanStateError, match="is an alternative"):
        planner.complete("O5")


def test_a_failed_validation_is_a_verdict_recorded_in_the_audit(tmp_path: Path) -> None:
    planner = make_plan(tmp_path, broken_test=True)
    for node in ("O1", "O2"):
        assert planner.complete(node).passed
    verdict = planner.complete("O4")
    assert not verdict.passed
    assert verdict.kind == "pytest_node"
    fails = [e for e in planner.events if e["event"] == "failed"]
    assert [(e["node"], e["verdict"]) for e in fails] == [("O4", "fail")]


def test_a_collapsed_cycle_is_validated_as_one_unit(tmp_path: Path) -> None:
    obs = [ob("O1", "pkg.core.f", "modify", ["O2"], "compile"),
           ob("O2", "pkg.core.g", "modify", ["O1"], "import:pkg.core")]
    planner = make_plan(tmp_path, obs)
    art = planner.artifact
    assert [(n.id, n.members) for n in art.nodes] == [("O1_cycle", ["O1", "O2"])]
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1_cycle"
    verdict = planner.complete("O1_cycle")
    assert verdict.passed
    assert verdict.check == "compile && import:pkg.core"
    assert planner.next() is None


def test_open_without_a_plan_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no plan here; run `plan07 plan"):
        Planner.open(tmp_path)


def test_nothing_is_written_when_the_decomposition_falls_back(tmp_path: Path) -> None:
    replay = tmp_path / "bad.txt"
    replay.write_text("not json at all")
    with pytest.raises(ModelOutputError, match="no obligations"):
        Planner.create(REQUEST, repo=make_repo(tmp_path), evidence=Evidence(),
                       llm=f"replay:{replay}", state_dir=tmp_path / "state")
    assert not (tmp_path / "state" / "plan.json").exists()


COMPLETE = """
import sys
from plan07 import Planner
print(Planner.open(sys.argv[1]).complete(sys.argv[2]).passed)
"""


def test_two_concurrent_completes_both_land_in_the_audit(tmp_path: Path) -> None:
    planner = make_plan(tmp_path)
    assert planner.artifact.schedule.ready == ["O1", "O3"]
    procs = [subprocess.Popen([sys.executable, "-c", COMPLETE, str(planner.state_dir), node],
                              stdout=subprocess.PIPE, text=True) for node in ("O1", "O3")]
    outs = [p.communicate()[0].strip() for p in procs]
    assert outs == ["True", "True"]
    passed = sorted(e["node"] for e in planner.events if e["event"] == "passed")
    assert passed == ["O1", "O3"]
    assert {n.id for n in planner.artifact.nodes if n.state == "complete"} == {"O1", "O3"}


def test_a_plan_too_big_for_32kb_is_refused_and_the_old_plan_stays_whole(tmp_path: Path) -> None:
    planner = make_plan(tmp_path)
    view = planner.next()
    assert view is not None
    for _ in range(70):  # past the 64-row audit cap: the oldest rows spill to the sidecar
        planner.report_edit(view.node_id, "pkg/core.py")
    before = planner.events
    assert (planner.state_dir / "audit.overflow.jsonl").exists()
    huge = [{**ob(f"O{i}", f"pkg.m.f{i}", "modify", [], "compile"), "caused_by": "c" * 500,
             "validation": "compile " + "v" * 480} for i in range(1, 65)]
    replay = tmp_path / "huge.json"
    replay.write_text(json.dumps({"obligations": huge}))
    with pytest.raises(InputError, match="ARTIFACT_MAX_BYTES 32768"):
        Planner.create(REQUEST, repo=tmp_path / "repo", evidence=Evidence(),
                       llm=f"replay:{replay}", state_dir=planner.state_dir)
    assert Planner.open(planner.state_dir).events == before
