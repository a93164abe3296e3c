"""Model clients behind one small protocol, chosen by `--llm SPEC` (design.md):
`builtin` (offline default), `replay:PATH` (a recorded completion), `openai:MODEL` (any
OpenAI-compatible chat-completions endpoint). Importing this package imports no SDK.
"""

from __future__ import annotations

from plan07.decompose.client import Completion, LLMClient
from plan07.decompose.registry import KINDS, make_client
from plan07.errors import LLMUnavailable

__all__ = ["KINDS", "Completion", "LLMClient", "LLMUnavailable", "make_client"]
