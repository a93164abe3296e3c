"""Executors: who makes the edits a strategy asks for. `scripted` (offline, seeded faults) and
`openai:MODEL` (an OpenAI-compatible endpoint). I/O only in the openai executor (network).

Every executor answers `call(context, asked)`: `context` is the exact text the strategy hands the
model, `asked` the obligation ids it asks for. The reply is a list of edits in the documented
edit format (docs/ab.md, `Edit.render`) plus the tokens spent.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from plan07.ab.edits import Edit
from plan07.ab.faults import Fault, FaultConfig, plan_faults
from plan07.ab.tasks import Task
from plan07.ab.tokens import count_tokens
from plan07.errors import InputError

# `scripted:prompt` (the §7.5 ablation's executor): the chance, per other obligation the prompt
# names, that an attempt slips. An assumption (From Plan to Action: context about other work is
# where a weak model goes wrong), the same for every variant, and stated in the report.
PROMPT_SLIP = 0.03

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

    def __init__(self, seed: int, faults: FaultConfig | None = None, *,
                 prompt_aware: bool = False) -> None:
        self.seed = seed
        self.config = faults or FaultConfig()
        self.prompt_aware = prompt_aware
        self.name = "scripted:prompt" if prompt_aware else "scripted"
        self.task: Task | None = None
        self.plan: dict[str, Fault] = {}
        self.attempts: Counter[str] = Counter()

    def start(self, task: Task) -> None:
        self.task = task
        kinds = [(s.id, sorted(s.faults)) for s in task.steps] if self.config.enabled else []
        self.plan = plan_faults(self.seed, task.id, kinds, self.config)  # {} when not enabled
        for oid, f in self.plan.items():
            if f.kind not in task.step(oid).faults:
                raise InputError(f"fault {f.kind!r} does not apply to {oid} of {task.id}; it "
                                 f"allows {', '.join(sorted(task.step(oid).faults)) or 'none'}",
                                 field="force")
        self.attempts = Counter()

    def distractors(self, context: str, asked: list[str]) -> int:
        """How many obligations other than `asked` the prompt names (by their target's last
        name: a function, class, test or field), i.e. other work the executor could do."""
        assert self.task is not None
        names = {s.obligation.target_entity.rsplit(".", 1)[-1] for s in self.task.steps
                 if s.id not in asked}
        names -= {self.task.step(o).obligation.target_entity.rsplit(".", 1)[-1] for o in asked}
        return sum(1 for n in names if len(n) > 3 and re.search(rf"\b{re.escape(n)}\b",
                                                                context))

    def _slip(self, oid: str, attempt: int, d: int) -> str | None:
        """`scripted:prompt`: each other obligation the prompt names adds a PROMPT_SLIP chance
        that this attempt goes wrong (one draw per (seed, task, obligation, attempt), compared
        with 1 - (1 - PROMPT_SLIP)^d, so more distraction can only add slips). The slip: the
        edit lands on a sibling it read about (`wrong_consumer`) where there is one, else
        another fault the step allows."""
        assert self.task is not None
        kinds = self.task.step(oid).faults
        if not self.prompt_aware or d <= 0 or not kinds:
            return None
        u = random.Random(f"prompt-slip:{self.seed}:{self.task.id}:{oid}:{attempt}").random()
        if u >= 1 - (1 - PROMPT_SLIP) ** d:
            return None
        for k in ("wrong_consumer", "wrong_arg_name", "missing_import", "partial_edit"):
            if k in kinds:
                return k
        return sorted(kinds)[0]

    def call(self, context: str, asked: list[str]) -> Reply:
        assert self.task is not None, "call start(task) first"
        edits, hit = [], []
        d = self.distractors(context, asked) if self.prompt_aware else 0
        for oid in asked:
            step = self.task.step(oid)
            n = self.attempts[oid]
            self.attempts[oid] += 1
            f = self.plan.get(oid)
            slip = self._slip(oid, n, d)
            if f is not None and n < f.attempts:
                edits += [step.faults[f.kind], *step.more]
                hit.append(f"{oid}:{f.kind}")
            elif slip is not None:
                edits += [step.faults[slip], *step.more]
                hit.append(f"{oid}:{slip}(prompt)")
            elif step.edit is not None:
                edits += [step.edit, *step.more]
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
    imported lazily). Base URL and key: PLAN07_LLM_BASE_URL / PLAN07_LLM_API_KEY (as
    plan07.decompose). Tokens are the API's usage; temperature 0."""

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
    if kind == "scripted" and arg in ("", "prompt"):
        return ScriptedExecutor(seed, faults, prompt_aware=arg == "prompt")
    if kind == "openai" and arg:
        return OpenAIExecutor(arg)
    raise InputError(f"unknown executor {spec!r}; use 'scripted', 'scripted:prompt' or "
                     "'openai:MODEL'",
                     field="--executor")
