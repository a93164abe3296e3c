"""The deterministic test model: `ScriptedClient` answers call n with the n-th reply of its script
(the last one repeats). Shipped in the package so the tests and the A/B harness share one scripted
model instead of each writing its own. Pure apart from what a delegated client does.

A reply is the completion text, a `Completion`, another client (the call is passed on to it, with
the same arguments), or a function of the messages returning text or a `Completion`. Every call
is recorded in `calls`: its messages and the arguments it was made with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from plan07.decompose.client import Completion, LLMClient
from plan07.model import Usage

Reply: TypeAlias = (
    str | Completion | LLMClient | Callable[[list[dict[str, str]]], "str | Completion"]
)


class ScriptedClient:
    """A scripted model: the n-th call gets `replies[n-1]`, the last reply answers every later
    call. `name` is what a plan records as its model (`Planner.create(llm=...)`)."""

    def __init__(self, *replies: Reply, name: str = "scripted") -> None:
        if not replies:
            raise ValueError("a ScriptedClient needs at least one reply")
        self.replies = list(replies)
        self.name = name
        self.calls: list[dict[str, Any]] = []

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        max_completion_tokens: int,
        response_format: dict[str, Any] | None,
    ) -> Completion:
        self.calls.append({"messages": messages, "temperature": temperature,
                           "max_completion_tokens": max_completion_tokens,
                           "response_format": response_format})
        reply = self.replies[min(len(self.calls), len(self.replies)) - 1]
        if isinstance(reply, str):
            return Completion(text=reply, usage=Usage(prompt_tokens=1), finish_reason="stop")
        if isinstance(reply, Completion):
            return reply
        if isinstance(reply, LLMClient):
            return reply.complete(messages, temperature=temperature,
                                  max_completion_tokens=max_completion_tokens,
                                  response_format=response_format)
        out = reply(messages)
        if isinstance(out, str):
            return Completion(text=out, usage=Usage(prompt_tokens=1), finish_reason="stop")
        return out
