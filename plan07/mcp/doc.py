"""docs/mcp.md: the tools of `plan07 mcp` as an MCP client lists them, in Markdown, from the
schemas the server publishes (`python -m plan07.mcp.server --doc > docs/mcp.md`;
tests/test_mcp.py fails on drift). Pure, apart from `main` writing to stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " \\| ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "object")
    if kind == "array":
        return f"{_type(schema.get('items', {}))}[]"
    return "object" if kind == "object" and "title" not in schema else str(kind)


def tools_doc(tools: list[Any]) -> str:
    """Markdown for the listed MCP tools: each one's description, arguments (type, default,
    description) and result fields, from the schemas the server publishes."""
    out = [DOC_HEAD]
    for t in tools:
        out += [f"## `{t.name}`", "", t.description, "",
                "| argument | type | default | description |", "|---|---|---|---|"]
        required = set(t.input_schema.get("required", []))
        for name, p in t.input_schema["properties"].items():
            default = "(required)" if name in required else f"`{json.dumps(p.get('default'))}`"
            desc = " ".join(str(p.get("description", "")).split())
            out.append(f"| `{name}` | {_type(p)} | {default} | {desc} |")
        out += ["", "Result: " + ", ".join(
            f"`{name}` ({_type(p)})" for name, p in (t.output_schema or {}).get(
                "properties", {}).items()) + ".", ""]
    return "\n".join(out)


DOC_HEAD = """# plan07 as an MCP server: the tools

Generated from the schemas `plan07 mcp` publishes (`python -m plan07.mcp.server --doc >
docs/mcp.md`; a test fails when they drift). Every tool returns its result as structured content
(validated against the tool's output schema) and as the same JSON in a text block. A plan07 error
is a tool error (`isError`) whose text is the line the CLI prints, `error: ...`, with a plan07
command it names given as the tool to call and a flag as the argument to pass; nothing is
written. Named types: `DriverView` is the §3.4 view (`plan07 schema driver-view`), `ProofNode`
a node of the `proof` schema, `Violation` and `Revision` as in the `plan` schema. How to register
the server with a client, and a whole loop: the README's "MCP server".
"""


def main(argv: list[str], build_server: Callable[[], Any]) -> None:
    """`python -m plan07.mcp.server --doc`: the listed tools' Markdown on stdout."""
    if argv != ["--doc"]:
        raise SystemExit("usage: python -m plan07.mcp.server --doc")
    import anyio

    sys.stdout.write(tools_doc(anyio.run(build_server().list_tools)))
