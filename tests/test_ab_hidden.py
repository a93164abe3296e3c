"""Hidden consumers (§7.5 revision trigger): a widening's decomposition leaves one consumer
rebind out for every strategy; what each strategy can learn of it, and what plan07's revision
trigger really does with it (docs/ab.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan07.ab.checker import Checker
from plan07.ab.executors import ScriptedExecutor
from plan07.ab.faults import FaultConfig
from plan07.ab.generator import generate_task, generate_tasks
from plan07.ab.run import Ablation, RunResult
from plan07.ab.strategies import run_monolithic, run_plan07, run_static
from plan07.ab.tasks import Task, write_repo

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


def hidden_task() -> Task:
    for i in range(40):
        t = generate_task(8, i, size=9, hidden_consumer_rate=1.0)
        if t.hidden and t.shape == "widen":
            return t
    raise AssertionError("no hidden-consumer widen task")


def test_hiding_is_seeded_and_only_removes_a_widen_consumer_rebind() -> None:
    plain = generate_tasks(0, 12, size=12)
    hid = generate_tasks(0, 12, size=12, hidden_consumer_rate=1.0)
    assert [t.id for t in generate_tasks(0, 12, size=12, hidden_consumer_rate=1.0)] == \
        [t.id for t in hid]
    assert any(t.hidden for t in hid)
    for p, h in zip(plain, hid, strict=True):
        assert p.files == h.files
        assert p.steps == h.steps
        assert not p.hidden
        if not h.hidden:
            assert h.id == p.id
            assert h.obligations == p.obligations
            continue
        assert h.id == p.id + "h"
        assert "widen" in h.shape
        (oid,) = h.hidden
        gone = h.step(oid)
        assert gone.edit is not None
        assert gone.obligation.caused_by.startswith("consumer_rebind")
        assert not gone.obligation.target_entity.startswith("tests.")
        ids = [o.id for o in h.obligations]
        assert oid not in ids
        assert len(ids) == len(p.obligations) - 1
        assert all(oid not in o.dependencies for o in h.obligations)
        assert oid not in h.decomposition_json()


def run(name: str, task: Task, tmp: Path, checker: Checker,
        ablation: Ablation | None = None) -> RunResult:
    repo = write_repo(task, tmp / name / "repo")
    ex = ScriptedExecutor(3, FaultConfig(enabled=False))
    if name == "monolithic":
        return run_monolithic(task, repo, ex, checker, 2)
    if name == "static":
        return run_static(task, repo, ex, checker, 2)
    return run_plan07(task, repo, ex, checker, 2, state_dir=tmp / name / "state",
                      ablation=ablation, engine="clingo")


@pytest.mark.parametrize("name", ["monolithic", "static"])
def test_whole_request_strategies_fix_the_hidden_consumer_on_a_retry(
        tmp_path: Path, checker: Checker, name: str) -> None:
    task = hidden_task()
    r = run(name, task, tmp_path, checker)
    assert r.resolved, r.note
    assert r.retry_tokens > 0  # faults are off: the only retry is the one the hidden step costs
    assert any(task.hidden[0] in c["asked"] and c["retry"] for c in r.call_log)
    assert not any(task.hidden[0] in c["asked"] for c in r.call_log if not c["retry"])


def test_plan07_revision_trigger_adds_the_hidden_consumer_and_the_narrowing_lands_with_it(
        tmp_path: Path, checker: Checker) -> None:
    """What the mechanics give (faults off): with the trigger, impact feedback after the widen
    step adds an obligation on the hidden consumer; without it, the plan never learns of it.
    When the narrowing's edit comes, plan07 reads it (breaking: `digits` made required) before
    its check: with the trigger the added rebind is a pending planned consumer, so the two land
    as one atomic step and nothing fails (no retry token at all); without it the narrowing is
    checked alone, fails in the consumer's file, buys scoped replans until its bound is spent,
    and its edit is taken back out of the tree (the suite is never green)."""
    from plan07 import Planner

    task = hidden_task()
    target = task.step(task.hidden[0]).obligation.target_entity
    on = run("plan07", task, tmp_path / "on", checker)
    off = run("plan07", task, tmp_path / "off", checker, Ablation(revision=False))
    assert (on.feedbacks, off.feedbacks) == (1, 0)
    art = Planner.open(tmp_path / "on" / "plan07" / "state" / "plan1").artifact
    added = [o for os in art.collapsed.values() for o in os if o.target_entity == target]
    assert len(added) == 1  # a member of the narrowing's atomic step
    step = next(n for n in art.nodes if added[0].id in n.members)
    assert (step.cycle_collapsed, step.state) == (True, "complete")
    assert not any(target in n.target_entity for n in
                   Planner.open(tmp_path / "off" / "plan07" / "state" / "plan1").artifact.nodes)
    assert on.resolved
    assert not off.resolved
    assert on.retry_tokens == 0 < off.retry_tokens
    assert off.retry_plan_tokens > 0  # the narrowing's failure implicates the plan
