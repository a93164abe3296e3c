"""Fault injection (issue 15): kill plan07 with SIGKILL at a write-syscall boundary of `plan`,
`complete`, `rollback` or `feedback` (strace's `-e inject=SYSCALL:signal=KILL:when=N`: the Nth
call of SYSCALL is never made), then check that nothing was lost: `status` loads the plan,
`resume` works, no checkpoint ref is left without its record (or a record without its ref), every
audit row written before the kill is still there, every complete node has its `passed` row and
every reached checkpoint its `checkpoint` row, no temp file is left, and the plan can then be
driven to its end with `next`/`complete`.

Shared by tests/test_crash.py (a representative subset) and benchmarks/crash_sweep.py (every
boundary). strace counts injections per syscall and per tracee, so a boundary is a
(syscall, N) pair; only plan07's own process is traced (git children run untraced).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from _smallplan import CLI, cli_env, cli_here, git, make_repo, plan_here, write_replay

WRITE_SYSCALLS = ("write", "pwrite64", "fsync", "fdatasync", "rename", "renameat", "renameat2",
                  "unlink", "unlinkat", "mkdir", "mkdirat", "ftruncate")
COMMANDS = ("plan", "complete", "rollback", "feedback")


def strace() -> str | None:
    return shutil.which("strace")


def strace_works() -> bool:
    """strace is installed and may trace here (a container may forbid ptrace)."""
    exe = strace()
    if exe is None:
        return False
    res = subprocess.run([exe, "-qq", "-o", "/dev/null", "-e", "trace=write", "true"],
                         capture_output=True, check=False)
    return res.returncode == 0


@dataclass
class Scenario:
    """A prepared state (template) and the command to kill, run on a fresh copy each time."""

    command: str
    template: Path
    work: Path
    args: list[str] = field(default_factory=list)

    def fresh(self) -> None:
        if self.work.exists():
            shutil.rmtree(self.work)
        shutil.copytree(self.template, self.work, symlinks=True)

    @property
    def state(self) -> Path:
        return self.work / "state"

    @property
    def repo(self) -> Path:
        return self.work / "repo"


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    if res.returncode != 0:
        raise AssertionError(f"setup failed: {res.args}\n{res.stdout}\n{res.stderr}")


def prepare(root: Path, command: str) -> Scenario:
    """The state each command is killed in. Built at `work` (plan.json names the repo by its
    absolute path), then kept as the template every point copies back to `work`. The setup
    commands run in this process (`cli_here`): only the killed command needs a process."""
    work = root / "work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    repo = make_repo(work)
    write_replay(work)
    state = work / "state"
    s = str(state)
    _ok(plan_here(work, state, repo, process=False))
    _ok(cli_here("next", "--state", s))
    args: list[str]
    if command == "plan":
        _ok(cli_here("complete", "O1", "--state", s))  # an older plan with CP0 and CP1 reached
        args = ["plan", str(work / "request.md"), "--repo", str(repo), "--evidence",
                str(work / "evidence.json"), "--llm", f"replay:{work / 'completion.json'}",
                "--state", s, "--replace"]
    elif command == "complete":
        (repo / "pkg" / "core.py").write_text("def f(x):\n    return x  # edited for O1\n")
        args = ["complete", "O1", "--state", s]
    elif command == "rollback":
        _ok(cli_here("complete", "O1", "--state", s))
        _ok(cli_here("next", "--state", s))
        (repo / "pkg" / "core.py").write_text("def f(x):\n    return x  # edited for O2\n")
        _ok(cli_here("complete", "O2", "--state", s))
        _ok(cli_here("next", "--state", s))
        (repo / "pkg" / "core.py").write_text("def f(x):\n    return x  # in flight for O3\n")
        args = ["rollback", "--to", "CP1", "--state", s]
    elif command == "feedback":
        _ok(cli_here("complete", "O1", "--state", s))
        fb = work / "feedback.json"
        fb.write_text(json.dumps({"caused_by": "O1", "falsified_obligations": ["O3"],
                                  "note": "the test already covers it"}))
        args = ["feedback", str(fb), "--state", s]
    else:
        raise ValueError(command)
    template = root / f"template-{command}"
    if template.exists():
        shutil.rmtree(template)
    shutil.copytree(work, template, symlinks=True)
    return Scenario(command, template, work, args)


def count(sc: Scenario, log: Path) -> Counter[str]:
    """How many calls of each write syscall the command makes, unkilled."""
    sc.fresh()
    exe = strace()
    assert exe is not None
    res = subprocess.run([exe, "-qq", "-o", str(log), "-e",
                          "trace=" + ",".join(WRITE_SYSCALLS), "--", *CLI, *sc.args],
                         capture_output=True, text=True, env=cli_env(), check=False)
    if res.returncode not in (0, 1):
        raise AssertionError(f"unkilled {sc.command} failed: {res.stderr}")
    calls: Counter[str] = Counter()
    for line in log.read_text().splitlines():
        name = line.split("(", 1)[0].strip()
        if name in WRITE_SYSCALLS:
            calls[name] += 1
    return calls


def points(calls: Counter[str]) -> list[tuple[str, int]]:
    return [(name, i) for name in sorted(calls) for i in range(1, calls[name] + 1)]


def audit_rows(state: Path) -> list[tuple[str, str, str, str]]:
    from plan07.store import state as st

    art = st.load(state)
    return [(r.obligation, r.event, r.trace, r.time) for r in st.full_audit(state, art)]


@dataclass
class Outcome:
    command: str
    syscall: str
    n: int
    killed: bool
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def run_point(sc: Scenario, syscall: str, n: int) -> Outcome:
    """Kill `sc.command` at call `n` of `syscall`, then check recovery (see the module doc)."""
    from plan07.api import Planner
    from plan07.plan.artifact import reached_checkpoints
    from plan07.store import records as records_mod
    from plan07.store import state as st

    sc.fresh()
    before = audit_rows(sc.state)
    exe = strace()
    assert exe is not None
    res = subprocess.run([exe, "-qq", "-o", "/dev/null", "-e", f"trace={syscall}", "-e",
                          f"inject={syscall}:signal=KILL:when={n}", "--", *CLI, *sc.args],
                         capture_output=True, text=True, env=cli_env(), check=False)
    killed = res.returncode in (-9, 137) or "SIGKILL" in res.stderr
    problems: list[str] = []

    def check(cond: bool, what: str) -> None:
        if not cond:
            problems.append(what)

    try:
        rc = _status(sc.state)
        check(rc in (0, 1), f"status exit {rc}")
        after = audit_rows(sc.state)
        check(after[: len(before)] == before or _same_plan_replaced(before, after),
              "audit rows written before the kill were lost")
        planner = Planner(sc.state)
        view = planner.resume()
        art = planner.artifact
        rows = st.full_audit(sc.state, art)
        events = {(r.obligation, r.event) for r in rows}
        for node in art.nodes:
            if node.state == "complete":
                check((node.id, "passed") in events, f"{node.id} complete without a passed row")
        for cp in reached_checkpoints(art):
            check((cp, "checkpoint") in events, f"{cp} reached without a checkpoint row")
        records = records_mod.reached(sc.state, art.plan_id, upto=art.checkpoint_seq)
        owned = {r.checkpoint.git_ref for r in records if r.checkpoint.git_ref}
        refs = set(git(sc.repo, "for-each-ref", "--format=%(refname)",
                       f"refs/plan07/{art.plan_id}/").split())
        check(refs <= owned, f"refs without a record: {sorted(refs - owned)}")
        check(owned <= refs, f"records without their ref: {sorted(owned - refs)}")
        others = [p.name for p in (sc.state / "checkpoints").iterdir()
                  if p.name != art.plan_id] if (sc.state / "checkpoints").is_dir() else []
        check(not others, f"records of other plans left: {others}")
        tmps = [p.name for p in sc.state.rglob(".*.tmp")]
        check(not tmps, f"temp files left: {tmps}")
        # one more next/complete: nothing blocks it (no orphan ref, no stale bound)
        check(view is not None, "nothing to hand out after the resume")
        if view is not None:
            verdict = planner.complete(view.node_id)
            check(verdict.passed, f"{view.node_id} did not pass after recovery")
            check(planner.next() is None or planner.artifact.checkpoint_seq is not None,
                  "no checkpoint mark after recovery")
    except Exception as exc:  # noqa: BLE001 - every failure is a finding, reported per point
        problems.append(f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    return Outcome(sc.command, syscall, n, killed, problems)


def _status(state: Path) -> int:
    """`plan07 status --json` in this process (its stdout swallowed)."""
    import contextlib
    import io

    from plan07.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(["status", "--json", "--state", str(state)])


def _same_plan_replaced(before: list[tuple[str, str, str, str]],
                        after: list[tuple[str, str, str, str]]) -> bool:
    """`plan` over an existing state dir replaces the plan: the new audit starts afresh."""
    return bool(after) and after[0][1] == "planned" and len(after) <= 3
