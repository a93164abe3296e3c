"""`plan07 mcp`: serve plan07's verbs as MCP tools over stdio (plan07.mcp.server). The MCP SDK is
an optional extra (plan07.extras: `mcp`), imported only when this command runs, so every other
command starts without it."""

from __future__ import annotations

import typer

from plan07 import extras
from plan07.errors import InputError


def mcp() -> None:
    """Serve plan07 as an MCP server over stdio (tools: plan, next, complete, status, explain,
    feedback, confirm, rollback, resume). Needs the mcp extra."""
    if not extras.available("mcp"):
        raise extras.missing("mcp", "`plan07 mcp`")
    try:
        from mcp.server.mcpserver import MCPServer  # noqa: F401 - the v2 API, or the error below

        from plan07.mcp.server import serve
    except ImportError as exc:
        from importlib.metadata import version

        raise InputError(f"`plan07 mcp` needs the MCP Python SDK's v2 API, found mcp "
                         f"{version('mcp')} ({exc}); upgrade with "
                         f"{extras.install_hint('mcp')}") from None
    serve()


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
