"""The openai:MODEL client and the §4 call against a real HTTP server on 127.0.0.1 (started here,
speaking /v1/chat/completions, recording every request). Never the network."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from _decompose_cases import FIXTURE, GOOD, HOSTILE

from plan07 import caps
from plan07.decompose import LLMUnavailable, make_client
from plan07.decompose.call import decompose, decompose_scoped
from plan07.decompose.openai_compat import OpenAIClient
from plan07.decompose.prompt import SYSTEM
from plan07.errors import InputError
from plan07.evidence import reach
from plan07.model import Evidence, Obligation, Requirement

Reply = tuple[int, Any, dict[str, str]]


def completion(text: str, prompt_tokens: int = 321, completion_tokens: int = 45) -> Reply:
    body = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}
    return 200, body, {}


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return status, {"error": {"message": message, "type": "invalid_request_error"}}, headers or {}


class Server:
    """A chat-completions endpoint: answers from a script (a list, or a function of the request),
    records every request. Past the script it answers 500, so an extra request cannot pass."""

    def __init__(self, script: list[Reply] | Callable[[dict[str, Any]], Reply]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.auth: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.paths.append(self.path)
                outer.auth.append(self.headers.get("Authorization", ""))
                status, payload, headers = outer.reply(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def reply(self, body: dict[str, Any]) -> Reply:
        if callable(self.script):
            return self.script(body)
        if self.script:
            return self.script.pop(0)
        return error(500, "no more scripted replies")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def user_prompt(self, i: int = 0) -> str:
        msgs = self.requests[i]["messages"]
        return str(next(m["content"] for m in msgs if m["role"] == "user"))


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(script: list[Reply] | Callable[[dict[str, Any]], Reply]) -> Server:
        servers.append(Server(script))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture
def inputs() -> tuple[Requirement, Evidence]:
    return (Requirement.model_validate_json((FIXTURE / "requirement.json").read_text()),
            Evidence.model_validate_json((FIXTURE / "evidence.json").read_text()))


def client(server: Server, **kw: Any) -> OpenAIClient:
    """A client with a tiny backoff (tests stay fast; the real default is caps.LLM_BACKOFF_S)."""
    return OpenAIClient("test-model", base_url=server.url, api_key="k", backoff_s=0.001,
                        timeout_s=10, **kw)


def test_one_request_temperature_0_max_completion_tokens_2048(
    serve: Callable[..., Server], inputs: tuple[Requirement, Evidence],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = serve([completion(GOOD)])
    monkeypatch.setenv("PLAN07_LLM_BASE_URL", server.url)
    monkeypatch.setenv("PLAN07_LLM_API_KEY", "secret-k")
    req, ev = inputs
    result = decompose(req, ev, make_client("openai:test-model"))
    assert [o.id for o in result.obligations] == ["O1", "O2", "O3"]
    assert not result.re_decompose
    assert result.usage is not None
    assert (result.usage.prompt_tokens,
                                         result.usage.completion_tokens) == (321, 45)
    assert result.client == "openai:test-model"
    assert len(server.requests) == 1
    body = server.requests[0]
    assert server.paths == ["/v1/chat/completions"]
    assert server.auth == ["Bearer secret-k"]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0
    assert body["max_completion_tokens"] == caps.LLM_MAX_COMPLETION_TOKENS == 2048
    assert "max_tokens" not in body
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    item = schema["properties"]["obligations"]["items"]
    assert sorted(item["required"]) == sorted(Obligation.model_fields)
    assert item["additionalProperties"] is False


def test_prompt_carries_requirement_and_evidence_summaries_and_no_body(
    serve: Callable[..., Server], inputs: tuple[Requirement, Evidence],
) -> None:
    server = serve([completion(GOOD)])
    req, ev = inputs
    decompose(req, ev, client(server))
    prompt = server.user_prompt()
    assert req.goal in prompt
    for c in [*req.acceptance_criteria, *req.constraints]:
        assert c in prompt
    for summary in ('impact {"src": "pkg.auth.SessionConfig", '
                    '"dst": "pkg.auth.SessionManager.load"', '"cause": "sig_change"',
                    'localization {"entity": "pkg.auth.SessionManager.load"',
                    "Creates and loads sessions; expiry uses SESSION_TIMEOUT_MINUTES.",
                    '"signature": "def load(self, session_id: str) -> Session"',
                    '"signature": "def login(user: str, password: str) -> Session"'):
        assert summary in prompt
    # the fixture's signatures and context carry function bodies: none reaches the model
    for body in ("return Session(", "SessionConfig(name=user)", "def load(self, session_id):",
                 "SESSION_TIMEOUT_MINUTES * 60", "return SessionManager"):
        assert body not in json.dumps(server.requests[0])


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_reply_falls_back_without_a_second_request(
    name: str, serve: Callable[..., Server], inputs: tuple[Requirement, Evidence],
) -> None:
    text, why, rescope = HOSTILE[name]
    server = serve([completion(text), completion(GOOD)])  # a retry would get a good answer
    result = decompose(*inputs, client(server))
    assert len(server.requests) == 1
    assert result.obligations == []
    assert result.re_decompose is True
    assert result.rescope is rescope
    assert result.reason is not None
    assert why in result.reason
    assert result.raw == text
    assert result.usage is not None
    assert result.usage.prompt_tokens == 321


def test_truncated_completion_says_so(serve: Callable[..., Server],
                                      inputs: tuple[Requirement, Evidence]) -> None:
    status, body, h = completion(GOOD[:100])
    body["choices"][0]["finish_reason"] = "length"
    server = serve([(status, body, h)])
    result = decompose(*inputs, client(server))
    assert result.re_decompose
    assert "max_completion_tokens" in (result.reason or "")
    assert len(server.requests) == 1


@pytest.mark.parametrize("first", [error(500, "boom"), error(503, "busy"),
                                   error(429, "slow down", {"Retry-After": "0"})])
def test_transport_failure_then_good_reply_uses_one_completion(
    first: Reply, serve: Callable[..., Server], inputs: tuple[Requirement, Evidence],
) -> None:
    server = serve([first, completion(GOOD, prompt_tokens=7)])
    result = decompose(*inputs, client(server))
    assert len(server.requests) == 2  # two HTTP requests ...
    assert server.requests[0] == server.requests[1]  # ... of the same call
    assert [o.id for o in result.obligations] == ["O1", "O2", "O3"]  # ... one completion used
    assert result.usage is not None
    assert result.usage.prompt_tokens == 7


def test_transport_failures_past_the_attempts_raise_not_fallback(
    serve: Callable[..., Server], inputs: tuple[Requirement, Evidence],
) -> None:
    server = serve([error(500, "down")] * 5)
    with pytest.raises(LLMUnavailable, match="after 3 attempt"):
        decompose(*inputs, client(server))
    assert len(server.requests) == caps.LLM_MAX_ATTEMPTS == 3


def test_connection_refused_is_retried_then_unavailable(
    inputs: tuple[Requirement, Evidence],
) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = OpenAIClient("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", backoff_s=0.001,
                     timeout_s=5)
    with pytest.raises(LLMUnavailable, match="no completion"):
        decompose(*inputs, c)


def test_400_is_not_retried(serve: Callable[..., Server],
                            inputs: tuple[Requirement, Evidence]) -> None:
    server = serve([error(400, "model 'test-model' does not exist"), completion(GOOD)])
    with pytest.raises(LLMUnavailable, match="HTTP 400"):
        decompose(*inputs, client(server))
    assert len(server.requests) == 1


def test_401_is_not_retried(serve: Callable[..., Server],
                            inputs: tuple[Requirement, Evidence]) -> None:
    server = serve([error(401, "bad key"), completion(GOOD)])
    with pytest.raises(LLMUnavailable, match="HTTP 401"):
        decompose(*inputs, client(server))
    assert len(server.requests) == 1


def test_endpoint_without_structured_output_gets_plain_json(
    serve: Callable[..., Server], inputs: tuple[Requirement, Evidence],
) -> None:
    def no_formats(body: dict[str, Any]) -> Reply:
        if "response_format" in body:
            return error(400, f"response_format {body['response_format']['type']} is unsupported")
        return completion(GOOD)

    server = serve(no_formats)
    c = client(server)
    result = decompose(*inputs, c)
    assert [o.id for o in result.obligations] == ["O1", "O2", "O3"]
    kinds = [b.get("response_format", {}).get("type") for b in server.requests]
    assert kinds == ["json_schema", "json_object", None]
    decompose(*inputs, c)  # the downgrade is remembered: one request next time
    assert len(server.requests) == 4
    assert "response_format" not in server.requests[3]


def test_json_object_endpoint(serve: Callable[..., Server],
                              inputs: tuple[Requirement, Evidence]) -> None:
    def only_json_object(body: dict[str, Any]) -> Reply:
        if body.get("response_format", {}).get("type") == "json_schema":
            return error(400, "This response_format type is unavailable now")
        return completion(GOOD)

    server = serve(only_json_object)
    result = decompose(*inputs, client(server))
    assert len(result.obligations) == 3
    assert [b["response_format"]["type"] for b in server.requests] == ["json_schema", "json_object"]


@pytest.mark.parametrize(("env", "missing"), [
    ({}, "PLAN07_LLM_BASE_URL"),
    ({"PLAN07_LLM_BASE_URL": "http://127.0.0.1:1/v1"}, "PLAN07_LLM_API_KEY"),
])
def test_missing_env_is_a_clear_input_error(env: dict[str, str], missing: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("PLAN07_LLM_BASE_URL", "PLAN07_LLM_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(InputError, match=missing):
        make_client("openai:m")


@pytest.mark.parametrize("ours", [False, True])
def test_the_openai_sdks_variables_are_the_fallback(
    ours: bool, serve: Callable[..., Server], inputs: tuple[Requirement, Evidence],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OPENAI_BASE_URL / OPENAI_API_KEY serve when PLAN07_LLM_* are unset; PLAN07_LLM_* win."""
    server = serve([completion(GOOD)])
    for k in ("PLAN07_LLM_BASE_URL", "PLAN07_LLM_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url if not ours else "http://127.0.0.1:1/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sdk-key")
    if ours:
        monkeypatch.setenv("PLAN07_LLM_BASE_URL", server.url)
        monkeypatch.setenv("PLAN07_LLM_API_KEY", "our-key")
    result = decompose(*inputs, make_client("openai:test-model"))
    assert [o.id for o in result.obligations] == ["O1", "O2", "O3"]
    assert server.auth == [f"Bearer {'our-key' if ours else 'sdk-key'}"]


def test_without_the_openai_extra_it_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # as if the extra were not installed
    monkeypatch.setenv("PLAN07_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("PLAN07_LLM_API_KEY", "k")
    with pytest.raises(InputError) as err:
        make_client("openai:m")
    assert err.value.one_line() == ("--llm openai:m needs the openai extra, which is not "
                                    "installed; install it with pip install 'openai>=1.40'")


def test_scoped_reinvoke_sends_only_the_subgraph_fragment(
    serve: Callable[..., Server], inputs: tuple[Requirement, Evidence],
) -> None:
    req, ev = inputs
    full = decompose(req, ev, make_client("builtin")).obligations
    by_target = {(o.obligation, o.target_entity): o for o in full}
    # the consumer's modify (a compatible widening rebinds no caller: the fixture's request
    # adds a value to SessionConfig, so SessionManager.load is the step after it)
    failed = by_target[("modify", "pkg.auth.SessionManager.load")]
    subgraph = [failed] + [o for o in full if failed.id in o.dependencies]
    reply = json.dumps({"obligations": [o.model_dump() for o in subgraph] + [
        {**failed.model_dump(), "id": f"{failed.id}.r1", "dependencies": [failed.id],
         "status": "blocked"}]})
    server = serve([completion(reply), completion(reply)])
    result = decompose_scoped(req, ev, client(server), subgraph=subgraph,
                              failure="ImportError: cannot import name 'SessionConfig'")
    assert len(server.requests) == 1
    assert not result.re_decompose, result.reason
    assert {o.id for o in result.obligations} == {o.id for o in subgraph} | {f"{failed.id}.r1"}
    prompt = server.user_prompt()
    scope = json.loads(prompt.split("## scope\n", 1)[1].splitlines()[0])
    assert [o["id"] for o in scope["obligations"]] == [o.id for o in subgraph]
    assert scope["failure"] == "ImportError: cannot import name 'SessionConfig'"
    others = [o for o in full if o not in subgraph]
    assert others
    assert all(f'"id": "{o.id}"' not in prompt for o in others)
    requirement = json.loads(prompt.split("## requirement\n", 1)[1].splitlines()[0])
    assert requirement["goal"] == req.goal
    cited = " ".join(o.caused_by + " " + o.validation for o in subgraph)
    # only the criteria the subgraph cites (here every one: each criterion's test runs after
    # this modify)
    assert set(requirement["acceptance_criteria"]) <= set(req.acceptance_criteria)
    for c in requirement["acceptance_criteria"]:
        assert c.lower() in cited.lower() or "criterion" in cited
    # the evidence is only what touches the subgraph's (non-validate) targets, not the bundle:
    # every edge has a target as an endpoint, every node is a target or an impact edge's end
    targets = {o.target_entity for o in subgraph if o.obligation != "validate"}
    near = reach(ev, targets, 1)
    sent, ends = set(), set(targets)
    lines = prompt.split("## evidence\n", 1)[1].split("## scope")[0].splitlines()
    for line in lines:
        tag, rec = line.split(" ", 1)[0], json.loads(line.split(" ", 1)[1])
        sent |= {rec[k] for k in ("src", "dst", "entity", "id") if k in rec}
        if tag in ("impact", "recon.edge"):
            assert {rec["src"], rec["dst"]} & targets, line
        if tag == "impact":
            ends |= {rec["src"], rec["dst"]}
    assert sent
    assert sent <= near
    assert {json.loads(ln.split(" ", 1)[1])["id"] for ln in lines
            if ln.startswith("recon.node ")} <= ends
    outside = {n.id for n in ev.recon.nodes} - near  # in the bundle, not in the fragment
    assert outside
    assert not outside & sent
    # the scoped system message, not the initial decomposition's instructions
    system = next(m["content"] for m in server.requests[0]["messages"] if m["role"] == "system")
    assert system.startswith("Revise the failed part of a coding plan.")
    assert SYSTEM not in system
    assert len(system) < len(SYSTEM) / 2


@pytest.mark.parametrize(("var", "value", "match"), [
    ("PLAN07_LLM_TIMEOUT", "soon", "not a number of seconds"),
    ("PLAN07_LLM_RESPONSE_FORMAT", "yaml", "unknown response format 'yaml'"),
])
def test_bad_optional_env_is_an_input_error(var: str, value: str, match: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAN07_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("PLAN07_LLM_API_KEY", "k")
    monkeypatch.setenv(var, value)
    with pytest.raises(InputError, match=match):
        make_client("openai:m")


def test_response_format_none_sends_plain_json(serve: Callable[..., Server],
                                               inputs: tuple[Requirement, Evidence]) -> None:
    server = serve([completion(GOOD)])
    assert len(decompose(*inputs, client(server, mode="none")).obligations) == 3
    assert "response_format" not in server.requests[0]


def test_the_cli_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = ("import sys, plan07.cli; "
            "bad = [m for m in ('openai', 'plan07.decompose.call', "
            "'plan07.decompose.openai_compat') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stdout + run.stderr
