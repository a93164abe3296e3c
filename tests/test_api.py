"""The library API (plan07.api.Planner) and the PLAN flag router, on a small real repo with the
model scripted by a replay file."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plan07 import InputError, ModelOutputError, Planner, PlanStateError, caps, enabled, route
from plan07.decompose.scripted import ScriptedClient
from plan07.model import Evidence
from plan07.plan import transitions
from plan07.store import state

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

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
    ob("O6", "pkg", "validate", ["O3", "O4"], "regression"),  # the plan ends with its run
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


def edit(planner: Planner, nid: str) -> None:
    """The agent's part of a modify step: a real change to the repo's file (a plan whose
    modifies change nothing never terminates)."""
    core = Path(planner.artifact.repo or "") / "pkg" / "core.py"
    core.write_text(core.read_text() + f"# {nid}\n")


def drive(planner: Planner, *ids: str) -> None:
    """Hand out and pass `ids` in turn (each must be the node `next` hands out); a modify node
    gets an edit first."""
    for nid in ids:
        view = planner.next()
        assert view is not None
        assert view.node_id == nid
        if view.obligation == "modify":
            edit(planner, nid)
        assert planner.complete(nid).passed


def make_plan(tmp_path: Path, obligations: list[dict[str, object]] | None = None,
              **kw: bool) -> Planner:
    replay = tmp_path / "completion.json"
    replay.write_text(json.dumps({"obligations": obligations or OBLIGATIONS}))
    return Planner.create(REQUEST, repo=make_repo(tmp_path, **kw), evidence=Evidence(),
                          llm=f"replay:{replay}", state_dir=tmp_path / "state")


@pytest.fixture(scope="module")
def _planned_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("planned")
    (root / "work").mkdir()
    make_plan(root / "work")
    shutil.copytree(root / "work", root / "template", symlinks=True)
    return root


@pytest.fixture
def planner(_planned_once: Path) -> Planner:
    """`make_plan(tmp_path)`'s plan, made once per module (Planner.create: the decomposition, the
    order, the CP0 baseline run) and restored whole (repo with its git refs, state dir) before
    each test that takes it, at the path it was made at: plan.json and the checkpoint records
    name the repo by its absolute path. A Planner holds no state of its own (it reads the state
    dir), so it is the Planner the create returned."""
    work = _planned_once / "work"
    shutil.rmtree(work)
    shutil.copytree(_planned_once / "template", work, symlinks=True)
    return Planner(work / "state")


@pytest.fixture(scope="module")
def _broken_driven_once() -> dict[int, tuple[Path, Any]]:
    return {}  # max_retries -> (its folder, the create's model call)


@pytest.fixture
def broken_driven(_broken_driven_once: dict[int, tuple[Path, Any]],
                  tmp_path_factory: pytest.TempPathFactory) -> Any:
    """`broken_driven(client, max_retries)`: the plan of OBLIGATIONS over a repo whose test fails
    (`make_repo(broken_test=True)`), created with a scripted client and `max_retries`, and
    driven through O1, O2 and O3 (each passed), so O4's failing check is next. Made once per
    module and bound (Planner.create: the decomposition, the order, the CP0 baseline run; three
    checks), then restored whole (repo with its git refs, state dir) at the path it was made at
    before each test that takes it. `client` (a ScriptedClient whose first reply is OBLIGATIONS)
    gets the create's call in its `calls`, as if it had made it."""

    def restore(client: ScriptedClient, max_retries: int = caps.MAX_RETRIES_PER_NODE
                ) -> Planner:
        if max_retries not in _broken_driven_once:
            root = tmp_path_factory.mktemp(f"broken-{max_retries}")
            made = Scripted(OBLIGATIONS, "unused: the template makes no scoped call")
            planner = Planner.create(REQUEST, repo=make_repo(root / "work", broken_test=True),
                                     evidence=Evidence(), llm=made,
                                     state_dir=root / "work" / "state", max_retries=max_retries)
            drive(planner, "O1", "O2", "O3")
            assert len(made.calls) == 1
            shutil.copytree(root / "work", root / "template", symlinks=True)
            _broken_driven_once[max_retries] = (root, made.calls[0])
        root, call = _broken_driven_once[max_retries]
        shutil.rmtree(root / "work")
        shutil.copytree(root / "template", root / "work", symlinks=True)
        assert not client.calls
        client.calls.append(call)
        return Planner(root / "work" / "state", client)
    return restore


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
    assert [n.id for n in art.nodes] == ["O1", "O2", "O3", "O4", "O5", "O6"]
    assert art.schedule.alternative == ["O5"]
    assert "O5" in art.branch_scores
    assert [r.rev for r in art.revision_history] == [1]
    assert [e["event"] for e in planner.events] == ["planned", "checkpoint"]
    assert len(planner.usage) == 1  # one model call
    assert {(e.from_, e.to) for e in art.edges} >= {("O1", "O2"), ("O2", "O4")}
    assert Planner.open(tmp_path / "state").artifact == art


def test_next_then_complete_in_a_loop_yields_the_ladder_order(planner: Planner) -> None:
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


def test_edits_and_test_calls_are_bounded_and_audited(planner: Planner) -> None:
    with pytest.raises(PlanStateError, match="was not handed out"):
        planner.report_edit("O1", "pkg/core.py")
    view = planner.next()
    assert view is not None
    for i in range(5):
        planner.report_edit(view.node_id, f"pkg/m{i}.py")
    repo = Path(planner.artifact.repo or "")
    planner.report_edit(view.node_id, repo / "pkg" / "m0.py")  # same file
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


def test_the_gate_check_counts_against_max_test_calls(broken_driven: Any) -> None:
    # §3.4 bounds: 10 test calls per obligation, the validation gate's included.
    planner = broken_driven(Scripted(OBLIGATIONS, SAME_FRAGMENT))  # make_plan + drive O1..O3
    assert planner.artifact.bounds == {}  # a passed node leaves the bounds
    view = planner.next()
    assert view is not None
    assert view.node_id == "O4"
    for _ in range(9):
        planner.report_test_call("O4")
    epoch = planner.artifact.epoch
    verdict = planner.complete("O4")  # call 10, made by the gate: admitted, and it fails
    assert (verdict.passed, verdict.test_calls) == (False, 1)
    assert planner.artifact.bounds["O4"].test_calls == 10
    # the local retry is a new hand-out (issue 15): a verdict of the old one is stale
    art = planner.artifact
    assert art.epoch == (epoch or 0) + 1
    transitions.validatable(art, "O4")  # O4 may be validated again
    assert transitions.settle(art, "O4", 1, verdict, Evidence(), time="t", epoch=epoch).stale
    again = planner.next()  # a local retry: O4 is offered again, with its failure digest
    assert again == view.model_copy(update={"failure_digest": again.failure_digest})
    assert again.failure_digest
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


def test_complete_refuses_a_blocked_or_unknown_node(planner: Planner) -> None:
    with pytest.raises(PlanStateError, match="'O2' is blocked: it waits on O1"):
        planner.complete("O2")
    with pytest.raises(PlanStateError, match="no obligation 'O9'"):
        planner.complete("O9")
    with pytest.raises(PlanStateError, match="is an alternative"):
        planner.complete("O5")


def test_a_failed_validation_is_a_verdict_recorded_in_the_audit(broken_driven: Any) -> None:
    planner = broken_driven(Scripted(OBLIGATIONS, SAME_FRAGMENT))  # make_plan + drive O1..O3
    assert planner.next() is not None
    verdict = planner.complete("O4")
    assert not verdict.passed
    assert verdict.kind == "pytest_node"
    fails = [e for e in planner.events if e["event"] == "failed"]
    assert [(e["node"], e["verdict"]) for e in fails] == [("O4", "fail")]


def test_a_collapsed_cycle_is_validated_as_one_unit(tmp_path: Path) -> None:
    obs = [ob("O1", "pkg.core.f", "modify", ["O2"], "compile"),
           ob("O2", "pkg.core.g", "modify", ["O1"], "import:pkg.core")]
    planner = make_plan(tmp_path, obs)
    art = planner.artifact  # the plan lint ends it with its regression run (O3)
    assert [(n.id, n.members) for n in art.nodes] == [("O1_cycle", ["O1", "O2"]), ("O3", [])]
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1_cycle"
    verdict = planner.complete("O1_cycle")
    assert verdict.passed
    assert verdict.check == "compile && import:pkg.core"
    assert planner.next() is not None  # the regression run


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


CHANGE = """
import sys
from plan07 import Planner
from plan07.model import Feedback
p = Planner.open(sys.argv[1])
if sys.argv[2] == "complete":
    print(p.complete("O1").passed)
else:
    print(p.feedback(Feedback(caused_by="O3", note="nothing observed")) == [])
"""


def test_two_concurrent_changes_both_land_in_the_audit(planner: Planner) -> None:
    assert planner.artifact.schedule.ready == ["O1", "O3"]
    assert planner.next() is not None  # O1 is handed out
    procs = [subprocess.Popen([sys.executable, "-c", CHANGE, str(planner.state_dir), what],
                              stdout=subprocess.PIPE, text=True)
             for what in ("complete", "feedback")]
    outs = [p.communicate()[0].strip() for p in procs]
    assert outs == ["True", "True"]
    events = {(e["node"], e["event"]) for e in planner.events}
    assert {("O1", "passed"), ("O3", "feedback")} <= events
    assert {n.id for n in planner.artifact.nodes if n.state == "complete"} == {"O1"}


COMPLETE_O1 = """
import sys
from plan07 import Planner
from plan07.errors import PlanStateError
try:
    print(Planner.open(sys.argv[1]).complete("O1").passed)
except PlanStateError:
    print("refused")
"""


def test_two_concurrent_completes_of_one_node_land_once(planner: Planner) -> None:
    # Two processes complete the same handed-out node at once: the lock serializes them, the
    # first passes, the second sees O1 no longer handed out; no update is lost or doubled.
    assert planner.next() is not None  # O1 is handed out
    procs = [subprocess.Popen([sys.executable, "-c", COMPLETE_O1, str(planner.state_dir)],
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = sorted(p.communicate()[0].strip() for p in procs)
    assert outs == ["True", "refused"]
    passed = [e for e in planner.events if (e["node"], e["event"]) == ("O1", "passed")]
    assert len(passed) == 1


def test_a_plan_too_big_for_32kb_is_refused_and_the_old_plan_stays_whole(
        planner: Planner, tmp_path: Path) -> None:
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
        Planner.create(REQUEST, repo=Path(planner.artifact.repo or ""), evidence=Evidence(),
                       llm=f"replay:{replay}", state_dir=planner.state_dir, replace=True)
    assert Planner.open(planner.state_dir).events == before


# --- a refused plan writes nothing; plan ids are unique (review fixes) -----------------------

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


def git_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return repo


def huge_replay(tmp_path: Path) -> Path:
    """64 obligations with long strings: a plan over 32 KB even with its evidence moved out."""
    huge = [{**ob(f"O{i}", f"pkg.m.f{i}", "modify", [], "compile"), "caused_by": "c" * 500,
             "evidence": "e" * 200, "validation": "compile " + "v" * 480} for i in range(1, 65)]
    replay = tmp_path / "r64.txt"
    replay.write_text(json.dumps({"obligations": huge}))
    return replay


def snapshot_of(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_a_refused_plan_leaves_no_file_lock_or_ref(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    st = tmp_path / "S"
    with pytest.raises(InputError, match="ARTIFACT_MAX_BYTES 32768"):
        Planner.create(REQUEST, repo=repo, evidence=Evidence(),
                       llm=f"replay:{huge_replay(tmp_path)}", state_dir=st)
    assert not st.exists()
    assert git(repo, "for-each-ref", "refs/plan07") == ""


def test_a_refused_plan_leaves_an_existing_plan_and_its_checkpoints_whole(
    tmp_path: Path,
) -> None:
    repo = git_repo(tmp_path)
    replay = tmp_path / "ok.json"
    replay.write_text(json.dumps({"obligations": OBLIGATIONS}))
    good = Planner.create(REQUEST, repo=repo, evidence=Evidence(), llm=f"replay:{replay}",
                          state_dir=tmp_path / "S")
    view = good.next()
    assert view is not None
    assert good.complete(view.node_id).passed  # CP1 reached: two records, two refs
    files, refs = snapshot_of(good.state_dir), git(repo, "for-each-ref", "refs/plan07")
    pid = good.artifact.plan_id
    assert {f"checkpoints/{pid}/CP0.1.json", f"checkpoints/{pid}/CP1.2.json"} <= set(files)
    with pytest.raises(InputError, match="ARTIFACT_MAX_BYTES"):
        Planner.create(REQUEST, repo=repo, evidence=Evidence(),
                       llm=f"replay:{huge_replay(tmp_path)}", state_dir=good.state_dir,
                       replace=True)
    assert snapshot_of(good.state_dir) == files
    assert git(repo, "for-each-ref", "refs/plan07") == refs
    assert good.rollback(to="CP0").checkpoint == "CP0"  # the old plan still rolls back


def test_two_plans_of_the_same_request_at_the_same_time_get_distinct_ids(tmp_path: Path) -> None:
    replay = tmp_path / "ok.json"
    replay.write_text(json.dumps({"obligations": OBLIGATIONS}))
    repo = make_repo(tmp_path)
    ids = {Planner.create(REQUEST, repo=repo, evidence=Evidence(), llm=f"replay:{replay}",
                          state_dir=tmp_path / f"s{i}", now="2026-01-01T00:00:00Z")
           .artifact.plan_id for i in range(2)}
    assert len(ids) == 2
    assert all(re.fullmatch(r"plan-20260101-000000-[0-9a-f]{8}", i) for i in ids)


def test_rollback_of_one_plan_never_restores_another_plans_snapshot(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    replay = tmp_path / "ok.json"
    replay.write_text(json.dumps({"obligations": OBLIGATIONS}))
    core = repo / "pkg" / "core.py"
    a = Planner.create(REQUEST, repo=repo, evidence=Evidence(), llm=f"replay:{replay}",
                       state_dir=tmp_path / "A", now="2026-01-01T00:00:00Z")
    original = core.read_text()
    core.write_text("def f(x):\n    return x  # plan B's start\n")
    Planner.create(REQUEST, repo=repo, evidence=Evidence(), llm=f"replay:{replay}",
                   state_dir=tmp_path / "B", now="2026-01-01T00:00:00Z")
    assert a.rollback(to="CP0").checkpoint == "CP0"
    assert core.read_text() == original


def test_a_checkpoint_ref_of_another_plan_is_never_overwritten(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    replay = tmp_path / "ok.json"
    replay.write_text(json.dumps({"obligations": OBLIGATIONS}))
    Planner.create(REQUEST, repo=repo, evidence=Evidence(), llm=f"replay:{replay}",
                   state_dir=tmp_path / "A", plan_id="plan-fixed")
    refs = git(repo, "for-each-ref", "refs/plan07")
    with pytest.raises(PlanStateError, match="already exists .* another plan"):
        Planner.create(REQUEST, repo=repo, evidence=Evidence(), llm=f"replay:{replay}",
                       state_dir=tmp_path / "B", plan_id="plan-fixed")
    assert not (tmp_path / "B").exists()
    assert git(repo, "for-each-ref", "refs/plan07") == refs


def test_complete_validates_only_the_handed_out_node(planner: Planner) -> None:
    assert planner.artifact.schedule.ready == ["O1", "O3"]
    with pytest.raises(PlanStateError, match="'O3' was not handed out .*none is active"):
        planner.complete("O3")
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1"
    before = planner.events
    with pytest.raises(PlanStateError, match="'O3' was not handed out .*is 'O1'"):
        planner.complete("O3")  # ready, but not the single actionable obligation (§3.4)
    assert planner.events == before
    assert planner.artifact.bounds == {}


@pytest.mark.parametrize("timeout", [-5.0, 0.0, float("nan"), float("inf")])
def test_complete_refuses_a_timeout_that_is_not_positive(planner: Planner, timeout: float) -> None:
    assert planner.next() is not None
    before = (planner.state_dir / "plan.json").read_bytes()
    with pytest.raises(InputError, match="timeout .* must be a number of seconds > 0"):
        planner.complete("O1", timeout=timeout)
    assert (planner.state_dir / "plan.json").read_bytes() == before


# --- one failure cannot loop: replan counters kept, replans capped (review fix) --------------

def Scripted(first: list[dict[str, object]], scoped: str) -> ScriptedClient:  # noqa: N802
    """The first call returns the plan's obligations; every later (scoped) call `scoped`."""
    return ScriptedClient(json.dumps({"obligations": first}), scoped)


SAME_FRAGMENT = json.dumps({"obligations": [OBLIGATIONS[3]]})  # O4 again, same id


@pytest.mark.parametrize("scoped", [SAME_FRAGMENT, "not JSON at all"])
@pytest.mark.parametrize("max_retries", [3, 2])
def test_a_failing_node_is_retried_within_its_bound_and_replanned_only_on_a_repeat(
    broken_driven: Any, scoped: str, max_retries: int,
) -> None:
    # runtime-structured retry (plan07.plan.retry): the same failure every time. Failure 1: local
    # (no model call); failure 2, the same signature after K = 1 local retry: ONE scoped call
    # (accepted or a fallback, it counts); failure 3: local again; past max_retries: stop --
    # the stuck node is not handed out again and no model call is ever made for it.
    client = Scripted(OBLIGATIONS, scoped)
    # Planner.create(REQUEST, repo=make_repo(tmp_path, broken_test=True), llm=client,
    # max_retries=max_retries), then drive O1, O2, O3
    planner = broken_driven(client, max_retries)
    calls, events_seen = [], []
    while (view := planner.next()) is not None and len(calls) < 10:
        assert view.node_id == "O4"
        assert (view.failure_digest is None) == (not calls)  # a retry carries the digest
        assert not planner.complete("O4").passed
        calls.append(len(client.calls) - 1)
        events_seen.append(planner.artifact.audit[-1].event)
        bounds = planner.artifact.bounds["O4"]  # kept although the replan reused the id
        assert (bounds.test_calls, bounds.retries) == (len(calls), len(calls))
    assert len(calls) == max_retries + 1  # then the stuck node is not handed out again
    assert calls == [0, 1, 1, 1][: max_retries + 1]
    assert events_seen[0] == "retry_local"
    assert events_seen[1] == ("replanned" if scoped == SAME_FRAGMENT else "replan_kept")
    # past the bound the failed edit may not stay under the next hand-out: outside git (this
    # repo) it cannot be undone, so the plan halts (in git the files return to the checkpoint)
    assert events_seen[-1] == "halted"
    assert [e["event"] for e in planner.events][-2:] == ["retry_refused", "halted"]
    events = planner.events
    with pytest.raises(PlanStateError, match=rf"'O4' failed {max_retries + 1} times .*"
                       r"retry bound is spent.*`plan07 feedback`.*`plan07 rollback`"):
        planner.complete("O4")
    assert len(client.calls) == 2  # no model call past the bound
    assert planner.events == events
    assert any("retries are spent" in b for b in planner.termination_blockers())
    assert planner.termination_blockers()[0].startswith("halted: O4 failed past its retry")


def test_max_retries_is_refused_out_of_range(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="max_retries"):
        Planner.create(REQUEST, repo=make_repo(tmp_path), evidence=Evidence(),
                       llm=Scripted(OBLIGATIONS, SAME_FRAGMENT), state_dir=tmp_path / "s",
                       max_retries=caps.MAX_RETRIES_CAP + 1)
    assert not (tmp_path / "s").exists()


def test_a_fresh_fragment_inherits_the_replan_count(broken_driven: Any) -> None:
    fresh = json.dumps({"obligations": [{**OBLIGATIONS[3], "id": "O4.r2.1"}]})
    client = Scripted(OBLIGATIONS, fresh)
    planner = broken_driven(client)  # Planner.create(llm=client), then drive O1, O2, O3
    assert planner.next() is not None
    assert not planner.complete("O4").passed  # local retry first
    assert planner.next() is not None
    assert not planner.complete("O4").passed  # the same failure: scoped replan
    art = planner.artifact
    assert "O4" not in {n.id for n in art.nodes}
    assert "O4" not in art.bounds
    assert (art.bounds["O4.r2.1"].replans, art.bounds["O4.r2.1"].retries) == (1, 2)


# --- termination: a plan ends only at checked or confirmed criteria (§3.1 step 2) -------------

def test_a_plan_on_a_derived_criterion_terminates_only_once_it_is_confirmed(
    tmp_path: Path,
) -> None:
    replay = tmp_path / "ok.json"
    replay.write_text(json.dumps({"obligations": OBLIGATIONS}))
    planner = Planner.create("Make f configurable.", repo=make_repo(tmp_path),
                             evidence=Evidence(), llm=f"replay:{replay}",
                             state_dir=tmp_path / "state")
    assert planner.artifact.requirement.needs_confirmation
    drive(planner, "O1", "O2", "O3", "O4", "O6")
    assert planner.next() is None
    assert planner.termination_blockers() == [
        "criterion 1 'f is configurable' was derived, not named (requirement.needs_confirmation,"
        " §3.1): confirm it with `plan07 confirm 1` (or `--all`)"]
    before = (planner.state_dir / "plan.json").read_bytes()
    for bad, why in (([2], "no acceptance criterion 2; the plan has 1..1"),
                     ([0], "no acceptance criterion 0")):
        with pytest.raises(InputError, match=why):
            planner.confirm(bad)
    assert (planner.state_dir / "plan.json").read_bytes() == before
    assert planner.confirm("all") == [1]
    assert planner.confirm([1]) == []  # already confirmed: nothing new, nothing written
    assert planner.termination_blockers() == []
    art = planner.artifact
    assert art.confirmed_criteria == [1]
    assert (art.audit[-1].event, art.audit[-1].obligation) == ("confirmed", "plan")
    assert art.revision_history[-1].change == "confirmed acceptance criteria 1 (§3.1 step 2)"


def test_a_named_test_criterion_is_settled_by_its_validation_not_by_confirmation(
    planner: Planner,
) -> None:
    # REQUEST names tests/test_core.py::test_f; O4 validates it
    drive(planner, "O1", "O2", "O3")
    assert planner.termination_blockers() == [
        "O4: not complete (state pending)",
        "O6: not complete (state pending)",
        "criterion 1 'tests/test_core.py::test_f' names tests/test_core.py::test_f, which no "
        "complete node's validation runs; plan a validate obligation for it, or check it "
        "yourself and `plan07 confirm 1`",
        "no regression run: the plan terminates only after the tests of every module it "
        "changed ran against CP0 (complete its `regression` node)"]
    assert planner.confirm("all") == []  # --all never confirms a test for the user
    drive(planner, "O4", "O6")
    assert planner.termination_blockers() == []
    with pytest.raises(InputError, match="criterion 1 is already proven by .* of O4"):
        planner.confirm([1])


def test_library_feedback_naming_an_unknown_obligation_is_refused_before_any_write(
    planner: Planner,
) -> None:
    # The library refuses what the CLI refuses: a harness calling Planner.feedback directly
    # gets the same InputError, and plan.json is untouched.
    from plan07.model import Feedback

    before = (planner.state_dir / "plan.json").read_bytes()
    with pytest.raises(InputError, match=r"falsified_obligations\[0\]"):
        planner.feedback(Feedback(caused_by="O1", falsified_obligations=["O99"]))
    assert (planner.state_dir / "plan.json").read_bytes() == before


def test_a_name_error_in_a_file_a_complete_node_wrote_reopens_that_node(
        tmp_path: Path) -> None:
    # runtime-structured retry (plan07.plan.retry `reopen`): O1 rewrites the test file and passes
    # its own check (compile) with an undefined name in it; O2's check runs that file, which
    # no longer imports. The failure is O1's work, not O2's: O1 is handed out again first,
    # with the digest, then O2 -- and no model call is made.
    obligations = [ob("O1", "tests.test_core.test_g", "modify", [], "compile"),
                   ob("O2", "pkg.core.g", "modify", ["O1"], "pytest:tests/test_core.py",
                      status="blocked")]
    replay = tmp_path / "completion.json"
    replay.write_text(json.dumps({"obligations": obligations}))
    planner = Planner.create(REQUEST, repo=make_repo(tmp_path), evidence=Evidence(),
                             llm=f"replay:{replay}", state_dir=tmp_path / "state")
    repo = Path(planner.artifact.repo or "")
    test = repo / "tests" / "test_core.py"
    good = test.read_text() + "\n\ndef test_g():\n    from pkg.core import g\n    assert g() == 2\n"
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    test.write_text(good + "\n\nMARK = pytes.mark\n")  # the slip: compiles, does not import
    assert planner.complete("O1").passed
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    core = repo / "pkg" / "core.py"
    core.write_text(core.read_text() + "\n\ndef g():\n    return 2\n")
    assert not planner.complete("O2").passed
    assert planner.artifact.audit[-1].event == "retry_reopen"
    again = planner.next()
    assert again is not None
    assert again.node_id == "O1"
    assert again.failure_digest
    assert "NameError" in again.failure_digest
    test.write_text(good)
    assert planner.complete("O1").passed
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    assert planner.complete("O2").passed
    assert len(planner.usage) == 1  # the decomposition only: no model call for the retry
