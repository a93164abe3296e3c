"""Warm checks (plan07.gate.warmcheck): from a process's second check of the default pytest command
on, the check is a child forked from a server that imported pytest once. It must be what a fresh
`python -m pytest` process was (path, argv, environment, modules, fds, session), give the same
outcomes and output, die on timeout and with plan07, and never be used where it could differ
(the first check, a relative PYTHONPATH, a server holding the repo's own modules). Real pytest
runs on small repos built here."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plan07.gate import warmcheck
from plan07.gate.interpreter import Interpreter
from plan07.gate.runner import run_tests
from plan07.gate.testcommand import TestCommand
from plan07.sandbox import check_env

OWN = Interpreter(sys.executable, "plan07")

DUMP = '''\
import json, os, sys

def test_dump():
    out = os.environ["WARM_DUMP"]
    with open(os.path.join(out, "%d.json" % os.getpid()), "w") as f:
        json.dump({"path": sys.path, "argv": sys.argv, "orig": sys.orig_argv, "cwd": os.getcwd(),
                   "env": dict(os.environ), "modules": sorted(sys.modules),
                   "main": sorted(vars(sys.modules["__main__"])),
                   "main_file": sys.modules["__main__"].__file__,
                   "fds": sorted(os.listdir("/proc/self/fd")),
                   "stdio": [(s.line_buffering, s.encoding, s.errors, s.isatty())
                             for s in (sys.stdin, sys.stdout, sys.stderr)],
                   "leader": os.getsid(0) == os.getpid() == os.getpgid(0),
                   "flags": repr(sys.flags), "ppid": os.getppid()}, f)
'''

KINDS = '''\
import pytest

def test_pass():
    print("out")

def test_fail():
    assert 1 == 2, "one is not two"

@pytest.mark.skip(reason="no")
def test_skip():
    pass

@pytest.mark.xfail(reason="known", strict=True)
def test_xfail():
    assert False

def test_error(nope_fixture):
    pass
'''


@pytest.fixture(autouse=True)
def _fresh_servers() -> Iterator[None]:
    warmcheck.close_all()  # each test counts its own checks from one
    yield
    warmcheck.close_all()


def _repo(root: Path, files: dict[str, str]) -> Path:
    repo = root / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    return repo


def _env(**extra: str) -> dict[str, str]:
    env = {**check_env(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **extra}
    if "PYTHONPATH" not in extra:  # this session's own (relative, say) is not the test's
        env.pop("PYTHONPATH", None)
    return env


def _servers() -> list[int]:
    return [s.proc.pid for s in warmcheck._servers.values()]


def test_a_warm_check_is_what_a_fresh_process_was(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"tests/test_dump.py": DUMP})
    out = tmp_path / "dumps"
    out.mkdir()
    env = _env(WARM_DUMP=str(out))
    for _ in range(3):
        run = run_tests(TestCommand(), OWN, repo, ["tests"], timeout=60, env=env)
        assert run.rc == 0, run.output
    assert len(_servers()) == 1  # the first check ran fresh, the next two in its children
    server = _servers()[0]
    dumps = sorted((json.loads(p.read_text()) for p in out.iterdir()),
                   key=lambda d: d["ppid"] == server)
    fresh, warm = dumps[0], dumps[1:]
    assert fresh["ppid"] not in (os.getpid(), server)  # its supervisor (plan07.gate.supervisor)
    assert [d["ppid"] for d in warm] == [server, server]
    marks = {d["env"].pop("PLAN07_CHECK") for d in dumps}  # type: ignore[attr-defined]
    assert len(marks) == 3  # one per check: what a later plan07 finds its processes by

    def same(d: dict[str, object]) -> dict[str, object]:
        tmp = next(p for p in d["path"] if "plan07-junit-" in p)  # type: ignore[attr-defined]
        text = json.dumps({k: v for k, v in d.items() if k != "ppid"}).replace(tmp, "TMP")
        return json.loads(text)  # type: ignore[no-any-return]

    assert same(fresh)["path"][:2] == [str(repo.resolve() / "tests"), str(repo.resolve())]
    assert same(fresh)["path"][2] == "TMP"  # the outcome plugin's folder, from PYTHONPATH
    assert fresh["leader"] is True
    for d in warm:
        assert same(d) == same(fresh)


def test_a_warm_check_gives_the_outcomes_and_output_of_a_fresh_one(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"tests/test_kinds.py": KINDS})
    runs = [run_tests(TestCommand(), OWN, repo, ["tests"], timeout=60, env=_env())
            for _ in range(2)]
    assert _servers()
    fresh, warm = runs
    assert fresh.rc == warm.rc == 1
    assert fresh.outcomes == warm.outcomes
    assert {k: o.status for k, o in (warm.outcomes or {}).items()} == {
        "tests/test_kinds.py::test_pass": "passed", "tests/test_kinds.py::test_fail": "failed",
        "tests/test_kinds.py::test_skip": "skipped", "tests/test_kinds.py::test_xfail": "xfailed",
        "tests/test_kinds.py::test_error": "error"}

    def untimed(text: str) -> str:
        import re

        return re.sub(r"in [0-9.]+s", "in Ns", text)

    assert untimed(warm.output) == untimed(fresh.output)


SLEEPER = '''\
import os, subprocess, sys, time

def test_sleep():
    kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(os.environ["WARM_PIDS"], "a") as f:
        f.write("%d %d\\n" % (os.getpid(), kid.pid))
    time.sleep(60)
'''


def _alive(pid: int) -> bool:
    try:
        with Path(f"/proc/{pid}/stat").open() as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone(pids: list[int], within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_a_warm_check_past_its_timeout_is_killed_with_its_group(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"tests/test_sleep.py": SLEEPER, "tests/test_ok.py":
                            "def test_ok():\n    pass\n"})
    pids = tmp_path / "pids"
    env = _env(WARM_PIDS=str(pids))
    assert run_tests(TestCommand(), OWN, repo, ["tests/test_ok.py"], timeout=60, env=env).rc == 0
    run = run_tests(TestCommand(), OWN, repo, ["tests/test_sleep.py"], timeout=1.5, env=env)
    assert run.timed_out
    assert "check timed out after 1.5s" in run.output
    assert _servers()
    assert _gone([int(p) for p in pids.read_text().split()])  # the check and its own child
    # the server goes on serving
    again = run_tests(TestCommand(), OWN, repo, ["tests/test_ok.py"], timeout=60, env=env)
    assert again.rc == 0
    assert again.outcomes is not None
    assert _servers()


def test_killing_plan07_kills_its_warm_check_and_the_server(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"tests/test_sleep.py": SLEEPER, "tests/test_ok.py":
                            "def test_ok():\n    pass\n"})
    pids, server = tmp_path / "pids", tmp_path / "server"
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from plan07.gate import warmcheck
        from plan07.gate.interpreter import Interpreter
        from plan07.gate.runner import run_tests
        from plan07.gate.testcommand import TestCommand
        own, repo, env = Interpreter(sys.executable, "plan07"), Path({str(repo)!r}), {_env(
            WARM_PIDS=str(pids))!r}
        run_tests(TestCommand(), own, repo, ["tests/test_ok.py"], timeout=60, env=env)
        run_tests(TestCommand(), own, repo, ["tests/test_ok.py"], timeout=60, env=env)
        Path({str(server)!r}).write_text(str(next(iter(warmcheck._servers.values())).proc.pid))
        run_tests(TestCommand(), own, repo, ["tests/test_sleep.py"], timeout=60, env=env)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        end = time.monotonic() + 60
        while not (pids.exists() and pids.read_text().count("\n") == 1):
            assert time.monotonic() < end
            assert proc.poll() is None
            time.sleep(0.05)
        check, kid = (int(p) for p in pids.read_text().split())
        assert _alive(check)
        assert _alive(int(server.read_text()))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert _gone([check, kid, int(server.read_text())])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_first_check_and_a_relative_pythonpath_run_fresh(tmp_path: Path) -> None:
    env = _env(PYTHONPATH=f"/tmp/plugin{os.pathsep}/abs/lib")
    assert warmcheck.server_for(sys.executable, env, "/tmp/plugin", str(tmp_path)) is None
    assert not _servers()  # a process with one check starts no server
    rel = _env(PYTHONPATH=f"/tmp/plugin{os.pathsep}lib")
    for _ in range(3):
        assert warmcheck.server_for(sys.executable, rel, "/tmp/plugin", str(tmp_path)) is None
    assert not _servers()
    srv = warmcheck.server_for(sys.executable, env, "/tmp/plugin", str(tmp_path))
    assert srv is not None
    assert srv.ok
    environ = Path(f"/proc/{srv.proc.pid}/environ").read_bytes().split(b"\0")
    assert b"PYTHONPATH=/abs/lib" in environ  # the user's, without the run's plugin folder


def test_warm_checks_off_runs_every_check_fresh(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, {"tests/test_ok.py": "def test_ok():\n    pass\n"})
    monkeypatch.setenv("PLAN07_WARM_CHECKS", "off")
    runs = [run_tests(TestCommand(), OWN, repo, ["tests"], timeout=60, env=_env())
            for _ in range(3)]
    assert all(r.rc == 0 for r in runs)
    assert not _servers()  # the third check would have had one
    monkeypatch.delenv("PLAN07_WARM_CHECKS")
    for _ in range(2):  # the switch's checks were not counted: a second check gets its server
        assert run_tests(TestCommand(), OWN, repo, ["tests"], timeout=60, env=_env()).rc == 0
    assert _servers()  # the switch, not the repo, kept them fresh


def test_a_server_holding_a_module_of_the_repo_never_serves_it(tmp_path: Path) -> None:
    env = _env()
    warmcheck.server_for(sys.executable, env, "", str(tmp_path))
    srv = warmcheck.server_for(sys.executable, env, "", str(tmp_path))
    assert srv is not None
    pytest_dir = Path(pytest.__file__).resolve().parent.parent  # a repo that is pytest itself
    assert any(f.startswith(str(pytest_dir) + "/") for f in srv.files)
    assert warmcheck.server_for(sys.executable, env, "", str(pytest_dir)) is None
    assert srv.serves(str(tmp_path))
    assert not srv.serves(str(pytest_dir))


def test_an_interpreter_without_pytest_gets_no_server_and_runs_fresh(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    repo = _repo(tmp_path, {"tests/test_ok.py": "def test_ok():\n    pass\n"})
    bare = Interpreter(str(venv / "bin" / "python"), "--python")
    runs = [run_tests(TestCommand(), bare, repo, ["tests"], timeout=60, env=_env())
            for _ in range(3)]
    assert all(r.rc == 1 and "No module named pytest" in r.output for r in runs)
    assert not _servers()
    assert len(warmcheck._failed) == 1  # tried once, at the second check; never again


def test_checks_from_two_threads_each_get_their_own_outcomes(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    repos = [_repo(tmp_path / str(i), {f"tests/test_t{i}.py": f"def test_{i}():\n"
                                       f"    assert {i} % 2 == 0\n"}) for i in range(4)]
    run_tests(TestCommand(), OWN, repos[0], ["tests"], timeout=60, env=_env())  # fresh, first
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda r: run_tests(TestCommand(), OWN, r, ["tests"], timeout=60,
                                                 env=_env()), repos * 2))
    assert len(_servers()) == 1
    for i, run in enumerate(runs):
        n = i % 4
        assert run.rc == n % 2
        assert {k: o.status for k, o in (run.outcomes or {}).items()} == {
            f"tests/test_t{n}.py::test_{n}": "passed" if n % 2 == 0 else "failed"}
