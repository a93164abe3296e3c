"""Executors: who makes the edits a strategy asks for. `scripted` (offline, seeded faults) and
`openai:MODEL` (an OpenAI-compatible endpoint). I/O only in the openai executor (network).

Every executor answers `call(context, asked)`: `context` is the exact text the strategy hands the
model, `asked` the obligation ids it asks for. The reply is a list of edits in the documented
edit format (docs/ab.md, `Edit.render`) plus the tokens spent.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from plan07.ab.edits import Edit
from plan07.ab.faults import Fault, FaultConfig, plan_faults
from plan07.ab.tasks import Task
from plan07.ab.tokens import count_tokens
from plan07.errors import InputError

SYSTEM = (
    "You are a coding agent. Make exactly the change you are asked for, nothing else. Reply "
    "only with edits in this format, one block per edit:\n"
    "=== edit PATH\n<<<<<<< old\nEXACT OLD TEXT (must occur once)\n=======\nNEW TEXT\n"
    ">>>>>>> new\n"
    "or, for a new file:\n=== create PATH\nFULL CONTENT\n=== end\n"
    "Reply with no edit blocks when the step needs no edit (a check only)."
)


@dataclass
class Reply:
    edits: list[Edit]
    prompt_tokens: int
    completion_tokens: int
    text: str
    faults: list[str] = field(default_factory=list)  # "O3:wrong_arg_name", scripted only

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ScriptedExecutor:
    """Applies the gold edit of each obligation it is asked for, except where the seeded fault
    plan says this attempt is faulty: then it returns that fault's edit. Attempts are counted per
    obligation over one strategy run (`start` resets them), so a fault pinned to (obligation,
    attempt) hits every strategy at the same place. Tokens: `count_tokens` (an estimate) of
    SYSTEM + the context, and of the rendered reply."""

    name = "scripted"

    def __init__(self, seed: int, faults: FaultConfig | None = None) -> None:
        self.seed = seed
        self.config = faults or FaultConfig()
        self.task: Task | None = None
        self.plan: dict[str, Fault] = {}
        self.attempts: Counter[str] = Counter()

    def start(self, task: Task) -> None:
        self.task = task
        kinds = [(s.id, sorted(s.faults)) for s in task.steps]
        self.plan = plan_faults(self.seed, task.id, kinds, self.config)
        for oid, f in self.plan.items():
            if f.kind not in task.step(oid).faults:
                raise InputError(f"fault {f.kind!r} does not apply to {oid} of {task.id}; it "
                                 f"allows {', '.join(sorted(task.step(oid).faults)) or 'none'}",
                                 field="force")
        self.attempts = Counter()

    def call(self, context: str, asked: list[str]) -> Reply:
        assert self.task is not None, "call start(task) first"
        edits, hit = [], []
        for oid in asked:
            step = self.task.step(oid)
            n = self.attempts[oid]
            self.attempts[oid] += 1
            f = self.plan.get(oid)
            if f is not None and n < f.attempts:
                edits.append(step.faults[f.kind])
                hit.append(f"{oid}:{f.kind}")
            elif step.edit is not None:
                edits.append(step.edit)
        text = "".join(e.render() for e in edits) or "(no edit: check only)\n"
        return Reply(edits, count_tokens(SYSTEM) + count_tokens(context), count_tokens(text),
                     text, hit)


_BLOCK = re.compile(
    r"^=== edit (?P<path>\S+)\n<<<<<<< old\n(?P<old>.*?)\n=======\n(?P<new>.*?)\n>>>>>>> new$"
    r"|^=== create (?P<cpath>\S+)\n(?P<content>.*?)=== end$",
    re.S | re.M,
)


def parse_edits(text: str) -> list[Edit]:
    """The edits of a reply in the documented format; text outside blocks is ignored."""
    out = []
    for m in _BLOCK.finditer(text):
        if m["path"]:
            out.append(Edit(m["path"], m["old"], m["new"]))
        else:
            out.append(Edit(m["cpath"], None, m["content"]))
    return out


class OpenAIExecutor:
    """A real model behind any OpenAI-compatible chat-completions endpoint (the official SDK,
    imported lazily). Base URL and key: PLAN07_LLM_BASE_URL / PLAN07_LLM_API_KEY (as plan07.llm).
    Tokens are the API's usage; temperature 0."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 max_tokens: int = 4096) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url or os.environ.get("PLAN07_LLM_BASE_URL")
        self.api_key = api_key or os.environ.get("PLAN07_LLM_API_KEY") or "unused"
        self.max_tokens = max_tokens
        self._client: Any = None

    def start(self, task: Task) -> None:
        del task

    def call(self, context: str, asked: list[str]) -> Reply:
        del asked
        if self._client is None:
            import openai

            self._client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key,
                                         max_retries=2, timeout=120.0)
        resp = self._client.chat.completions.create(
            model=self.model, temperature=0, max_tokens=self.max_tokens,
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": context}])
        text = resp.choices[0].message.content or ""
        u = resp.usage
        return Reply(parse_edits(text), int(getattr(u, "prompt_tokens", 0) or 0),
                     int(getattr(u, "completion_tokens", 0) or 0), text)


Executor = ScriptedExecutor | OpenAIExecutor


def make_executor(spec: str, *, seed: int, faults: FaultConfig | None = None) -> Executor:
    """`scripted` (default) or `openai:MODEL`; anything else is refused with the known kinds."""
    kind, _, arg = spec.strip().partition(":")
    if kind == "scripted" and not arg:
        return ScriptedExecutor(seed, faults)
    if kind == "openai" and arg:
        return OpenAIExecutor(arg)
    raise InputError(f"unknown executor {spec!r}; use 'scripted' or 'openai:MODEL'",
                     field="--executor")
