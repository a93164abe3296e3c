"""The `--llm SPEC` registry: `make_client` builds the client a spec names. Each client module owns
its own I/O (a file for `replay:`, the network for `openai:`, nothing for `builtin`) and is
imported only when its kind is asked for.
"""

from __future__ import annotations

from collections.abc import Callable

from plan07.decompose.client import LLMClient
from plan07.errors import InputError


def _builtin(arg: str) -> LLMClient:
    if arg:
        raise InputError("'builtin' takes no argument", field="--llm")
    from plan07.decompose.builtin_client import BuiltinClient

    return BuiltinClient()


def _replay(arg: str) -> LLMClient:
    from plan07.decompose.replay import ReplayClient

    return ReplayClient(arg)


def _openai(arg: str) -> LLMClient:
    from plan07.decompose.openai_compat import OpenAIClient

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
