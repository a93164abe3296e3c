"""The MCP server's stdin guard (plan07.mcp.guard): a request nested deeper than the SDK's parser
reads is passed on with its arguments replaced by why it is refused, so it gets a one-line tool
error instead of no reply; anything else passes unchanged. Pure: lines in, lines out (the real
server is driven in tests/test_mcp.py)."""

from __future__ import annotations

import json

import pytest

from plan07.mcp.guard import REFUSED, guard_line


def request(arguments: object, ident: object = 7) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": "feedback", "arguments": arguments}}) + "\n"


def nested(depth: int) -> object:
    value: object = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_request_within_the_cap_passes_unchanged() -> None:
    line = request({"feedback": nested(20), "state": "s"})
    assert guard_line(line) == line
    assert guard_line("not json\n") == "not json\n"


@pytest.mark.parametrize("depth", [100, 210, 5000])
def test_an_over_deep_request_keeps_its_id_and_tool_and_says_why(depth: int) -> None:
    line = "".join(['{"jsonrpc": "2.0", "id": "r-1", "method": "tools/call", "params": '
                    '{"name": "feedback", "arguments": {"feedback": ', '{"a": ' * depth, "1",
                    "}" * depth, "}}}\n"])
    out = json.loads(guard_line(line))
    assert (out["id"], out["method"], out["params"]["name"]) == ("r-1", "tools/call", "feedback")
    assert list(out["params"]["arguments"]) == [REFUSED]
    assert "nested deeper than 64" in out["params"]["arguments"][REFUSED]
