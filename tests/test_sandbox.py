"""Secrets and the check's environment (issue 15, plan07.sandbox): an allowlisted environment, no
credential in any printed or stored output, none readable from /proc/<ppid>/environ, and a check
that dies with plan07."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _smallplan import CLI, cli, cli_env, cli_here, make_repo, ob, plan_here, write_replay

from plan07 import sandbox
from plan07.gate.grammar import check_env

SECRETS = {
    "GITHUB_TOKEN": "ghp_" + "A1b2C3d4" * 5,
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "HF_TOKEN": "hf_" + "Zz9" * 10,
    "OPENAI_KEY": "openai-key-0123456789",
    "PLAN07_LLM_API_KEY": "llm-key-abcdef987654",
    "DB_PASSWORD": "hunter2hunter2",
    "MY_SERVICE_SECRET_V2": "s3cr3t-value-xyz",
}
URL = "http://alice:pa55word-xyz@127.0.0.1:9/v1?api_key=qk-123456789"
URL_SECRETS = ["pa55word-xyz", "qk-123456789"]


def all_secret_values() -> list[str]:
    return [*SECRETS.values(), *URL_SECRETS]


def test_only_the_allowlist_reaches_a_check(tmp_path: Path) -> None:
    base = {"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C",
            "TMPDIR": "/tmp", "VIRTUAL_ENV": "/v", "PYTEST_ADDOPTS": "-q", "RANDOM_VAR": "x",
            "AWS_PROFILE": "prod", "DJANGO_SETTINGS_MODULE": "app.settings", "APP_MODE": "t",
            "APP_TOKEN": "tok-1234567", "PLAN07_LLM_BASE_URL": URL, "HTTPS_PROXY": URL,
            **SECRETS}
    env = check_env(base)
    assert set(env) == {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV",
                        "PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE"}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.plan07]\ncheck-env = ["DJANGO_SETTINGS_MODULE", "APP_*", "GITHUB_TOKEN"]\n')
    env = check_env(base, repo=tmp_path)
    # the repo's own names pass; a credential never does, even when the repo asks for it
    assert {"DJANGO_SETTINGS_MODULE", "APP_MODE"} <= set(env)
    assert not {"APP_TOKEN", "GITHUB_TOKEN"} & set(env)


@pytest.mark.parametrize("name", [*SECRETS, "SSH_PRIVATE_KEY", "SENTRY_DSN", "NPM_AUTH",
                                  "GH_PAT", "KAGGLE_KEY", "ANTHROPIC_API_KEY"])
def test_credential_names(name: str) -> None:
    assert sandbox.is_secret_name(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "LANG", "PYTHONHASHSEED", "VIRTUAL_ENV",
                                  "SSH_AUTH_SOCK", "TERM"])
def test_not_credential_names(name: str) -> None:
    assert not sandbox.is_secret_name(name)


def test_redact_covers_values_urls_headers_and_token_shapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("PLAN07_LLM_BASE_URL", URL)
    text = " ".join(all_secret_values()) + f" {URL} Authorization: Bearer tk9876543210abc " \
        "postgres://bob:pw@db/x sk-" + "q" * 30
    out = sandbox.redact(text)
    for v in [*all_secret_values(), "tk9876543210abc", "bob:pw", "sk-" + "q" * 30]:
        assert v not in out
    # in JSON form too (a quote or backslash in a value is escaped there)
    monkeypatch.setenv("ODD_SECRET", 'a"b\\c-123456')
    assert 'a\\"b\\\\c-123456' not in sandbox.redact(json.dumps({"x": 'a"b\\c-123456'}))
    # plain prose is left alone
    prose = "retry-token cost 894.9 tokens; basic consumers; token estimates; KEY=1"
    assert sandbox.redact(prose) == prose


@pytest.mark.parametrize(("text", "secret"), [
    ("see https://bob:pw9@example.org/x", "bob:pw9"),
    ("Basic dXNlcjpwYXNzd29yZDEy", "dXNlcjpwYXNzd29yZDEy"),
    ("bearer abc.def-1234567890", "abc.def-1234567890"),
    ("aUtHoRiZaTiOn: zzz123secret", "zzz123secret"),
    ("X-API-KEY = k3y-v4lue", "k3y-v4lue"),
    *[(f"[{p}{'A1b2C3d4' * 3}]", f"{p}{'A1b2C3d4' * 3}")
      for p in ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "xoxb-",
                "glpat-")],
    ("AKIA" + "ABCDEFGH12345678", "AKIA" + "ABCDEFGH12345678"),
])
def test_redact_each_shape_alone(text: str, secret: str) -> None:
    # each pattern runs only where its literal occurs: alone in a text, each is still found
    assert secret not in sandbox.redact(text)
    assert secret not in sandbox.redact("x" * 5000 + " " + text)


LEAK_TEST = '''
import os, pathlib
LEAKED = pathlib.Path(__file__).resolve().parents[2] / "leak.txt"

def seen(pid):
    env = pathlib.Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "replace")
    try:
        mem = "readable" if open(f"/proc/{pid}/mem", "rb") else ""
    except OSError as exc:
        mem = f"refused {exc.errno}"
    return env + "\\n" + mem


def test_leak():
    me = dict(os.environ)
    # the parent is the check's supervisor (its environment is the check's), plan07 above it
    sup = os.getppid()
    plan07 = int(pathlib.Path(f"/proc/{sup}/stat").read_text().rsplit(")", 1)[1].split()[1])
    LEAKED.write_text(repr(me) + "\\n" + seen(sup) + "\\n" + seen(plan07))
    print("printing a key the repo knows:", KNOWN)
    assert False, "fail on purpose so complete prints the output"

KNOWN = "%s"
'''


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_no_credential_reaches_a_check_its_parent_or_any_output(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files={
        "tests/test_leak.py": LEAK_TEST % SECRETS["GITHUB_TOKEN"]})
    write_replay(tmp_path, [ob("O1", "tests/test_leak.py::test_leak", "validate", [],
                               "tests/test_leak.py::test_leak")])
    env = cli_env({**SECRETS, "PLAN07_LLM_BASE_URL": URL})
    state = tmp_path / "state"
    assert plan_here(tmp_path, state, repo, env=env).returncode == 0
    assert cli("next", "--state", str(state), env=env).returncode == 0
    done = cli("complete", "O1", "--state", str(state), env=env)
    assert done.returncode == 1, done.stderr
    leaked = (tmp_path / "leak.txt").read_text()
    assert "PATH" in leaked
    assert "x" * 12 in leaked  # plan07's own environment block, its credentials overwritten
    stored = "".join(p.read_text("utf-8", "replace") for p in state.rglob("*") if p.is_file())
    for value in all_secret_values():
        assert value not in leaked, "a credential reached the check or its parent's environ"
        assert value not in done.stdout + done.stderr
        assert value not in stored
    assert "[redacted]" in done.stdout  # the key the repo printed
    audit = cli("audit", "--json", "--state", str(state), env=env)
    assert not any(v in audit.stdout for v in all_secret_values())


def test_a_credential_in_the_model_url_is_not_printed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "request.md").write_text("Make f configurable.\n")
    env = cli_env({"PLAN07_LLM_BASE_URL": "http://alice:pa55word-xyz@127.0.0.1:9/v1",
                   "PLAN07_LLM_API_KEY": SECRETS["PLAN07_LLM_API_KEY"],
                   "PLAN07_LLM_TIMEOUT": "2"})
    res = cli("plan", str(tmp_path / "request.md"), "--repo", str(repo), "--llm", "openai:m",
              "--state", str(tmp_path / "s"), env=env)
    assert res.returncode == 2
    assert res.stderr.startswith("error: ")
    assert res.stderr.count("\n") == 1
    assert "pa55word-xyz" not in res.stderr
    assert "alice" not in res.stderr
    assert not (tmp_path / "s").exists()


def test_a_killed_complete_does_not_leave_its_check_running(tmp_path: Path) -> None:
    started, marker = tmp_path / "started", tmp_path / "still-running"
    armed = tmp_path / "armed"  # the CP0 baseline runs the test unarmed: no 3 s wait there
    repo = make_repo(tmp_path, files={"tests/test_slow.py": (
        "import os, time, pathlib\n\n\ndef test_slow():\n"
        f"    pathlib.Path({str(started)!r} + '.tmp').write_text(str(os.getpid()))\n"
        f"    os.replace({str(started)!r} + '.tmp', {str(started)!r})\n"
        f"    time.sleep(3 if pathlib.Path({str(armed)!r}).exists() else 0)\n"
        f"    pathlib.Path({str(marker)!r}).write_text('alive')\n")})
    write_replay(tmp_path, [ob("O1", "tests/test_slow.py::test_slow", "validate", [],
                               "tests/test_slow.py::test_slow")])
    state = tmp_path / "state"
    assert plan_here(tmp_path, state, repo, process=False).returncode == 0
    assert marker.exists(), "the CP0 baseline did not run the test to its end (issue 11)"
    started.unlink()
    marker.unlink()
    armed.write_text("")
    assert cli_here("next", "--state", str(state)).returncode == 0
    proc = subprocess.Popen([*CLI, "complete", "O1", "--state", str(state)], env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not started.exists():
        time.sleep(0.05)
    assert started.exists(), "the check never started"
    check = int(started.read_text())  # the check's own pid (written whole, then renamed)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # wait for the check to be gone, not a fixed time: a check that outlived plan07 would
    # write the marker after its 3 s and end, or still run at the deadline
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _running(check):
        time.sleep(0.05)
    assert not _running(check), "the check outlived the complete that started it"
    assert not marker.exists(), "the check outlived the complete that started it"


def _running(pid: int) -> bool:
    """`pid` is a live process (a zombie, dead but not yet reaped, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_the_interpreter_running_plan07_is_untouched_for_its_own_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`shield` scrubs the environment block and libc's environ, never os.environ (the model
    client reads its key from there after the check ran)."""
    code = ("import os; from plan07 import sandbox; sandbox.shield(); "
            "print(os.environ['MY_API_KEY']); "
            "print(open('/proc/self/environ','rb').read().count(b'k-0123456789'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "MY_API_KEY": "k-0123456789"}, check=True).stdout
    assert out.split() == ["k-0123456789", "0"]


@pytest.mark.skipif(sandbox._libc() is None, reason="needs Linux libc prctl")
def test_plan07_is_not_dumpable_while_a_check_runs() -> None:
    libc = sandbox._libc()
    assert libc.prctl(sandbox.PR_GET_DUMPABLE, 0, 0, 0, 0) == 1
    with sandbox.undumpable():
        assert libc.prctl(sandbox.PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    assert libc.prctl(sandbox.PR_GET_DUMPABLE, 0, 0, 0, 0) == 1


def test_environ_sets_for_the_block_and_restores_or_removes_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from plan07.sandbox import environ

    monkeypatch.setenv("PLAN07_T_KEPT", "old")
    monkeypatch.delenv("PLAN07_T_NEW", raising=False)
    seen: dict[str, str] = {}

    def fail_inside() -> None:
        with environ({"PLAN07_T_KEPT": "new", "PLAN07_T_NEW": "1"}):
            seen.update(os.environ)
            raise RuntimeError  # restored on the way out of a failing block too

    with pytest.raises(RuntimeError):
        fail_inside()
    assert (seen["PLAN07_T_KEPT"], seen["PLAN07_T_NEW"]) == ("new", "1")
    assert os.environ["PLAN07_T_KEPT"] == "old"
    assert "PLAN07_T_NEW" not in os.environ
