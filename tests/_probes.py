"""Probes of robustness (docs/safety.md): plan.json out of shape (with and without a stamp that
matches it) under every verb that reads state, kills of plan07 while a check runs, oversized
inputs. Shared by tests/test_state_props.py, tests/test_check_lifetime.py (some of it) and
benchmarks/crash_sweep.py `--probes`, which counts what each probe finds.

A verb's result is judged as the CLI promises (README "Exit codes"): 0 or 1, or 2 with one
`error: ...` line on stderr and plan.json's bytes unchanged; never a traceback.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _smallplan import CLI, cli_env, cli_here, make_repo, ob, write_replay

# --- plan.json out of shape ---------------------------------------------------------------------

DELETE = object()  # a key taken out instead of a value put in
HOSTILE: list[Any] = [
    None, "", "x", -1, 0, 2**70, -(2**70), 1.5, float("nan"), float("inf"), True, [], {}, [None],
    {"a": 1}, [1, "x"], "../../etc/passwd", "..", "/", "O999", "CP99", "\x1b]52;c;aGk=\x07",
    "a\nO1 passed", "x" * 5000, DELETE,
]
VERBS: list[list[str]] = [
    ["next"], ["next", "--json"], ["status"], ["status", "--json"], ["show", "--format", "mermaid"],
    ["show", "--format", "json"], ["audit"], ["audit", "--json"], ["complete", "O2"], ["resume"],
    ["rollback"], ["confirm", "--all"], ["explain", "O1", "O2"], ["feedback", "FEEDBACK"],
]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every JSON path into `value` (keys and list indexes), the root excluded."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


def mutate(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of `data` with the value at `path` replaced (or its key deleted: DELETE)."""
    out = json.loads(json.dumps(data))
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    if value is DELETE:
        if isinstance(cur, dict):
            del cur[path[-1]]
        else:
            cur.pop(path[-1])
    else:
        cur[path[-1]] = value
    return out


@dataclass
class Verdict:
    """What one verb did with one state: its exit code, its stderr, a traceback if it ended in
    one, whether plan.json's content changed, and what is wrong with that (empty: as
    promised)."""

    rc: int | None
    stderr: str
    traceback: str | None
    changed: bool

    @property
    def problems(self) -> list[str]:
        out = []
        if self.traceback is not None:
            out.append(f"traceback: {self.traceback}")
        elif self.rc not in (0, 1, 2):
            out.append(f"exit {self.rc}")
        elif self.rc == 2:
            if not self.stderr.startswith("error: ") or self.stderr.count("\n") != 1:
                out.append(f"not one error line: {self.stderr[:200]!r}")
            if self.changed:
                out.append("plan.json written on an error")
        return out


class StateWorld:
    """A 3-step plan on a small git repo (O1 complete, CP1 reached, O2 handed out), kept as a
    template at `root/template` and copied back to `root/work` for each probe (plan.json and
    the checkpoint records name the repo by its absolute path)."""

    def __init__(self, root: Path) -> None:
        self.template, self.work = root / "template", root / "work"
        if not (self.template / "state" / "plan.json").exists():
            shutil.rmtree(self.work, ignore_errors=True)
            self.work.mkdir(parents=True)
            repo = make_repo(self.work)
            write_replay(self.work)
            (self.work / "evidence.json").write_text("{}")
            (self.work / "feedback.json").write_text(json.dumps(
                {"caused_by": "O1", "falsified_obligations": ["O3"], "note": "covered"}))
            s = str(self.work / "state")
            for args in (["plan", str(self.work / "request.md"), "--repo", str(repo),
                          "--evidence", str(self.work / "evidence.json"), "--llm",
                          f"replay:{self.work / 'completion.json'}", "--state", s],
                         ["next", "--state", s], ["complete", "O1", "--state", s],
                         ["next", "--state", s]):
                res = cli_here(*args)
                assert res.returncode == 0, (args, res.stderr)
            shutil.rmtree(self.template, ignore_errors=True)
            shutil.copytree(self.work, self.template, symlinks=True)
        self.plan = json.loads((self.template / "state" / "plan.json").read_text())
        self.paths = paths(self.plan)

    def fresh(self) -> Path:
        shutil.rmtree(self.work, ignore_errors=True)
        shutil.copytree(self.template, self.work, symlinks=True)
        return self.work / "state"

    def run(self, verb: list[str], data: Any, *, stamped: bool) -> Verdict:
        """`verb` (in this process) on a state whose plan.json holds `data` (NaN written as
        JSON's NaN), with a plan.json.sha256 that matches it when `stamped`."""
        state = self.fresh()
        text = json.dumps(data, allow_nan=True, ensure_ascii=False)
        (state / "plan.json").write_text(text, "utf-8")
        stamp = state / "plan.json.sha256"
        if stamped:
            stamp.write_text(hashlib.sha256(text.encode("utf-8")).hexdigest() + "\n")
        else:
            stamp.unlink(missing_ok=True)
        before = (state / "plan.json").read_bytes()
        args = [str(self.work / "feedback.json") if a == "FEEDBACK" else a for a in verb]
        from plan07.cli import main

        out, err = io.StringIO(), io.StringIO()
        tb = None
        rc: int | None = None
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = main([*args, "--state", str(state)])
        except BaseException as exc:  # noqa: BLE001 - a traceback is the finding
            last = traceback.extract_tb(exc.__traceback__)[-1]
            tb = f"{type(exc).__name__} at {Path(last.filename).name}:{last.lineno}: " \
                 f"{' '.join(str(exc).split())[:160]}"
        after = (state / "plan.json").read_bytes() if (state / "plan.json").exists() else b""
        return Verdict(rc, err.getvalue(), tb, _content(after) != _content(before))


def _content(raw: bytes) -> str:
    """plan.json's content, whatever its layout (plan07 writes one key a line; a probe writes
    one line): the same content re-saved is no change."""
    try:
        return json.dumps(json.loads(raw), sort_keys=True)
    except ValueError:
        return raw.decode("utf-8", "replace")


# --- kills while a check runs ----------------------------------------------------------------

# the test starts helpers (in its group, in a session of its own, behind a shell, behind a
# double fork), writes their pids, then waits when armed
SPAWN = '''import pathlib, subprocess, sys, time

PIDS = {pids!r}


def test_spawn():
    pids = [subprocess.Popen(["sleep", "300"]).pid,
            subprocess.Popen(["sleep", "300"], start_new_session=True).pid]
    sh = subprocess.Popen(["sh", "-c", "sleep 300 & echo $!; wait"], start_new_session=True,
                          stdout=subprocess.PIPE)
    pids += [sh.pid, int(sh.stdout.readline())]
    fork = ("import subprocess; p = subprocess.Popen(['sleep', '300'], start_new_session=True, "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid, flush=True)")
    pids.append(int(subprocess.run([sys.executable, "-c", fork], capture_output=True,
                                   text=True).stdout))
    pathlib.Path(PIDS).write_text(" ".join(map(str, pids)))
    if pathlib.Path(PIDS + ".arm").exists():
        time.sleep(120)
'''


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:  # noqa: PTH123
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def survivors(pids_file: Path, wait: float = 3.0) -> list[int]:
    """The helpers still running after up to `wait` seconds (then killed: never left over)."""
    pids = [int(p) for p in pids_file.read_text().split()]
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    left = [p for p in pids if alive(p)]
    for p in left:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)
    return left


def spawn_world(root: Path) -> tuple[Path, Path, Path]:
    """(repo, state, pids file): a one-step plan whose check is SPAWN's test, not yet planned."""
    pids = root / "pids"
    repo = make_repo(root, files={"tests/test_spawn.py": SPAWN.format(pids=str(pids))})
    write_replay(root, [ob("O1", "tests/test_spawn.py::test_spawn", "validate", [],
                           "tests/test_spawn.py::test_spawn")])
    (root / "evidence.json").write_text("{}")
    return repo, root / "state", pids


def plan_args(root: Path, repo: Path, state: Path) -> list[str]:
    return ["plan", str(root / "request.md"), "--repo", str(repo), "--evidence",
            str(root / "evidence.json"), "--llm", f"replay:{root / 'completion.json'}",
            "--state", str(state)]


def kill_during(args: list[str], pids: Path, *, after: float = 0.0) -> list[int]:
    """Run `plan07 ARGS` in a process, SIGKILL it `after` seconds into its check (once the
    test wrote its helpers' pids), and return the helpers that survive."""
    pids.unlink(missing_ok=True)
    Path(f"{pids}.arm").write_text("")
    proc = subprocess.Popen([*CLI, *args], env=cli_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (pids.exists() and pids.read_text().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the check never started (exit {proc.poll()})")
        time.sleep(0.02)
    time.sleep(after)
    proc.kill()
    proc.wait()
    return survivors(pids)


# --- oversized inputs ----------------------------------------------------------------------------


def oversized(root: Path, state: Path, repo: Path) -> dict[str, list[str]]:
    """Each oversized input and the command that reads it (one byte past its cap, sparse where
    the file can be: its size is what is refused)."""
    from plan07 import caps

    def big(name: str, size: int, head: bytes = b"") -> str:
        p = root / name
        with p.open("wb") as fh:
            fh.write(head)
            fh.truncate(size)
        return str(p)

    s = str(state)
    return {
        "request": ["plan", big("big.md", caps.REQUEST_MAX_BYTES + 1, b"# x\n"), "--repo",
                    str(repo), "--state", s],
        "evidence": ["order", "--obligations",
                     str(root / "completion.json"), "--evidence",
                     big("big-evidence.json", caps.EVIDENCE_MAX_BYTES + 1, b"{")],
        "obligations": ["order", "--obligations",
                        big("big-obligations.json", caps.OBLIGATIONS_MAX_BYTES + 1, b"[")],
        "feedback": ["feedback", big("big-feedback.json", caps.FEEDBACK_MAX_BYTES + 1, b"{"),
                     "--state", s],
        "rule file": ["rules", "lint", big("big.dl", caps.RULES_MAX_BYTES + 1, b"a(X) :- b(X).\n")],
    }


def timed(args: list[str]) -> tuple[int, float, str]:
    """(exit code, wall seconds, what it said) of `plan07 ARGS` in a fresh process."""
    t0 = time.monotonic()
    res = subprocess.run([*CLI, *args], env=cli_env(), capture_output=True, text=True,
                         check=False, timeout=120)
    return res.returncode, time.monotonic() - t0, res.stderr or res.stdout  # lint: stdout

