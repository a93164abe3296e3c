"""The A/B task generator: distinct seeded tasks of every ladder shape whose gold edits, in the
gold order, keep every step valid and end green; definition-before-consumers breaks; every
injected fault is caught by its obligation's own check."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from plan07.ab.checker import Checker, Consistency, imports_of
from plan07.ab.edits import EditRejected, apply_edit, revert
from plan07.ab.generator import generate_task, generate_tasks
from plan07.ab.tasks import Task, write_repo


def _imports(task: Task) -> list[str]:
    return imports_of([s.obligation.validation for s in task.steps])


def test_hundreds_of_distinct_tasks_of_every_shape_and_size() -> None:
    tasks = generate_tasks(11, 300)
    assert len({t.digest() for t in tasks}) == 300
    sizes = [len(t.steps) for t in tasks]
    assert min(sizes) == 3
    assert max(sizes) <= 30
    assert max(sizes) >= 25
    shapes = Counter(s for t in tasks for s in t.shape.split("+"))
    assert set(shapes) == {"widen", "migrate", "default", "testfirst"}


def test_same_seed_same_task_other_seed_other_task() -> None:
    assert generate_task(5, 7).digest() == generate_task(5, 7).digest()
    assert generate_task(5, 7).digest() != generate_task(6, 7).digest()


def test_every_task_carries_what_a_strategy_needs() -> None:
    t = generate_task(2, 3, size=20)
    ids = [s.id for s in t.steps]
    assert sorted(ids) == sorted(t.gold_order)
    assert t.decomposition().obligations == t.obligations
    assert t.evidence.recon.nodes
    assert "## Acceptance criteria" in t.request
    for s in t.steps:  # one gold edit per modify; preserve/validate are discharged by checks
        assert (s.edit is not None) == (s.obligation.obligation == "modify")


@pytest.mark.parametrize(("seed", "index", "size"), [
    (0, 1, 30), (4, 9, 16), (8, 0, 3),
])
def test_gold_order_keeps_every_step_valid_and_ends_green(
        tmp_path: Path, checker: Checker, seed: int, index: int, size: int) -> None:
    task = generate_task(seed, index, size=size)
    repo = write_repo(task, tmp_path / "r")
    base = checker.check(repo, _imports(task))
    assert base.green
    tc = Consistency(base)
    for oid in task.gold_order:
        step = task.step(oid)
        if step.edit:
            apply_edit(repo, step.edit)
        r = checker.check(repo, _imports(task))
        assert tc.observe(r), f"{oid} broke {sorted(tc.good - r.passed)}"
        assert r.satisfies(step.obligation.validation), f"{oid}: {step.obligation.validation}"
    assert r.green
    assert all(r.satisfies(s.obligation.validation) for s in task.steps)


def _widen_task() -> Task:
    for i in range(50):
        t = generate_task(21, i, size=9)
        if t.shape == "widen":
            return t
    raise AssertionError("no widen task")


def test_definition_before_consumers_breaks_intermediate_states(
        tmp_path: Path, checker: Checker) -> None:
    task = _widen_task()
    repo = write_repo(task, tmp_path / "r")
    tc = Consistency(checker.check(repo))
    narrow = next(s for s in task.steps if s.obligation.target_entity.endswith(".digits_default"))
    widen = task.step(task.gold_order[0]) if task.step(task.gold_order[0]).edit else None
    # The definition's final form first (widen then narrow at once), consumers after.
    order = [s for s in task.steps if s.edit and s.edit.file == narrow.edit.file]  # type: ignore[union-attr]
    order += [task.step(o) for o in task.gold_order if task.step(o) not in order]
    assert widen is None or widen in order
    states = []
    for s in order:
        if s.edit:
            apply_edit(repo, s.edit)
        states.append(tc.observe(checker.check(repo)))
    assert not all(states), "a narrowing before its consumers must break a state"
    assert states[-1], "the end state is still valid: only the middle is broken"


def test_every_fault_is_caught_by_its_obligations_check(tmp_path: Path, checker: Checker) -> None:
    hit: Counter[str] = Counter()
    for seed, index, size in [(0, 0, 12)]:  # testfirst + widen: all four fault kinds
        task = generate_task(seed, index, size=size)
        repo = write_repo(task, tmp_path / f"r{seed}")
        for oid in task.gold_order:
            step = task.step(oid)
            for kind, bad in sorted(step.faults.items()):
                try:
                    applied = apply_edit(repo, bad)
                except EditRejected:  # the sibling was already rebound: nothing written
                    applied = None
                r = checker.check(repo, _imports(task))
                assert not r.satisfies(step.obligation.validation), (oid, kind)
                if applied is not None:
                    revert(repo, applied)
                hit[kind] += 1
            if step.edit:
                apply_edit(repo, step.edit)
    assert set(hit) == {"wrong_arg_name", "missing_import", "partial_edit", "wrong_consumer"}
