"""The three strategies of §7, run on the same task with the same executor, seed and retry
bound (no obligation is executed more than bound + 1 times). I/O through plan07.ab.run.Session.

monolithic  one prompt, all edits at once, validated at the end; a failure re-runs the whole
            prompt (after undoing its edits).
static      the obligation list as a fixed chain, run in listed order with no runtime state,
            validated at the end; a failure at step k re-runs step k and every step after it.
            A validate step with no failure to fix makes no model call (Session.check_only),
            as in plan07.
plan07      plan07.Planner drives it: one obligation via .next(), the local gate .complete(),
            scoped replan of the failed node and its true dependents (plan07.ab.planned).

Hidden consumers (`Task.hidden`, docs/ab.md): every strategy is handed the decomposition without
them. monolithic and static prompts carry the whole request (which names every consumer) and,
for monolithic, the evidence; so once a check fails, their retry also asks for the hidden
obligations and shows their files. plan07 prompts carry one obligation only: it learns of a
hidden consumer solely through §3.6 impact feedback (plan07.ab.planned).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plan07.ab import contexts
from plan07.ab.checker import Checker
from plan07.ab.edits import Applied, revert_all
from plan07.ab.executors import Executor
from plan07.ab.run import Ablation, RunResult, Session
from plan07.ab.tasks import GoldStep, Task

STRATEGIES = ("monolithic", "static", "plan07")


def _why(session: Session, ks: list[int]) -> str:
    steps = [session.task.visible[k] for k in ks[:3]]
    return "; ".join(f"{s.id} check {s.obligation.validation} failed" for s in steps)


def _check_only(step: GoldStep, failed: bool, extra: list[str]) -> bool:
    """A validate step with no failure to fix and nothing else asked needs no model call."""
    return step.obligation.obligation == "validate" and not failed and not extra


def run_monolithic(task: Task, repo: Path, executor: Executor, checker: Checker,
                   bound: int) -> RunResult:
    s = Session("monolithic", task, repo, executor, checker, bound)
    ids = [st.id for st in task.visible]
    failure = None
    for attempt in range(bound + 1):
        extra: list[str] = list(task.hidden) if failure else []  # retries re-read request+evidence
        applied = s.apply(s.call(contexts.monolithic(task, repo, failure, extra), ids + extra))
        r = s.step_done()
        bad = s.failing(r)
        if not bad and r.green:
            return s.finish(r)
        if attempt < bound:
            revert_all(repo, applied)
            failure = _why(s, bad) or "the test suite failed"
    return s.finish()


def run_static(task: Task, repo: Path, executor: Executor, checker: Checker,
               bound: int) -> RunResult:
    s = Session("static", task, repo, executor, checker, bound)
    steps = task.visible
    n = len(steps)
    applied: dict[int, list[Applied]] = {}
    start, failure = 0, None
    hidden_at: int | None = None  # the step whose applied edits hold the hidden obligations
    while True:
        r = None
        for k in range(start, n):
            extra: list[str] = (list(task.hidden) if k == start and failure and hidden_at is None
                                else [])
            if _check_only(steps[k], k == start and failure is not None, extra):
                applied[k] = s.apply(s.check_only(steps[k].id))
            else:
                applied[k] = s.apply(s.call(contexts.static(task, k, repo, failure if k == start
                                                            else None, extra),
                                            [steps[k].id] + extra))
            hidden_at = k if extra else hidden_at
            r = s.step_done()
        r = r or s.check()
        bad = s.failing(r)
        if not bad and r.green:
            return s.finish(r)
        k = bad[0] if bad else 0  # no failing check but a red suite: no state to localize it
        if s.executed[steps[k].id] > bound:
            return s.finish(r)
        for j in range(n - 1, k - 1, -1):
            revert_all(repo, applied.pop(j, []))
        if hidden_at is not None and hidden_at >= k:
            hidden_at = None
        start, failure = k, _why(s, [k])


def run_plan07(task: Task, repo: Path, executor: Executor, checker: Checker, bound: int,
               *, state_dir: Path, ablation: Ablation | None = None,
               engine: str = "pydatalog") -> RunResult:
    from plan07.ab.planned import run_planned

    return run_planned(task, repo, executor, checker, bound, state_dir=state_dir,
                       ablation=ablation or Ablation(), engine=engine)


Runner = Callable[..., RunResult]
RUNNERS: dict[str, Runner] = {"monolithic": run_monolithic, "static": run_static,
                              "plan07": run_plan07}
