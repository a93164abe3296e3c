"""`replay:PATH`: the raw completion text a model once returned, read from PATH and used verbatim.

I/O: reads the file once, when the client is made (so a missing file fails before any planning).
Malformed, truncated or hostile outputs can be replayed through the same parse as a live model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plan07 import caps
from plan07.decompose.client import Completion
from plan07.errors import InputError
from plan07.model import Usage


class ReplayClient:
    """Answers every call with the file's text, byte for byte; no tokens were spent (usage 0)."""

    def __init__(self, path: str | Path) -> None:
        p = Path(path)
        self.name = f"replay:{p}"
        from plan07.store.boundedio import read_bytes

        data = read_bytes(p, what="replay", max_bytes=caps.REPLAY_MAX_BYTES, field="--llm")
        try:
            self.text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"replay file is not UTF-8: {exc}", source=str(p)) from None

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        max_completion_tokens: int,
        response_format: dict[str, Any] | None,
    ) -> Completion:
        return Completion(text=self.text, usage=Usage())
