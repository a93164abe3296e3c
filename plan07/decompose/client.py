"""The model-client protocol (`LLMClient`) and its `Completion` value. Pure. The `--llm SPEC`
registry that builds clients is plan07.decompose.registry; `LLMUnavailable` is in plan07.errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from plan07.errors import LLMUnavailable
from plan07.model import RoleWord, Usage


@dataclass(frozen=True)
class Completion:
    """What one model call returned: the raw text (verbatim) and its token usage.
    `finish_reason` is the endpoint's, when it gives one (`length` = cut at max tokens).
    `roles`: the role words (obligation id -> words of docs/rules.md "Role facts") plan07's own
    decomposer gives the obligations it wrote; a model's client never sets it (a model's output
    is data, read through its text)."""

    text: str
    usage: Usage
    finish_reason: str | None = None
    roles: Mapping[str, Sequence[RoleWord]] | None = None


@runtime_checkable
class LLMClient(Protocol):
    """One chat-completions call. A client never retries a received completion (spec §4: the L
    column is reached once per scope); it may retry a transport failure, where none was received."""

    name: str

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        max_completion_tokens: int,
        response_format: dict[str, Any] | None,
    ) -> Completion: ...


__all__ = ["Completion", "LLMClient", "LLMUnavailable"]
