"""What one strategy run on one task records, and the shared mechanics every strategy uses:
calling the executor (metered), applying its edits, observing each executed step. I/O (files,
the test worker).

Retry tokens (§7.1, defined once for all three strategies): the tokens (prompt + completion)
of every model call that re-executes an obligation this run has already executed, plus every
re-planning model call made because a validation failed. A first execution is never a retry.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from plan07.ab.checker import Checker, CheckResult, Consistency, imports_of
from plan07.ab.edits import Applied, EditRejected, apply_edit
from plan07.ab.executors import Executor, Reply
from plan07.ab.tasks import Task


@dataclass(frozen=True)
class Ablation:
    """The §7.5 mechanisms of the plan07 strategy; each can be switched off in isolation."""

    externalized_plan: bool = True
    typed_artifacts: bool = True
    ordering: bool = True
    gate: bool = True
    revision: bool = True

    def off(self) -> list[str]:
        return [k for k, v in asdict(self).items() if not v]


@dataclass
class RunResult:
    strategy: str
    task_id: str
    obligations: int
    resolved: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retry_tokens: int = 0
    plan_prompt_tokens: int = 0
    plan_completion_tokens: int = 0
    feedbacks: int = 0
    retry_plan_tokens: int = 0  # the part of retry_tokens spent on re-planning calls
    calls: int = 0
    retry_calls: int = 0
    steps: list[bool] = field(default_factory=list)  # temporal consistency after each step
    faults_hit: list[str] = field(default_factory=list)
    edits_rejected: int = 0
    call_log: list[dict[str, Any]] = field(default_factory=list)  # asked ids, tokens, retry
    # the same calls counted with the other tokenizer (plan07.ab.tokens.other_tokens); None
    # when it is not installed
    alt_tokens: int | None = 0
    alt_retry_tokens: int | None = 0
    note: str = ""

    @property
    def plan_tokens(self) -> int:
        return self.plan_prompt_tokens + self.plan_completion_tokens

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens + self.plan_tokens

    @property
    def consistency(self) -> float:
        return sum(self.steps) / len(self.steps) if self.steps else 1.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tokens"] = self.tokens
        d["plan_tokens"] = self.plan_tokens
        d["consistency"] = self.consistency
        return d


class Session:
    """One strategy run on one task in `repo`: metering, edits, step observation. The session
    being run is `Session.current`, so a unit that crashes still reports what it spent."""

    current: Session | None = None

    def __init__(self, strategy: str, task: Task, repo: Path, executor: Executor,
                 checker: Checker, bound: int) -> None:
        Session.current = self
        self.task, self.repo, self.executor, self.checker = task, repo, executor, checker
        self.bound = bound
        self.result = RunResult(strategy, task.id, len(task.steps))
        self.executed: Counter[str] = Counter()
        self.imports = imports_of([s.obligation.validation for s in task.steps])
        executor.start(task)
        self.consistency = Consistency(self.check())

    def check(self) -> CheckResult:
        return self.checker.check(self.repo, self.imports)

    def _alt(self, n: int | None, retry: bool) -> None:
        r = self.result
        if n is None or r.alt_tokens is None:
            r.alt_tokens = r.alt_retry_tokens = None
            return
        r.alt_tokens += n
        if retry:
            r.alt_retry_tokens = (r.alt_retry_tokens or 0) + n

    def call(self, context: str, asked: list[str]) -> Reply:
        from plan07.ab.executors import SYSTEM
        from plan07.ab.tokens import other_tokens

        reply = self.executor.call(context, asked)
        r = self.result
        r.calls += 1
        r.prompt_tokens += reply.prompt_tokens
        r.completion_tokens += reply.completion_tokens
        retry = any(self.executed[o] for o in asked)
        parts = [other_tokens(t) for t in (SYSTEM, context, reply.text)]
        self._alt(None if None in parts else sum(p or 0 for p in parts), retry)
        if retry:
            r.retry_tokens += reply.tokens
            r.retry_calls += 1
        r.call_log.append({"asked": list(asked), "tokens": reply.tokens, "retry": retry})
        for o in asked:
            self.executed[o] += 1
        r.faults_hit += reply.faults
        return reply

    def check_only(self, oid: str) -> Reply:
        """A validate obligation handed out with no failure to fix: there is nothing to edit,
        so no model call -- its check runs on the repo as it stands (both decomposed
        strategies; a monolithic prompt has no steps). It counts as an execution, so a model
        call after its check failed is a retry, within the bound."""
        self.result.call_log.append({"asked": [oid], "tokens": 0, "retry": False,
                                     "check_only": True})
        self.executed[oid] += 1
        return Reply([], 0, 0, "")

    def plan_call(self, prompt: int, completion: int, *, retry: bool,
                  alt: int | None = None) -> None:
        """A planning model call (decomposition); a replan after a failure is a retry. `alt`:
        its tokens under the other tokenizer."""
        self._alt(alt, retry)
        self.result.plan_prompt_tokens += prompt
        self.result.plan_completion_tokens += completion
        if retry:
            self.result.retry_tokens += prompt + completion
            self.result.retry_plan_tokens += prompt + completion
            self.result.retry_calls += 1

    def apply(self, reply: Reply) -> list[Applied]:
        out = []
        for e in reply.edits:
            try:
                out.append(apply_edit(self.repo, e))
            except EditRejected:
                self.result.edits_rejected += 1
        return out

    def step_done(self, r: CheckResult | None = None) -> CheckResult:
        """An executed step: really run the build and tests (unless `r`, the state already
        checked), record temporal consistency."""
        r = r or self.check()
        self.result.steps.append(self.consistency.observe(r))
        return r

    def finish(self, last: CheckResult | None = None) -> RunResult:
        """Resolved iff the final state passes every obligation's check and the whole suite."""
        r = last or self.check()
        checks = all(r.satisfies(s.obligation.validation) for s in self.task.steps)
        if self.task.final_tests:  # a real repo: its named tests, not a whole suite, decide
            self.result.resolved = checks and set(self.task.final_tests) <= r.passed
        else:
            self.result.resolved = checks and r.green
        return self.result

    def failing(self, r: CheckResult) -> list[int]:
        """Indexes (listed order, `task.visible`: the handed decomposition) of the obligations
        whose check fails in state `r`. `finish` judges every gold step, hidden ones included."""
        return [k for k, s in enumerate(self.task.visible)
                if not r.satisfies(s.obligation.validation)]


def salvage(strategy: str, task: Task, why: str) -> RunResult:
    """A unit that crashed or was refused: unresolved, with every token it had spent (§7 honest
    numbers: a refusal is not free) and the reason in `note`."""
    s = Session.current
    if s is not None and s.task is task:
        res = s.result
    else:
        res = RunResult(strategy, task.id, len(task.steps))
    res.resolved = False
    res.note = why[:300]
    return res
