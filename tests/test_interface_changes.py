"""Compatible vs breaking interface changes end to end on a small repo the test writes: recon
finds the consumer by name, the obligation's text says the kind of change, the rules order a
compatible callee before its planned caller and make a breaking one an atomic step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plan07 import Planner

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

REQUEST = """Let `show` pass a limit to the store.

## Acceptance criteria

- `tests/test_cli.py::test_show` passes
"""


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "store.py").write_text(
        "class Store:\n    def get(self, key):\n        return key\n")
    (repo / "pkg" / "cli.py").write_text(
        "def show(store, key):\n    return store.get(key)\n")  # untyped: found by name
    (repo / "tests" / "test_cli.py").write_text(
        "from pkg.cli import show\nfrom pkg.store import Store\n\n\n"
        "def test_show():\n    assert show(Store(), 1) == 1\n")
    return repo


def plan(tmp_path: Path, callee_text: str) -> Planner:
    obligations = [  # the caller listed first: only the rules can put the callee before it
        {"id": "O1", "target_entity": "pkg.cli.show", "obligation": "modify",
         "caused_by": "requirement: show passes limit to the store", "dependencies": [],
         "evidence": "03 recon", "status": "ready", "validation": "compile"},
        {"id": "O2", "target_entity": "pkg.store.Store.get", "obligation": "modify",
         "caused_by": callee_text, "dependencies": [], "evidence": "03 recon",
         "status": "ready", "validation": "compile"},
    ]
    replay = tmp_path / "completion.json"
    replay.write_text(json.dumps({"obligations": obligations}))
    return Planner.create(REQUEST, repo=make_repo(tmp_path), llm=f"replay:{replay}",
                          state_dir=tmp_path / "state", lint=False)  # the order alone


def test_a_compatible_callee_change_is_handed_out_before_its_planned_caller(
        tmp_path: Path) -> None:
    planner = plan(tmp_path, "compatible change: add an optional parameter `limit` with a default")
    assert [(e.from_, e.to) for e in planner.artifact.edges] == [("O2", "O1")]
    view = planner.next()
    assert view is not None
    assert view.node_id == "O2"
    assert planner.complete("O2").passed
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1"


def test_a_breaking_callee_change_and_its_caller_are_one_atomic_step(tmp_path: Path) -> None:
    planner = plan(tmp_path, "breaking change: make the parameter `limit` required")
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1_atomic"
    node = next(n for n in planner.artifact.nodes if n.id == "O1_atomic")
    assert node.members == ["O1", "O2"]
    assert planner.complete("O1_atomic").passed
    assert planner.next() is None


def test_a_failure_in_the_consumers_tests_merges_them_with_no_model_call(
        tmp_path: Path) -> None:
    """The runtime backstop: O1 says nothing of a breaking change, but its check (the consumer's
    test) fails in the test of O2, which consumes its target: O1 and O2 become one atomic step,
    offered again without a model call."""
    obligations = [
        {"id": "O1", "target_entity": "pkg.store.Store.get", "obligation": "modify",
         "caused_by": "requirement: the store takes a limit", "dependencies": [],
         "evidence": "03 recon", "status": "ready", "validation": "tests/test_cli.py::test_show"},
        {"id": "O2", "target_entity": "pkg.cli.show", "obligation": "modify",
         "caused_by": "requirement: show passes limit to the store", "dependencies": ["O1"],
         "evidence": "03 recon", "status": "blocked", "validation": "compile"},
    ]
    replay = tmp_path / "completion.json"
    replay.write_text(json.dumps({"obligations": obligations}))
    repo = make_repo(tmp_path)
    planner = Planner.create(REQUEST, repo=repo, llm=f"replay:{replay}",
                             state_dir=tmp_path / "state", lint=False)  # the order alone
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1"
    (repo / "pkg" / "store.py").write_text(  # a breaking edit: `limit` is required
        "class Store:\n    def get(self, key, limit):\n        return key\n")
    calls = len(planner.usage)
    assert not planner.complete("O1").passed
    assert len(planner.usage) == calls  # no model call, no scoped replan
    assert not any(r.event in ("replanned", "replan_kept") for r in planner.artifact.audit)
    assert [r.event for r in planner.artifact.audit][-2:] == ["failed", "merged"]
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1_atomic"
    node = next(n for n in planner.artifact.nodes if n.id == "O1_atomic")
    assert (node.members, node.state) == (["O1", "O2"], "pending")
    assert planner.artifact.revision_history[-1].change.startswith("runtime backstop: O1 failed")
    (repo / "pkg" / "cli.py").write_text("def show(store, key):\n    return store.get(key, 1)\n")
    assert planner.complete("O1_atomic").passed
    assert planner.next() is None
