"""A pool worker forked from a process that already ran units (so holds a test worker) starts
its own test worker: two forked siblings writing to their parent's worker's pipes would each
read replies meant for the other (a run with --workers 2 after one with --workers 1 in the same
process gave other rows)."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from plan07.ab import runner
from plan07.ab.generator import generate_tasks

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


def _checker_pid(task_cfg: tuple[object, runner.Config]) -> int:
    task, cfg = task_cfg
    runner.run_one(task, cfg, (0, 0, "monolithic"))  # type: ignore[arg-type]
    return int(runner._CHECKER._proc.pid)


def test_a_forked_pool_worker_starts_its_own_test_worker() -> None:
    task = generate_tasks(1, 1, size=3, real_size=False)[0]
    cfg = runner.Config(tasks=1, seed=1, workers=1, engine="clingo")
    runner.prepare(cfg)
    here = _checker_pid((task, cfg))
    with mp.get_context("fork").Pool(1) as pool:
        there = pool.map(_checker_pid, [(task, cfg)])[0]
    assert there != here
    assert runner._CHECKER._proc.poll() is None  # the parent's own is still there, still its
    assert _checker_pid((task, cfg)) == here
