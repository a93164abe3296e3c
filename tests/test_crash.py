"""Crash consistency and concurrency (issue 15): plan07 SIGKILLed at write-syscall boundaries of
`plan`, `complete`, `rollback` and `feedback` loses nothing (tests/_faultsweep.py says what is
checked), and a verdict whose hand-out a concurrent `resume` replaced is never recorded.

The sweep here is a representative subset: every rename (each file's commit point) of each
command, and two more boundaries of `complete`. benchmarks/crash_sweep.py kills at
every boundary and writes its report. Skipped, with the reason, where strace is absent or may not
trace (CI machines without it: the skip says so)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

import pytest
from _faultsweep import COMMANDS, count, points, prepare, run_point, strace_works
from _smallplan import CLI, cli, cli_env, cli_here, make_repo, ob, plan_here, write_replay

from plan07.api import Planner
from plan07.errors import PlanStateError
from plan07.store import state as st

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

needs_strace = pytest.mark.skipif(
    not strace_works(), reason="strace is not installed (or may not ptrace here); "
    "the kill sweep needs it: apt-get install strace")


def subset(command: str, all_points: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Every rename (each file's commit point: plan.json, its stamp, a checkpoint record), and for
    `complete` also its first `write` and `unlinkat` (the record's body, the temp index)."""
    out = [(name, n) for name, n in all_points if name.startswith("rename")]
    if command == "complete":
        out += [p for p in all_points if p in (("write", 1), ("unlinkat", 1))]
    return out


@needs_strace
@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_a_kill_at_a_write_boundary_loses_nothing(command: str, tmp_path: Path) -> None:
    sc = prepare(tmp_path, command)
    calls = count(sc, tmp_path / "trace.log")
    assert calls["rename"] + calls["renameat"] + calls["renameat2"] >= 1, calls
    chosen = subset(command, points(calls))
    outcomes = [run_point(sc, name, n) for name, n in chosen]
    bad = [f"{o.syscall}#{o.n}: {'; '.join(o.problems)}" for o in outcomes if not o.ok]
    assert not bad, "\n".join(bad)
    assert sum(o.killed for o in outcomes) >= len(outcomes) - 1  # the kills really happened


SLOW_TEST = """import pathlib, time


def test_slow():
    pathlib.Path({started!r}).write_text("go")
    release = pathlib.Path({started!r} + ".release")
    # unarmed (the CP0 baseline `plan` runs, issue 11) it waits only if `sleep` is short
    wait = {sleep} if pathlib.Path({started!r} + ".arm").exists() or {sleep} < 1 else 0
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and not release.exists():
        time.sleep(0.02)
"""


def test_a_verdict_after_a_concurrent_resume_is_discarded(tmp_path: Path) -> None:
    """complete O1 runs its check; meanwhile `resume` hands O1 out again (a new epoch). The old
    check's verdict must not land on the new hand-out: complete exits 2, plan.json unchanged by
    it, and the new hand-out completes once."""
    started = tmp_path / "started"
    repo = make_repo(tmp_path, files={
        "tests/test_slow.py": SLOW_TEST.format(started=str(started), sleep=60)})
    write_replay(tmp_path, [ob("O1", "tests/test_slow.py::test_slow", "validate", [],
                               "tests/test_slow.py::test_slow")])
    state = tmp_path / "state"
    assert plan_here(tmp_path, state, repo, process=False).returncode == 0
    started.unlink(missing_ok=True)  # the CP0 baseline ran the test, unarmed (issue 11)
    Path(str(started) + ".arm").write_text("")
    assert cli_here("next", "--state", str(state)).returncode == 0
    proc = subprocess.Popen([*CLI, "complete", "O1", "--state", str(state)], env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    epoch = st.load(state).epoch
    resumed = cli("resume", "--state", str(state))
    assert resumed.returncode == 0, resumed.stderr
    assert "O1" in resumed.stdout
    after_resume = (state / "plan.json").read_bytes()
    assert st.load(state).epoch == (epoch or 0) + 1
    Path(str(started) + ".release").write_text("go")  # now the old check may finish
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (out, err)
    assert "discarded" in err
    assert (state / "plan.json").read_bytes() == after_resume  # the stale verdict wrote nothing
    art = st.load(state)
    assert [n.state for n in art.nodes if n.id == "O1"] == ["pending"]
    assert art.active == "O1"
    # the new hand-out completes, once (its check is released at once)
    assert Planner(state).complete("O1").passed
    rows = st.full_audit(state, st.load(state))
    assert [r.event for r in rows if r.obligation == "O1"].count("passed") == 1


def test_complete_and_resume_racing_never_record_twice_or_stale(tmp_path: Path) -> None:
    """A few random interleavings of complete and resume: whatever order they land in, O1 is
    passed at most once per hand-out, and the plan always loads and completes."""
    started = tmp_path / "started"
    repo = make_repo(tmp_path, files={
        "tests/test_slow.py": SLOW_TEST.format(started=str(started), sleep=0.3)})
    write_replay(tmp_path, [ob("O1", "tests/test_slow.py::test_slow", "validate", [],
                               "tests/test_slow.py::test_slow")])
    state = tmp_path / "state"
    assert plan_here(tmp_path, state, repo, process=False).returncode == 0
    for delay in (0.0, 0.4, 0.9):
        planner = Planner(state)
        if planner.artifact.nodes[0].state == "complete":
            planner.rollback(to="CP0")
        planner.next()
        proc = subprocess.Popen([*CLI, "complete", "O1", "--state", str(state)], env=cli_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        with contextlib.suppress(PlanStateError):
            planner.resume()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 2), err
        art = st.load(state)
        handouts, passes = 0, 0
        for r in st.full_audit(state, art):
            if r.obligation == "O1" and r.event == "handed_out":
                handouts, passes = handouts + 1, 0
            elif r.obligation == "O1" and r.event == "passed":
                passes += 1
                assert passes == 1, "two verdicts recorded for one hand-out"
        assert handouts >= 1
    view = Planner(state).next()
    if view is not None and view.node_id == "O1":
        assert Planner(state).complete("O1").passed
    elif view is not None:  # O1 is done: the closing regression run, which a plan that changed
        verdict = Planner(state).complete(view.node_id)  # no file never passes (no false done)
        assert verdict.kind == "regression"
        assert not verdict.passed
        assert "changed no file" in verdict.output_tail


def test_no_temp_file_outlives_a_crashed_write(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write_replay(tmp_path)
    state = tmp_path / "state"
    assert plan_here(tmp_path, state, repo, process=False).returncode == 0
    (state / f".plan.json.{os.getpid() + 100000}.tmp").write_text("torn")
    (state / "checkpoints" / st.load(state).plan_id / ".CP0.1.json.99999.tmp").write_text("x")
    assert cli("next", "--state", str(state)).returncode == 0
    assert not list(state.rglob(".*.tmp"))
