"""A check's processes end with the check (docs/safety.md "A check ends with its processes"):
whatever a test starts (in its process group, in a session of its own, behind a double fork) is
gone when `complete` returns, when the CP0 baseline of `plan` ends, and when plan07 is killed with
SIGKILL during either; a check whose plan07 and supervisor were both killed is ended by the next
command (`resume`). A check's output is kept bounded as it streams. Real processes throughout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _probes import alive, spawn_world, survivors
from _smallplan import CLI, cli_env, plan_here

from plan07.api import Planner

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

def setup_plan(tmp_path: Path, *, plan: bool = True) -> tuple[Path, Path, Path]:
    repo, state, pids = spawn_world(tmp_path)
    if plan:
        assert plan_here(tmp_path, state, repo, process=False).returncode == 0
        assert survivors(pids, 0) == []  # the CP0 baseline ran the test: its helpers ended
        pids.unlink()
    return repo, state, pids


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*CLI, *args], env=cli_env(), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not (path.exists() and path.read_text().strip()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the check never started"
        time.sleep(0.05)


def test_what_a_passing_check_started_ends_with_it(tmp_path: Path) -> None:
    _, state, pids = setup_plan(tmp_path)
    planner = Planner.open(state)
    planner.next()
    assert planner.complete("O1").passed
    assert survivors(pids, 0) == []


@pytest.mark.slow
def test_killing_plan07_during_complete_ends_the_check_and_what_it_started(
        tmp_path: Path) -> None:
    _, state, pids = setup_plan(tmp_path)
    Planner.open(state).next()
    Path(f"{pids}.arm").write_text("")
    proc = start(tmp_path, "complete", "O1", "--state", str(state))
    wait_for(pids, proc)
    proc.kill()
    proc.communicate()
    assert survivors(pids) == []


@pytest.mark.slow
def test_killing_plan07_during_the_cp0_baseline_ends_it(tmp_path: Path) -> None:
    repo, state, pids = setup_plan(tmp_path, plan=False)
    Path(f"{pids}.arm").write_text("")
    proc = start(tmp_path, "plan", str(tmp_path / "request.md"), "--repo", str(repo),
                 "--evidence", str(tmp_path / "evidence.json"), "--llm",
                 f"replay:{tmp_path / 'completion.json'}", "--state", str(state))
    wait_for(pids, proc)
    proc.kill()
    proc.communicate()
    assert survivors(pids) == []
    assert not state.exists()  # nothing written: the plan was never committed


@pytest.mark.slow
def test_resume_ends_a_check_whose_plan07_and_supervisor_were_killed(tmp_path: Path) -> None:
    _, state, pids = setup_plan(tmp_path)
    Planner.open(state).next()
    Path(f"{pids}.arm").write_text("")
    proc = start(tmp_path, "complete", "O1", "--state", str(state))
    wait_for(pids, proc)
    sup = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text()
           .split()]
    for p in sup:  # stopped first: killed at once, it would end the check itself
        os.kill(p, signal.SIGSTOP)
    proc.kill()
    proc.communicate()
    for p in sup:
        os.kill(p, signal.SIGKILL)
    time.sleep(0.3)
    left = [int(p) for p in pids.read_text().split() if alive(int(p))]
    assert left  # the supervisor did not get to end them
    Planner.open(state).resume()
    assert survivors(pids) == []


def test_a_warm_check_ends_what_it_started(tmp_path: Path) -> None:
    from plan07.gate import warmcheck
    from plan07.gate.interpreter import Interpreter
    from plan07.gate.runner import run_tests
    from plan07.gate.testcommand import TestCommand
    from plan07.sandbox import check_env

    repo, _, pids = setup_plan(tmp_path, plan=False)
    env = {**check_env(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTHONPATH", None)
    own = Interpreter(sys.executable, "plan07")
    warmcheck.close_all()
    try:
        for _ in range(2):  # the second one is forked from the check server
            run = run_tests(TestCommand(), own, repo, ["tests"], timeout=60, env=env)
            assert run.rc == 0, run.output
            assert survivors(pids, 0) == []
        assert warmcheck._servers
    finally:
        warmcheck.close_all()


def test_a_checks_output_is_bounded_as_it_streams(tmp_path: Path) -> None:
    from plan07 import caps
    from plan07.gate.runner import run_argv

    code = ("import sys\nsys.stdout.write('begin')\n"
            "for _ in range(40):\n    sys.stdout.write('x' * (1 << 20))\n"
            "sys.stdout.write('end'); sys.exit(1)\n")
    rc, out = run_argv([sys.executable, "-c", code], tmp_path, 120, dict(os.environ))
    assert rc == 1
    assert out.startswith("begin")
    assert out.endswith("end")
    assert len(out) <= caps.CHECK_OUTPUT_MAX_BYTES + 100
    assert f"[plan07: {40 * (1 << 20) + 8 - caps.CHECK_OUTPUT_MAX_BYTES} bytes of output " \
           "left out]" in out
