"""The MCP server's edges, guarded (docs/safety.md "Hostile input"): what reaches a tool and
what a tool answers. I/O: stdin.

Every error a tool answers is one `error:` line (`tool_error`): a plan07 error as the CLI prints
it, a fault (a full disk) too (`as_tool`, which wraps each tool function), and an argument of the
wrong type, which the SDK would refuse with pydantic's multi-line report (`server_class`).

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

import functools
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from typing import Any, ParamSpec

P = ParamSpec("P")

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


def tool_error(line: str) -> Any:
    """A tool error carrying the CLI's one `error:` line."""
    from mcp.types import CallToolResult, TextContent

    from plan07 import printable

    return CallToolResult(is_error=True, content=[
        TextContent(type="text", text=f"error: {printable(' '.join(line.split()))[:1000]}")])


def server_class() -> Any:
    """MCPServer whose argument errors are tool errors of one line (`error: complete:
    timeout: Input should be a valid number`), not pydantic's multi-line report, and whose
    over-deep requests (plan07.mcp.guard) get one too."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    class PlanServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any],
                            context: Any = None) -> Any:
            if REFUSED in arguments:
                return tool_error(f"{name}: {arguments[REFUSED]}")
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if not isinstance(cause, ValidationError):
                    raise
                errors = cause.errors()
                loc = ".".join(str(p) for p in errors[0]["loc"]) or "arguments"
                more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
                return tool_error(f"{name}: {loc}: {errors[0]['msg']}{more}; nothing was done")

    return PlanServer


def serve_stdio(server: Any) -> None:
    """`server.run("stdio")`, reading stdin through `GuardedStdin` (MCPServer.run_stdio_async
    with the guarded stdin)."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def run() -> None:
        low = server._lowlevel_server
        async with stdio_server(stdin=GuardedStdin()) as (read_stream,  # type: ignore[arg-type]
                                                           write_stream):
            await low.run(read_stream, write_stream, low.create_initialization_options())

    anyio.run(run)


def as_tool(fn: Callable[P, Any], told: Callable[[str], str], *,
            user_only: bool = False) -> Callable[P, Any]:
    """`fn` as the SDK calls it: its signature and output model unchanged (`functools.wraps`,
    so the SDK derives the same schemas), a plan07 error turned into a tool error carrying the
    CLI's line as `told` words it for an agent, a fault (a full disk) into the CLI's line too,
    a result into structured content plus the same JSON as text (marked for the user's eyes
    only when `user_only`)."""
    from mcp.types import Annotations, CallToolResult, TextContent

    from plan07.errors import Plan07Error, fault_line

    audience = Annotations(audience=["user"]) if user_only else None

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            result = fn(*args, **kwargs)
        except Plan07Error as exc:
            return tool_error(told(exc.one_line()))
        except OSError as exc:  # nothing was committed: every write is atomic
            return tool_error(fault_line(exc))
        data = result.model_dump(mode="json", by_alias=True)
        return CallToolResult(structured_content=data, content=[
            TextContent(type="text", text=json.dumps(data, ensure_ascii=False),
                        annotations=audience)])

    return call
