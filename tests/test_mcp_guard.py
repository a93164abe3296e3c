"""The MCP server's stdin guard (plan07.mcp.guard): a request nested deeper than the SDK's parser
reads is passed on with its arguments replaced by why it is refused, so it gets a one-line tool
error instead of no reply; anything else passes unchanged. Pure: lines in, lines out (the real
server is driven in tests/test_mcp.py); and a call still running when its client leaves ends
with the server, a few seconds later."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from _probes import spawn_world, survivors
from _smallplan import CLI, cli_env, cli_here, plan_here

from plan07.mcp.guard import EXIT_AFTER_CLIENT_LEFT_S, REFUSED, guard_line


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


@pytest.mark.slow
def test_the_server_ends_a_running_call_soon_after_its_client_left(tmp_path: Path) -> None:
    """A `complete` whose check would run two minutes: the client closes stdin while it runs;
    the server is gone within a few seconds, and so is everything the check started."""
    pytest.importorskip("mcp")
    import mcp_types

    repo, state, pids = spawn_world(tmp_path)
    assert plan_here(tmp_path, state, repo, process=False).returncode == 0
    assert cli_here("next", "--state", str(state)).returncode == 0
    pids.unlink()
    Path(f"{pids}.arm").write_text("")
    server = subprocess.Popen([*CLI, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=cli_env())
    assert server.stdin is not None
    for msg in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION, "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                    "name": "complete", "arguments": {"node_id": "O1", "state": str(state)}}}):
        server.stdin.write((json.dumps(msg) + "\n").encode())
        server.stdin.flush()
    deadline = time.monotonic() + 120
    while not (pids.exists() and pids.read_text().strip()):
        assert server.poll() is None, "the server exited"
        assert time.monotonic() < deadline, "the check never started"
        time.sleep(0.05)
    server.stdin.close()  # the client leaves while the check runs
    t0 = time.monotonic()
    server.wait(timeout=60)
    assert time.monotonic() - t0 < EXIT_AFTER_CLIENT_LEFT_S + 10
    assert survivors(pids) == []
