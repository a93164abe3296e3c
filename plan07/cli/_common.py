"""Shared CLI helpers: printing JSON or rich output, reading a request. I/O only."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from plan07.errors import InputError

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
    try:
        return Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} file not found", source=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {what}: {exc}", source=path) from None
