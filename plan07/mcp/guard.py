"""The MCP server's stdin, guarded (docs/safety.md "Hostile input"). I/O: stdin.

The SDK reads each JSON-RPC line with pydantic's JSON parser, which gives up on a document nested
about 200 deep: the request is dropped and its client waits forever for a reply. `GuardedStdin`
reads the lines first: a request nested deeper than plan07's cap (caps.JSON_MAX_DEPTH, plus the
envelope) reaches the SDK with its arguments replaced by `{REFUSED: why}`, which the server
answers as a tool error (`error: ...`, one line), so every request gets its reply. When the
client closes stdin, the server has a few seconds to finish; then it exits whatever it was doing,
as if killed (every state write is crash-safe, and a running check ends with plan07: see
plan07.gate.supervisor), so a long call does not outlive its client.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from typing import Any

REFUSED = "__plan07_refused__"
ENVELOPE = 4  # {"params": {"arguments": {NAME: ...}}} around what a tool receives
EXIT_AFTER_CLIENT_LEFT_S = 5.0
_ID = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
_NAME = re.compile(r'"name"\s*:\s*("(?:[^"\\]|\\.)*")')


def guard_line(line: str) -> str:
    """`line` as the SDK may read it: unchanged, or with its too-deep arguments replaced."""
    from plan07 import caps

    limit = caps.JSON_MAX_DEPTH + ENVELOPE
    try:
        data = json.loads(line)
        if not _deeper(data, limit):
            return line
        ident, method = data.get("id"), data.get("method")
        name = (data.get("params") or {}).get("name") if isinstance(data, dict) else None
    except RecursionError:
        m, n = _ID.search(line), _NAME.search(line)
        ident = json.loads(m.group(1)) if m else None
        name = json.loads(n.group(1)) if n else None
        method = "tools/call" if '"tools/call"' in line else None
    except ValueError:
        return line  # not JSON: the SDK says so itself
    why = (f"the arguments are nested deeper than {caps.JSON_MAX_DEPTH} "
           f"(cap JSON_MAX_DEPTH {caps.JSON_MAX_DEPTH}); nothing was done")
    params: dict[str, Any] = {"name": name if isinstance(name, str) else "",
                              "arguments": {REFUSED: why}} if method == "tools/call" else {}
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method or "", "params": params}
    if ident is not None:
        out["id"] = ident
    return json.dumps(out) + "\n"


def _deeper(data: Any, limit: int) -> bool:
    """True iff `data` nests lists and objects more than `limit` deep (no recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value \
            if isinstance(value, list) else ()
        if children and depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


class GuardedStdin:
    """What the SDK's stdio transport iterates in place of stdin (`async for line in ...`)."""

    def __init__(self) -> None:
        import io

        import anyio

        text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        self._lines = anyio.wrap_file(text)

    def __aiter__(self) -> GuardedStdin:
        return self

    async def __anext__(self) -> str:
        line = await self._lines.readline()
        if not line:
            timer = threading.Timer(EXIT_AFTER_CLIENT_LEFT_S, os._exit, (0,))
            timer.daemon = True  # the client left: a call still running ends with the process
            timer.start()
            raise StopAsyncIteration
        return guard_line(line)
