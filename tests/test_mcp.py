"""`plan07 mcp` driven by the MCP SDK's real client over stdio: the server is started as a
subprocess (`plan07 mcp`, as an MCP client's config starts it), its tools are listed and their
schemas checked, and one scratch git repo is planned with a replayed decomposition and driven from
request to done (a failing check, an edit, a passing one), with status, explain, bad arguments
(the CLI's line, nothing written), rollback and resume on the way. One server process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from plan07.cli import main
from plan07.gate.testcommand import PYTEST_COMMAND
from plan07.mcp.doc import tools_doc
from plan07.mcp.server import for_agent

if TYPE_CHECKING:
    from mcp import StdioServerParameters
    from mcp.types import CallToolResult

DOCS = Path(__file__).resolve().parent.parent / "docs" / "mcp.md"


def sdk() -> Any:
    """The MCP SDK, imported by the test that drives a server (not at collection: it costs
    every xdist worker ~1.5 s of CPU, and one worker runs that test)."""
    try:
        import mcp
        import mcp.types
    except ImportError as exc:  # a venv made before the test extra carried the SDK
        raise ImportError("tests/test_mcp.py needs the MCP SDK of the test extra: "
                          "pip install -e '.[test,dev]'") from exc
    return mcp

REQUEST = """Make `pkg.core.scale` double its input.

## Acceptance criteria

- `tests/test_core.py::test_scale_doubles` passes
"""

TOOLS = {"plan", "next", "complete", "status", "explain", "feedback", "confirm", "rollback",
         "resume"}
VIEW_KEYS = {"node_id", "obligation", "target_entity", "preconditions", "permitted_actions",
             "required_validation",  # §3.4 (a retry adds its failure_digest), then
             "goal", "caused_by", "evidence", "criteria", "check"}  # what an agent acts on


def ob(i: str, target: str, verb: str, deps: list[str], validation: str) -> dict[str, Any]:
    return {"id": i, "target_entity": target, "obligation": verb, "caused_by": "requirement",
            "dependencies": deps, "evidence": "03 recon", "status": "ready",
            "validation": validation}


def scratch(tmp: Path) -> tuple[Path, Path]:
    """A small git repo whose test of `scale` fails until `scale` doubles, and the replayed
    decomposition: modify scale (its test validates it), preserve report, the regression run."""
    repo = tmp / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "core.py").write_text(
        "def scale(x):\n    return x\n\n\ndef report(x):\n    return f\"value {scale(x)}\"\n")
    (repo / "tests" / "test_core.py").write_text(
        "from pkg.core import report, scale\n\n\ndef test_scale_doubles():\n"
        "    assert scale(2) == 4\n\n\ndef test_report():\n"
        "    assert report(1).startswith(\"value\")\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)
    replay = tmp / "decomposition.json"
    replay.write_text(json.dumps({"obligations": [
        ob("O1", "pkg.core.scale", "modify", [], "tests/test_core.py::test_scale_doubles"),
        ob("O2", "pkg.core.report", "preserve", ["O1"], "tests/test_core.py::test_report"),
        ob("O3", "pkg", "validate", ["O2"], "regression"),
    ]}))
    return repo, replay


def server_params(cwd: Path) -> StdioServerParameters:
    """`plan07 mcp`, the console script of this interpreter's environment (as a client's
    config names it); the pytest checks skip this venv's plugins (speed only)."""
    script = Path(sys.executable).with_name("plan07")
    command, args = ((str(script), ["mcp"]) if script.exists() else
                     (sys.executable, ["-c", "from plan07.cli import run; run()", "mcp"]))
    return sdk().StdioServerParameters(command=command, args=args, cwd=str(cwd),
                                 env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})


def data(result: CallToolResult) -> dict[str, Any]:
    """A successful tool result: structured content, and the same JSON as its text."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    block = result.content[0]
    assert isinstance(block, sdk().types.TextContent)
    assert json.loads(block.text) == result.structured_content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    assert result.structured_content is None
    block = result.content[0]
    assert isinstance(block, sdk().types.TextContent)
    assert "\n" not in block.text
    return block.text


def cli_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The line the CLI prints on stderr for the same bad call (exit 2, nothing on stdout), as
    the MCP server tells it to an agent (a command it names is the tool to call)."""
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert (rc, out, err.count("\n")) == (2, "", 1)
    return for_agent(err.strip())


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """What `plan07 ARGV --json` prints (exit 0)."""
    capsys.readouterr()
    rc = main([*argv, "--json"])
    out, _ = capsys.readouterr()
    assert rc == 0
    return json.loads(out)


def check_tool_schemas(tools: list[Any]) -> None:
    """Every tool is documented (description, each argument described) and typed (input and
    output schemas), with the arguments of the issue's table."""
    by_name = {t.name: t for t in tools}
    assert set(by_name) == TOOLS
    required = {"plan": ["repo", "request"], "complete": ["node_id"], "explain": ["dst", "src"],
                "feedback": ["feedback"]}
    for name, tool in by_name.items():
        assert len(tool.description or "") > 40, name
        props = tool.input_schema["properties"]
        assert "state" in props, name
        assert all(p.get("description") for p in props.values()), name
        assert sorted(tool.input_schema.get("required", [])) == required.get(name, []), name
        assert (tool.output_schema or {}).get("type") == "object", name
    assert set(by_name["plan"].input_schema["properties"]) == {
        "request", "repo", "state", "llm", "evidence", "engine", "python", "test_command",
        "replace", "reproduce", "reproduce_preamble"}
    assert by_name["plan"].input_schema["properties"]["llm"]["default"] == "builtin"
    assert set(by_name["complete"].input_schema["properties"]) == {"node_id", "state", "timeout"}
    fb = by_name["feedback"].input_schema["properties"]["feedback"]  # the shipped schema, inlined
    assert fb["additionalProperties"] is False
    assert {"caused_by", "impact_edges", "falsified_entities", "falsified_obligations",
            "note"} <= set(fb["properties"])
    assert "$ref" not in json.dumps(fb)
    assert set(by_name["next"].output_schema["properties"]) == {
        "node", "can_terminate", "termination_blockers"}
    assert by_name["status"].annotations.read_only_hint is True
    assert by_name["rollback"].annotations.destructive_hint is True
    assert tools_doc(tools) == DOCS.read_text("utf-8"), \
        "docs/mcp.md drifted: python -m plan07.mcp.server --doc > docs/mcp.md"


@pytest.mark.slow
def test_an_mcp_client_drives_a_plan_from_request_to_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, replay = scratch(tmp_path)
    st = str(tmp_path / "state")
    plan_json = tmp_path / "state" / "plan.json"
    core = repo / "pkg" / "core.py"
    (tmp_path / "request.md").write_text(REQUEST)

    async def scenario() -> None:
        mcp = sdk()
        # the server's stderr to fd 2 (stdio_client's default is the sys.stderr of the time mcp
        # was imported: here capsys's, which has no file descriptor)
        params = server_params(tmp_path)
        async with mcp.stdio_client(params, errlog=sys.__stderr__) as (read, write), \
                mcp.ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "plan07"
            check_tool_schemas((await session.list_tools()).tools)

            async def call(name: str, **args: Any) -> CallToolResult:
                return await session.call_tool(name, args)

            # bad arguments: the CLI's own line, nothing written
            missing = str(tmp_path / "no-such-repo")
            got = error_text(await call("plan", request=REQUEST, repo=missing, state=st))
            assert got == cli_error(capsys, "plan", str(tmp_path / "request.md"), "--repo",
                                    missing, "--state", st)
            assert got.startswith("error: ")
            assert "repository directory not found" in got
            assert not (tmp_path / "state").exists()
            assert error_text(await call("next", state=st)).startswith("error: ")

            # the gate's world (issue 11): a bad interpreter or test command is the CLI's line
            for flag, arg, value in (("--python", "python", str(tmp_path / "no-python")),
                                     ("--test-command", "test_command", ["{python}"])):
                got = error_text(await call("plan", request=REQUEST, repo=str(repo), state=st,
                                            llm=f"replay:{replay}", **{arg: value}))
                assert got == cli_error(capsys, "plan", str(tmp_path / "request.md"), "--repo",
                                        str(repo), "--state", st, "--llm", f"replay:{replay}",
                                        flag, value if isinstance(value, str) else
                                        json.dumps(value))
                assert not (tmp_path / "state").exists()

            planned = data(await call("plan", request=REQUEST, repo=str(repo), state=st,
                                      llm=f"replay:{replay}", evidence=None,
                                      python=sys.executable, test_command=list(PYTEST_COMMAND)))
            assert (planned["nodes"], planned["violations"]) == (3, [])
            py = str(Path(sys.executable).absolute())
            assert planned["python"] == f"{py} (from --python)"
            gate = json.loads(plan_json.read_text())["gate"]
            assert (gate["python"], gate["command_source"]) == (py, "--test-command")
            assert gate["test_command"] == list(PYTEST_COMMAND)
            assert planned["state"] == str(Path(st).resolve())
            assert "O1" not in json.dumps(planned)  # sizes, not the schedule (invariant 6)

            # next: the ONE actionable obligation, nothing of the rest (§3.4, invariant 6)
            handed = await call("next", state=st)
            first = data(handed)
            assert handed.content[0].annotations is None  # for the model: the one obligation
            assert set(first["node"]) == VIEW_KEYS
            assert first["node"]["node_id"] == "O1"
            assert first["node"]["required_validation"] == "tests/test_core.py::test_scale_doubles"
            assert (first["can_terminate"], first["termination_blockers"]) == (False, [])
            assert "O2" not in json.dumps(first)
            assert first["node"] == cli_json(capsys, "next", "--state", st)  # the CLI's view
            assert "report" not in json.dumps(first)

            # completing a node that was not handed out: the CLI's refusal, plan.json untouched
            before = plan_json.read_bytes()
            got = error_text(await call("complete", node_id="O2", state=st))
            assert got == cli_error(capsys, "complete", "O2", "--state", st)
            assert "O2" in got
            assert "(the `next` tool shows the ready one)" in got  # what to call, not to type
            assert "plan07 next" not in got
            bad_fb = {"caused_by": "O1", "impact_edges": [{"nope": 1}]}
            assert error_text(await call("feedback", feedback=bad_fb, state=st)).startswith(
                "error: feedback: impact_edges[0]")
            got = error_text(await call("confirm", state=st))
            assert got == cli_error(capsys, "confirm", "--state", st)
            assert error_text(await call("complete", node_id="O1", state=st, timeout=-1)) == \
                cli_error(capsys, "complete", "O1", "--state", st, "--timeout", "-1")
            bad_type = await call("complete", node_id=["O1"], state=st)  # the schema refuses
            assert error_text(bad_type) == ("error: complete: node_id: Input should be a valid "
                                            "string; nothing was done")  # one line, no pydantic
            assert error_text(await call("complete", node_id="O1", state=st, timeout="soon")) \
                .startswith("error: complete: timeout: ")
            deep: dict[str, Any] = {}
            cur = deep
            for _ in range(210):  # past what the SDK's parser reads: still answered
                cur["a"] = {}
                cur = cur["a"]
            assert error_text(await call("feedback", feedback=deep, state=st)) == (
                "error: feedback: the arguments are nested deeper than 64 (cap JSON_MAX_DEPTH "
                "64); nothing was done")
            assert plan_json.read_bytes() == before

            # the check fails (scale is unchanged): a normal result, not a protocol error
            failed = data(await call("complete", node_id="O1", state=st, timeout=120))
            assert (failed["node_id"], failed["passed"]) == ("O1", False)
            assert failed["check"] == "tests/test_core.py::test_scale_doubles"
            assert "assert 2 == 4" in failed["output_tail"]
            assert "O2" not in json.dumps(failed)

            # a check the environment cannot judge (scale now imports a module the repo's
            # interpreter lacks): a tool error with the CLI's line; the node neither passed nor
            # failed, and stays handed out
            good = core.read_text()
            core.write_text(good.replace("return x\n", "import nosuchdep_plan07\n    return x\n"))
            got = error_text(await call("complete", node_id="O1", state=st))
            assert got.startswith(f"error: O1 not judged: the repo's interpreter ({py}, from "
                                  "the `python` argument) cannot import nosuchdep_plan07; pass "
                                  "the `python` argument")
            assert got == cli_error(capsys, "complete", "O1", "--state", st)
            assert data(await call("next", state=st))["node"]["node_id"] == "O1"
            core.write_text(good)

            # the agent edits, completes; the next obligation comes only after
            again = data(await call("next", state=st))["node"]
            assert again["target_entity"] == "pkg.core.scale"
            core.write_text(core.read_text().replace("return x\n", "return 2 * x\n"))
            passed = data(await call("complete", node_id=again["node_id"], state=st))
            assert passed["passed"] is True

            # planning again over a plan with progress: refused, the plan kept, unless `replace`
            got = error_text(await call("plan", request=REQUEST, repo=str(repo), state=st,
                                        llm=f"replay:{replay}", python=sys.executable))
            assert "has progress: 1 of 3 obligations complete" in got  # the regression run is one
            assert "pass the `replace` argument" in got
            assert got == cli_error(capsys, "plan", str(tmp_path / "request.md"), "--repo",
                                    str(repo), "--state", st, "--llm", f"replay:{replay}",
                                    "--python", sys.executable)

            status = await call("status", state=st)
            table = data(status)
            assert status.content[0].annotations.audience == ["user"]  # the plan table
            rows = {r["id"]: r for r in table["nodes"]}
            assert rows[again["node_id"]]["state"] == "complete"
            assert table["criteria"][0]["criterion"] == "tests/test_core.py::test_scale_doubles"
            assert table["criteria"][0]["settled"] is True
            assert "CP1" in table["checkpoints_reached"]
            assert table == cli_json(capsys, "status", "--state", st)  # the CLI's table

            why = data(await call("explain", src="O1", dst="O2", state=st))
            assert why["holds"] is True
            assert why["tree"]["location"].startswith("rules/ordering.dl:")
            why_not = data(await call("explain", src="O2", dst="O1", state=st))
            assert (why_not["holds"], why_not["tree"]) == (False, None)
            assert why_not["why_not"]

            second = data(await call("next", state=st))["node"]
            assert (second["node_id"], second["preconditions"]) == ("O2", {"O1": "complete"})
            assert data(await call("complete", node_id="O2", state=st))["passed"] is True
            last = data(await call("next", state=st))["node"]  # the regression run
            assert (last["node_id"], last["required_validation"]) == ("O3", "regression")
            assert data(await call("complete", node_id="O3", state=st))["passed"] is True
            done = data(await call("next", state=st))
            assert done == {"node": None, "can_terminate": True, "termination_blockers": []}
            assert data(await call("status", state=st))["can_terminate"] is True

            # back to the start: the files and the plan state return to CP0
            back = data(await call("rollback", to="CP0", state=st))
            assert back["checkpoint"] == "CP0"
            assert back["git_ref"].startswith("refs/plan07/")
            assert "return x\n" in core.read_text()
            resumed = data(await call("resume", state=st))
            assert resumed["node"]["node_id"] == "O1"

    anyio.run(scenario)


def test_mcp_without_the_sdk_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    rc = main(["mcp"])
    out, err = capsys.readouterr()
    assert (rc, out) == (2, "")
    assert err == ("error: `plan07 mcp` needs the mcp extra, which is not installed; install "
                   "it with pip install 'mcp>=2.3,<3'\n")


def test_the_cli_does_not_import_the_sdk_unless_mcp_runs() -> None:
    """Every command module is registered at start-up; only `plan07 mcp` imports the SDK."""
    code = ("import sys; from plan07.cli import main; main(['next', '--help']); "
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "COLUMNS": "100"}).stdout
    assert out.strip().splitlines()[-1] == "[]"
