"""Executors: the documented tokenizer, the shared seeded fault plan, the edit format, and the
openai executor against a real HTTP server on 127.0.0.1 (never the network)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from plan07.ab.edits import Edit
from plan07.ab.executors import SYSTEM, OpenAIExecutor, ScriptedExecutor, make_executor, parse_edits
from plan07.ab.faults import FaultConfig, plan_faults
from plan07.ab.generator import generate_task
from plan07.ab.tokens import count_tokens
from plan07.errors import InputError


@pytest.mark.parametrize(("text", "n"), [
    ("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("f(x, y)", 6), ("  \n\t", 0),
    ("digits=2", 4), ("self.config.timeout", 7),
])
def test_tokenizer_estimate(text: str, n: int) -> None:
    assert count_tokens(text) == n


def test_fault_plan_is_a_function_of_seed_task_and_obligation() -> None:
    t = generate_task(4, 2, size=20)
    kinds = [(s.id, sorted(s.faults)) for s in t.steps]
    a = plan_faults(9, t.id, kinds, FaultConfig(p_first=0.5))
    assert a == plan_faults(9, t.id, list(reversed(kinds)), FaultConfig(p_first=0.5))
    assert a
    assert a != plan_faults(10, t.id, kinds, FaultConfig(p_first=0.5))
    assert plan_faults(9, t.id, kinds, FaultConfig(enabled=False)) == {}
    for oid, f in a.items():
        assert f.kind in t.step(oid).faults


def test_scripted_hits_the_same_obligation_attempts_whatever_the_asking_order() -> None:
    t = generate_task(4, 2, size=20)
    cfg = FaultConfig(p_first=0.5, p_again=0.5)
    ids = [s.id for s in t.steps]
    one, two = ScriptedExecutor(1, cfg), ScriptedExecutor(1, cfg)
    one.start(t)
    two.start(t)
    hits_all_at_once = one.call("ctx", ids).faults + one.call("ctx", ids).faults
    hits_one_by_one = [h for _ in range(2) for o in reversed(ids)
                       for h in two.call("ctx", [o]).faults]
    assert sorted(hits_all_at_once) == sorted(hits_one_by_one)
    assert hits_all_at_once


def test_scripted_tokens_are_context_plus_reply() -> None:
    t = generate_task(4, 2, size=6)
    ex = ScriptedExecutor(1, FaultConfig(enabled=False))
    ex.start(t)
    s = next(s for s in t.steps if s.edit)
    r = ex.call("the context", [s.id])
    assert r.edits == [s.edit]
    assert r.prompt_tokens == count_tokens(SYSTEM) + count_tokens("the context")
    assert r.completion_tokens == count_tokens(r.text)


def test_forcing_an_inapplicable_fault_is_refused() -> None:
    t = generate_task(4, 2, size=6)
    plain = next(s for s in t.steps if "wrong_consumer" not in s.faults)
    ex = ScriptedExecutor(1, FaultConfig(force=((plain.id, "wrong_consumer", 1),)))
    with pytest.raises(InputError, match="does not apply"):
        ex.start(t)


def test_edit_format_round_trips() -> None:
    edits = [Edit("a/b.py", "x = 1\n", "x = 2\n"), Edit("c.py", None, "print('hi')\n"),
             Edit("d.py", "f(a)", "f(a, b=1)")]
    text = "Here you go:\n" + "".join(e.render() for e in edits) + "done\n"
    assert parse_edits(text) == edits


@pytest.mark.parametrize("spec", ["gpt", "openai:", "scripted:x", "builtin"])
def test_unknown_executor_is_refused(spec: str) -> None:
    with pytest.raises(InputError, match="unknown executor"):
        make_executor(spec, seed=0)


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    reply = Edit("pkg/m.py", "a = 1", "a = 2").render()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "body": body})
            out = json.dumps({
                "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=httpd.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()


def test_openai_executor_against_a_local_server(server: tuple[str, list[dict[str, Any]]]) -> None:
    url, seen = server
    ex = OpenAIExecutor("tiny-model", base_url=url, api_key="k")
    r = ex.call("## do\nchange a", ["O1"])
    assert r.edits == [Edit("pkg/m.py", "a = 1", "a = 2")]
    assert (r.prompt_tokens, r.completion_tokens) == (321, 12)  # usage from the API
    (req,) = seen
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["model"] == "tiny-model"
    assert req["body"]["temperature"] == 0
    assert req["body"]["messages"][1]["content"] == "## do\nchange a"
