"""§5 phase 5: the execution driver (plan07.plan.driver) over a scripted plan."""

from __future__ import annotations

import json

import pytest

from plan07 import caps
from plan07.errors import PlanStateError
from plan07.model import DerivedEdge, Evidence, Obligation, OrderResult, Requirement
from plan07.plan.driver import (
    admit_edit,
    admit_gate_calls,
    admit_test_call,
    model_context,
    pick,
    require_active,
    view,
)
from plan07.plan.schedule import schedule

IDS = ["O1", "O2", "O3", "O10", "O11"]
PAIRS = [("O1", "O3"), ("O2", "O3"), ("O3", "O11")]


def plan(completed: set[str]) -> object:
    obs = [
        Obligation(id=i, target_entity=f"pkg.m.{i}", obligation="modify", caused_by="req",
                   dependencies=[], evidence="06",
                   status="alternative" if i == "O10" else "ready",
                   validation=f"tests/t.py::test_{i}")
        for i in IDS
    ]
    edges = [DerivedEdge(**{"from": a, "to": b, "rule": "declared"}) for a, b in PAIRS]
    return schedule(obs, OrderResult(edges=edges), Evidence(), completed=completed)


@pytest.mark.parametrize(
    ("completed", "expected"),
    [
        (set(), "O1"),
        ({"O1"}, "O2"),
        ({"O1", "O2"}, "O3"),
        ({"O1", "O2", "O3"}, "O11"),  # O10 is an alternative: never handed out
        ({"O1", "O2", "O3", "O11"}, None),
    ],
)
def test_exactly_one_ready_node_lowest_id(completed: set[str], expected: str | None) -> None:
    node = pick(plan(completed))  # type: ignore[arg-type]
    assert (node.id if node else None) == expected


REQ = Requirement(goal="Make the timeout configurable",
                  acceptance_criteria=["tests/t.py::test_O3", "the old default is kept"])


def test_the_model_facing_context_names_exactly_one_node() -> None:
    v = view(pick(plan({"O1", "O2"})), REQ)  # type: ignore[arg-type]
    text = model_context(v)
    data = json.loads(text)
    assert set(data) == {"node_id", "obligation", "target_entity", "preconditions",
                         "permitted_actions", "required_validation",  # §3.4
                         "goal", "caused_by", "evidence", "criteria", "check"}
    assert data["goal"] == "Make the timeout configurable"
    assert (data["caused_by"], data["evidence"]) == ("req", "06")
    assert data["criteria"] == ["tests/t.py::test_O3"]  # the criterion its validation is
    assert data["check"].startswith("pytest tests/t.py::test_O3: this test must pass")
    assert data["node_id"] == "O3"
    assert data["preconditions"] == {"O1": "complete", "O2": "complete"}
    assert data["permitted_actions"] == {
        "read": True, "edit": True, "test": True,
        "bounds": {"max_edit_files": 5, "max_test_calls": 10},
    }
    assert data["required_validation"] == "tests/t.py::test_O3"
    # nothing of the rest of the schedule: no other node id appears anywhere in the text
    others = [i for i in IDS if i not in ("O1", "O2", "O3")]
    assert [i for i in others if f'"{i}"' in text or f"{i}." in text] == []
    for word in ("blocked", "alternative", "checkpoint", "schedule", "edges"):
        assert word not in text


@pytest.mark.parametrize(
    ("caused_by", "validation", "criteria", "check"),
    [
        ("criterion 2: the old default is kept; preserve it", "compile",
         ["the old default is kept"], "byte-compile every Python file"),
        ("05 localization pkg.m score 0.9", "import:pkg.m", [], "import pkg.m"),
        ("requirement: x", "pytest:tests/unit", [], "pytest tests/unit: its tests must pass"),
        ("requirement: x", "looks right", [], "nothing plan07 can run"),
    ],
)
def test_the_view_says_what_the_node_serves_and_what_its_check_runs(
        caused_by: str, validation: str, criteria: list[str], check: str) -> None:
    node = next(n for n in plan(set()).nodes if n.id == "O1")  # type: ignore[attr-defined]
    node = node.model_copy(update={"caused_by": caused_by, "validation": validation})
    v = view(node, REQ)
    assert v.criteria == criteria
    assert v.check.startswith(check)
    assert v.goal == REQ.goal


def test_a_blocked_node_is_never_viewed() -> None:
    blocked = next(n for n in plan(set()).nodes if n.id == "O3")  # type: ignore[attr-defined]
    with pytest.raises(PlanStateError, match="'O3' is blocked"):
        view(blocked)


def test_edit_bound_refuses_the_sixth_distinct_file() -> None:
    edited: list[str] = []
    for i in range(caps.MAX_EDIT_FILES):
        edited = admit_edit("O1", edited, f"f{i}.py")
    assert admit_edit("O1", edited, "f0.py") == edited  # the same file again is not a new one
    with pytest.raises(PlanStateError, match="at most 5 files.*'f5.py' would be file 6"):
        admit_edit("O1", edited, "f5.py")


def test_test_call_bound_refuses_the_eleventh() -> None:
    calls = 0
    for _ in range(caps.MAX_TEST_CALLS):
        calls = admit_test_call("O1", calls)
    assert calls == 10
    with pytest.raises(PlanStateError, match="at most 10 test calls"):
        admit_test_call("O1", calls)


@pytest.mark.parametrize(
    ("calls", "checks", "after"), [(0, 1, 1), (9, 1, 10), (8, 2, 10), (10, 0, 10)]
)
def test_gate_calls_count_against_the_same_bound(calls: int, checks: int, after: int) -> None:
    assert admit_gate_calls("O1", calls, checks) == after


@pytest.mark.parametrize(("calls", "checks"), [(10, 1), (9, 2), (0, 11)])
def test_gate_calls_past_the_bound_are_refused(calls: int, checks: int) -> None:
    with pytest.raises(PlanStateError, match=f"used {calls} of its 10 test calls.*{checks} more"):
        admit_gate_calls("O1", calls, checks)


@pytest.mark.parametrize(("active", "msg"), [(None, "none is active"), ("O2", "is 'O2'")])
def test_only_the_handed_out_node_may_act(active: str | None, msg: str) -> None:
    require_active("O1", "O1")
    with pytest.raises(PlanStateError, match=msg):
        require_active(active, "O1")
