"""Hostile input, as a table (issue 15): each case is one `error: ...` line on stderr, exit 2, no
traceback, and nothing written (the state dir's bytes and mtimes, and the repo's refs, as before).
Each runs the real CLI in its own process, so a hang (a FIFO) is caught by its timeout."""

from __future__ import annotations

import http.server
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _smallplan import cli, cli_env, cli_here, git, make_repo, plan_here, write_replay

from plan07.cli import main

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

DEEP_LIST = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 5000 + "1" + "}" * 5000


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A planned repo (O1 handed out) whose state dir is copied for each case."""
    root = tmp_path_factory.mktemp("world")
    repo = make_repo(root)
    write_replay(root)
    assert plan_here(root, root / "state", repo, process=False).returncode == 0
    assert cli_here("next", "--state", str(root / "state")).returncode == 0
    return root


def snapshot(*dirs: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for d in dirs:
        for p in sorted(d.rglob("*")) if d.exists() else []:
            if p.is_file() and not p.is_symlink():
                out[str(p)] = (p.read_bytes(), p.stat().st_mtime_ns)
    return out


class Case:
    def __init__(self, name: str, setup: Callable[[Path, Path], list[str]],
                 env: dict[str, str] | None = None, match: str = "") -> None:
        self.name, self.setup, self.env, self.match = name, setup, env or {}, match

    def __repr__(self) -> str:
        return self.name


def _file(name: str, data: str | bytes) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        p = d / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return p
    return make


def _fifo(d: Path) -> Path:
    p = d / "fifo"
    os.mkfifo(p)
    return p


def plan_args(w: Path, s: Path, *extra: str, request: str | None = None) -> list[str]:
    return ["plan", request or str(w / "request.md"), "--repo", str(w / "repo"), "--llm",
            f"replay:{w / 'completion.json'}", "--state", str(s), *extra]


def _deep_plan(w: Path, s: Path) -> list[str]:
    (s / "plan.json").write_text(DEEP_OBJECT)
    return ["status", "--state", str(s)]


def _lock_dir(w: Path, s: Path) -> list[str]:
    (s / "plan.lock").unlink()
    (s / "plan.lock").mkdir()
    return ["next", "--state", str(s)]


def _plan_json_fifo(w: Path, s: Path) -> list[str]:
    (s / "plan.json").unlink()
    os.mkfifo(s / "plan.json")
    return ["next", "--state", str(s)]


CASES = [
    Case("deep-evidence", lambda w, s: plan_args(
        w, s, "--evidence", str(_file("deep.json", DEEP_LIST)(w.parent))), match="nested"),
    Case("deep-feedback", lambda w, s: [
        "feedback", str(_file("fb.json", DEEP_OBJECT)(w.parent)), "--state", str(s)],
        match="nested"),
    Case("deep-plan-json", _deep_plan, match="nested"),
    Case("deep-model-output", lambda w, s: plan_args(
        w, s, "--llm", "replay:" + str(_file("deep-replay.json", DEEP_LIST)(w.parent)),
        "--evidence", str(w / "evidence.json")), match=""),
    Case("lock-is-a-directory", _lock_dir, match="lock"),
    Case("plan-json-is-a-fifo", _plan_json_fifo, match="FIFO"),
    Case("non-sqlite-db-header", lambda w, s: plan_args(w, s, "--evidence", str(_file(
        "x.db", b"SQLite format 3\x00" + b"\x01" * 200)(w.parent))), match="recon.db"),
    Case("non-sqlite-db-garbage", lambda w, s: plan_args(w, s, "--evidence", str(_file(
        "y.db", b"\x00\xff garbage")(w.parent))), match=""),
    Case("binary-rule-file", lambda w, s: plan_args(w, s, "--evidence", str(w / "evidence.json")),
         env={"PLAN07_RULES": "{parent}/bin.dl"}, match="not UTF-8"),
    Case("binary-rule-file-order", lambda w, s: [
        "order", "--obligations", str(w / "completion.json"), "--rules",
        str(_file("bin2.dl", bytes(range(256)))(w.parent))], match="not UTF-8"),
    Case("timeout-1e300", lambda w, s: ["complete", "O1", "--timeout", "1e300", "--state",
                                         str(s)], match="timeout"),
    Case("timeout-nan", lambda w, s: ["complete", "O1", "--timeout", "nan", "--state", str(s)],
         match="timeout"),
    Case("timeout-negative", lambda w, s: ["complete", "O1", "--timeout", "-1", "--state",
                                            str(s)], match="timeout"),
    Case("complete-unknown-node", lambda w, s: ["complete", "O9", "--state", str(s)],
         match="no obligation"),
    Case("complete-not-handed-out", lambda w, s: ["complete", "O2", "--state", str(s)],
         match="O2"),
    Case("complete-huge-id", lambda w, s: ["complete", "O" * 100_000, "--state", str(s)],
         match="obligation"),
    Case("request-fifo", lambda w, s: plan_args(w, s, request=str(_fifo(w.parent))),
         match="FIFO"),
    Case("evidence-fifo", lambda w, s: plan_args(w, s, "--evidence", str(_fifo(w.parent))),
         match="FIFO"),
    Case("feedback-fifo", lambda w, s: ["feedback", str(_fifo(w.parent)), "--state", str(s)],
         match="FIFO"),
    Case("task-file-fifo", lambda w, s: plan_args(w, s, "--task-file", str(_fifo(w.parent))),
         match="FIFO"),
    Case("request-directory", lambda w, s: plan_args(w, s, request=str(w.parent)),
         match="directory"),
    Case("request-binary", lambda w, s: plan_args(
        w, s, request=str(_file("req.bin", b"\xff\xfe\x00binary")(w.parent))), match="UTF-8"),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_hostile_input_is_one_error_line_exit_2_and_nothing_written(
    case: Case, world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In-process (fast); the cases that could hang (a FIFO) run in their own process, under a
    timeout."""
    w = tmp_path / "w"
    shutil.copytree(world, w, symlinks=True)
    state = w / "state"
    # the copied state points at the world's repo (never written by a refused command)
    (tmp_path / "bin.dl").write_bytes(bytes(range(256)) * 4)
    args = case.setup(w, state)
    env = {k: v.format(parent=tmp_path) for k, v in case.env.items()}
    refs = git(world / "repo", "for-each-ref")
    before = snapshot(state, world / "repo")
    if "fifo" in case.name:
        res = cli(*args, env=cli_env(env), timeout=60)
        rc, err = res.returncode, res.stderr
    else:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        rc = main(args)
        err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    assert len(err) <= 1100
    assert case.match in err
    assert snapshot(state, world / "repo") == before
    assert git(world / "repo", "for-each-ref") == refs


def test_a_non_ascii_stamp_only_costs_the_schema_pass(world: Path, tmp_path: Path) -> None:
    shutil.copytree(world / "state", tmp_path / "s")
    (tmp_path / "s" / "plan.json.sha256").write_bytes("\xff\xfe é ✓".encode())
    res = cli_here("status", "--state", str(tmp_path / "s"))
    assert res.returncode == 0, res.stderr


class _Reply(http.server.BaseHTTPRequestHandler):
    body = b""
    ctype = "text/html"

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", self.ctype)
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[Callable[[bytes, str], str]]:
    servers = []

    def serve(body: bytes, ctype: str) -> str:
        handler = type("H", (_Reply,), {"body": body, "ctype": ctype})
        srv = http.server.HTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_port}/v1"

    yield serve
    for s in servers:
        s.shutdown()


@pytest.mark.parametrize(("body", "ctype"), [
    (b"<html>maintenance</html>", "text/html"),
    (b'{"choices": 5}', "application/json"),
    (b"[1, 2", "application/json"),
])
def test_a_non_json_200_from_the_model_is_one_error_line(
    body: bytes, ctype: str, endpoint: Callable[[bytes, str], str], world: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In-process, as the cases above (the model's endpoint is a thread of this process)."""
    for k, v in {"PLAN07_LLM_BASE_URL": endpoint(body, ctype), "PLAN07_LLM_API_KEY": "k-1",
                 "PLAN07_LLM_TIMEOUT": "5"}.items():
        monkeypatch.setenv(k, v)
    res = cli_here("plan", str(world / "request.md"), "--repo", str(world / "repo"),
                   "--evidence", str(world / "evidence.json"), "--llm", "openai:m", "--state",
                   str(tmp_path / "s"))
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error: ")
    assert res.stderr.count("\n") == 1
    assert not (tmp_path / "s").exists()
