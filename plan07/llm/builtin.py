"""`builtin`: the offline, deterministic decomposer behind the same protocol as a model. Pure.

It reads the prompt plan07.decompose assembled (plan07.llm.prompt.read), so it sees exactly what a
model would see, derives obligations by fixed rules (plan07.builtin_decompose), and answers with
the §4 JSON text, which goes through the same parse as any completion. No tokens are spent.
"""

from __future__ import annotations

import json
from typing import Any

from plan07.builtin_decompose import derive, derive_scoped
from plan07.llm.base import Completion
from plan07.llm.prompt import read
from plan07.model import Usage


class BuiltinClient:
    name = "builtin"

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        max_completion_tokens: int,
        response_format: dict[str, Any] | None,
    ) -> Completion:
        payload = read(messages)
        if payload.scope is None:
            obligations = derive(payload.requirement, payload.evidence)
        else:
            obligations = derive_scoped(payload.requirement, payload.evidence, payload.scope)
        text = json.dumps({"obligations": [o.model_dump() for o in obligations]},
                          ensure_ascii=False, indent=1)
        return Completion(text=text, usage=Usage(), finish_reason="stop")
