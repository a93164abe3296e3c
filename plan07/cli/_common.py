"""Shared CLI helpers: printing JSON or rich output, reading a request. I/O only."""

from __future__ import annotations

import json
import sys
from typing import Any

JSON_HELP = "Print machine-readable JSON instead of human output."


def to_jsonable(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True)
    if isinstance(obj, list | tuple):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, ensure_ascii=False) + "\n")


def read_text(path: str, *, what: str) -> str:
    """Read FILE or '-' (stdin) as text, with an error naming the file."""
    if path == "-":
        return sys.stdin.read()
    from plan07.boundedio import read_text as read_bounded

    return read_bounded(path, what=what)
