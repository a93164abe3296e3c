"""A check run under its supervisor: plan07's side (docs/safety.md "A check ends with its
processes"; the supervisor itself is plan07.gate.supervisor). I/O: processes.

`run` starts the supervisor with the check's argv, reads the check's output (bounded as it
streams: `Capture`) until every writer closed it, and returns its exit code; while it runs, a
record names it (plan07.store.running) so that a later plan07 can end it if this one and the
supervisor are both killed. Where no supervisor can run (not Linux, no interpreter of plan07's
own), `run_direct` runs the check as plan07's own child, as before.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from plan07.gate import supervisor

Drain = Callable[[int, float, "Capture"], None]


class Capture:
    """A check's output as it streams in, bounded (`caps.CHECK_OUTPUT_MAX_BYTES`): its first
    half and its last half are kept, what lies between is counted and left out (one line says
    how much), so a test printing gigabytes costs plan07 a few megabytes."""

    def __init__(self, limit: int | None = None) -> None:
        if limit is None:
            from plan07 import caps

            limit = caps.CHECK_OUTPUT_MAX_BYTES
        self.half = limit // 2
        self.head: list[bytes] = []
        self.tail: list[bytes] = []
        self.head_n = self.tail_n = self.dropped = 0

    def append(self, data: bytes) -> None:
        if self.head_n < self.half:
            take = data[: self.half - self.head_n]
            self.head.append(take)
            self.head_n += len(take)
            data = data[len(take):]
        if not data:
            return
        self.tail.append(data)
        self.tail_n += len(data)
        while self.tail_n - len(self.tail[0]) >= self.half:
            self.tail_n -= len(self.tail[0])
            self.dropped += len(self.tail.pop(0))
        extra = self.tail_n - self.half
        if extra > 0:
            self.tail[0] = self.tail[0][extra:]
            self.tail_n -= extra
            self.dropped += extra

    def text(self) -> str:
        gap = f"\n[plan07: {self.dropped} bytes of output left out]\n".encode() \
            if self.dropped else b""
        return (b"".join(self.head) + gap + b"".join(self.tail)).decode("utf-8", "replace")


class CannotStart(Exception):
    """The check's program could not be started (not found, not executable): the message."""


def run(argv: list[str], cwd: str | os.PathLike[str], timeout: float, env: dict[str, str],
        drain: Drain, out: Capture) -> int | None:
    """Run `argv` under a supervisor, its output read by `drain(fd, timeout, out)` until every
    writer closed it (the supervisor closes its own end last, once the check and what it
    started are gone). Returns the exit code (negative: the signal), None when it ran past
    `timeout` (then ended). Raises CannotStart; where no supervisor can run (not Linux, no
    interpreter of plan07's own), the check runs as plan07's direct child (`run_direct`)."""
    import socket
    import subprocess

    from plan07.store import running

    if not sys.platform.startswith("linux") or not sys.executable:
        return run_direct(argv, cwd, timeout, env, drain, out)
    mine, theirs = socket.socketpair()
    try:
        proc = subprocess.Popen(  # noqa: S603 - our own script, argv list
            [sys.executable, "-I", "-S", supervisor.__file__, str(theirs.fileno()), *argv],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True, pass_fds=(theirs.fileno(),))
    except OSError:
        mine.close()
        return run_direct(argv, cwd, timeout, env, drain, out)
    finally:
        theirs.close()
    assert proc.stdout is not None
    reader = mine.makefile("rb")
    record = None
    try:
        mine.settimeout(60.0)
        hello = _reply(reader)
        if hello[:1] == ["error"]:
            raise CannotStart(" ".join(hello[1:]))
        if len(hello) != 3 or hello[0] != "pid" or not hello[1].isdigit():
            proc.wait()  # the supervisor itself did not start: run without it
            return run_direct(argv, cwd, timeout, env, drain, out)
        record = running.started(proc.pid, int(hello[1]), hello[2])
        mine.settimeout(None)
        timed_out = False
        try:
            drain(proc.stdout.fileno(), timeout, out)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(mine)
            with contextlib.suppress(subprocess.TimeoutExpired):
                drain(proc.stdout.fileno(), 60.0, out)
        mine.settimeout(60.0)
        rc = _reply(reader)
        proc.wait(timeout=60.0)
        if timed_out:
            return None
        return int(rc[1]) if len(rc) == 2 and rc[1].lstrip("-").isdigit() else -9
    except BaseException:
        _stop(mine)
        try:
            proc.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    finally:
        running.ended(record)
        reader.close()
        mine.close()
        proc.stdout.close()


def _reply(reader: Any) -> list[str]:
    """One line of the supervisor's, split; empty when it said nothing (it exited)."""
    try:
        return reader.readline().decode("utf-8", "replace").split()  # type: ignore[no-any-return]
    except OSError:
        return []


def _stop(sock: Any) -> None:
    with contextlib.suppress(OSError):
        sock.sendall(b"stop\n")


def run_direct(argv: list[str], cwd: str | os.PathLike[str], timeout: float,
               env: dict[str, str], drain: Drain, out: Capture) -> int | None:
    """The check as plan07's own child, where no supervisor runs: its session's group is
    killed when it ends, and it gets SIGKILL when plan07 dies (PR_SET_PDEATHSIG); what left
    its group, or what runs when plan07 is killed, is not ended."""
    import signal
    import subprocess

    from plan07.sandbox import child_setup

    try:
        proc = subprocess.Popen(  # noqa: S603 - argv list, shell=False
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=child_setup(os.getpid()))  # noqa: PLW1509 - prctl only, no locks
    except OSError as exc:
        raise CannotStart(f"could not start check: {exc}") from None
    assert proc.stdout is not None
    timed_out = False
    try:
        drain(proc.stdout.fileno(), timeout, out)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stdout.close()
        proc.wait()
    return None if timed_out else proc.returncode


