"""`plan07 mcp`: serve plan07's verbs as MCP tools over stdio (plan07.mcp.server). The MCP SDK is
an optional extra (`pip install 'plan07[mcp]'`), imported only when this command runs, so every
other command starts without it."""

from __future__ import annotations

import importlib.util

import typer

from plan07.errors import InputError

INSTALL = "pip install 'plan07[mcp]'"


def mcp() -> None:
    """Serve plan07 as an MCP server over stdio (tools: plan, next, complete, status, explain,
    feedback, confirm, rollback, resume). Needs the mcp extra."""
    if importlib.util.find_spec("mcp") is None:
        raise InputError(f"`plan07 mcp` needs the MCP Python SDK (mcp>=2.3); install it with "
                         f"{INSTALL}")
    try:
        from mcp.server.mcpserver import MCPServer  # noqa: F401 - the v2 API, or the error below

        from plan07.mcp.server import serve
    except ImportError as exc:
        from importlib.metadata import version

        raise InputError(f"`plan07 mcp` needs the MCP Python SDK's v2 API (mcp>=2.3), found mcp "
                         f"{version('mcp')} ({exc}); upgrade with {INSTALL}") from None
    serve()


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
