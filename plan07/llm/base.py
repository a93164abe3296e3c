"""The model-client protocol (`LLMClient`), its `Completion` value and the `--llm SPEC` registry.

Pure apart from the clients `make_client` builds: each client module owns its own I/O (a file
for `replay:`, the network for `openai:`, nothing for `builtin`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from plan07.errors import InputError, Plan07Error
from plan07.model import Usage


@dataclass(frozen=True)
class Completion:
    """What one model call returned: the raw text (verbatim) and its token usage.
    `finish_reason` is the endpoint's, when it gives one (`length` = cut at max tokens)."""

    text: str
    usage: Usage
    finish_reason: str | None = None


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


class LLMUnavailable(Plan07Error):
    """No completion was received: the endpoint was unreachable after the retries, or refused the
    request (HTTP 4xx). Not the §4 fallback, which is for a completion that could not be used."""


def _builtin(arg: str) -> LLMClient:
    if arg:
        raise InputError("'builtin' takes no argument", field="--llm")
    from plan07.llm.builtin import BuiltinClient

    return BuiltinClient()


def _replay(arg: str) -> LLMClient:
    from plan07.llm.replay import ReplayClient

    return ReplayClient(arg)


def _openai(arg: str) -> LLMClient:
    from plan07.llm.openai_compat import OpenAIClient

    return OpenAIClient.from_env(arg)


# kind -> (factory, usage). Order = order in error messages and docs.
KINDS: dict[str, tuple[Callable[[str], LLMClient], str]] = {
    "builtin": (_builtin, "builtin (offline, deterministic, no model)"),
    "replay": (_replay, "replay:PATH (the raw completion text in PATH, used verbatim)"),
    "openai": (_openai, "openai:MODEL (an OpenAI-compatible endpoint; PLAN07_LLM_BASE_URL, "
                        "PLAN07_LLM_API_KEY)"),
}


def make_client(spec: str) -> LLMClient:
    """The client for `--llm SPEC`; an unknown kind is refused with the list of known ones."""
    kind, sep, arg = spec.strip().partition(":")
    if kind not in KINDS:
        known = "; ".join(usage for _, usage in KINDS.values())
        raise InputError(f"unknown model client {spec!r}; known: {known}", field="--llm")
    if kind != "builtin" and not (sep and arg):
        raise InputError(f"{kind!r} needs an argument: {KINDS[kind][1]}", field="--llm")
    return KINDS[kind][0](arg)
