"""A check's processes end with the check (docs/safety.md "A check ends with its processes").
I/O: processes, /proc. Run as a script; plan07's side is plan07.gate.supervised.

Every check that runs as a fresh process (a node's tests, the CP0 baseline, an `import:` check,
the build check) runs under a *supervisor*: this file, run as a script by plan07's own
interpreter (`python -I -S`, a few modules of the standard library: it starts in ~10 ms) between
plan07 and the check. It

- starts the check in a session (and process group) of its own, with PR_SET_PDEATHSIG SIGKILL
  and PLAN07_CHECK=<a random mark> added to its environment;
- is the *child subreaper* of everything the check starts (PR_SET_CHILD_SUBREAPER): a process
  whose parent exits is re-parented to it, not to init, wherever it went (a session of its own,
  a double fork), so it can still be found;
- ends the check (`end_tree`: its process group, then every process re-parented to the
  supervisor, until none is left) when the check's first process exits, when plan07 asks (a
  timeout, an interrupt), when plan07's end of their socket closes, or when its parent is no
  longer plan07 (plan07 exited, SIGKILL included); then it reports the exit status and exits.

It lives in a session of its own, so a signal to plan07's process group does not end it before
it has ended the check. The warm check server (plan07.gate.warmcheck) loads `become_subreaper`
and `end_tree` from this file and does the same for the checks it forks. A check whose plan07
and supervisor were both killed is ended by the next plan07 command (plan07.store.running).

The protocol, one line each way on a Unix socket pair: the supervisor sends `pid N MARK` (the
check's process, its session and group id, and its PLAN07_CHECK value) or `error WHY` (it could
not start), then `rc RC` (RC negative: the signal that ended it, `?` unknown); plan07 sends
`stop` to end it early.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: the script imports as little as it can
if TYPE_CHECKING:
    from typing import Any

MARK = "PLAN07_CHECK"  # in every check's environment: how a later plan07 finds what it left
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SIGHUP, SIGINT, SIGKILL, SIGTERM = 1, 2, 9, 15  # Linux's (no `signal`: it imports enum)
_libc: Any = None


def _prctl(option: int, value: int) -> bool:
    global _libc
    if _libc is None:
        before = set(sys.modules)
        try:
            import ctypes

            _libc = ctypes.CDLL("libc.so.6", use_errno=True)
        except (ImportError, OSError):
            _libc = False
        for name in set(sys.modules) - before:  # a check forked from here imports its own
            del sys.modules[name]
    return bool(_libc) and _libc.prctl(option, value, 0, 0, 0) == 0


def become_subreaper() -> bool:
    """This process adopts every orphan below it (Linux 3.4+); False where it cannot."""
    return sys.platform.startswith("linux") and _prctl(PR_SET_CHILD_SUBREAPER, 1)


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (a single-threaded one), zombies included."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:  # noqa: PTH123 - stdlib only
            return [int(x) for x in fh.read().split()]
    except OSError:
        pass
    out = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:  # noqa: PTH112, PTH208
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:  # noqa: PTH123
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return out


def end_tree(pid: int) -> int | None:
    """End check `pid` (this process's child, the leader of its own process group) and every
    process it left: its group first (the leader, alive or a zombie, keeps the group's id from
    being reused), then, round by round, every child this (subreaper) process has, each with
    its own group, reaped, until it has none. Returns the check's exit code (negative: the
    signal), None if it was reaped elsewhere."""
    mine = os.getpgid(0)
    try:  # noqa: SIM105 - no contextlib: the script imports as little as it can
        os.killpg(pid, SIGKILL)
    except OSError:
        pass
    rc: int | None = None
    try:
        _, status = os.waitpid(pid, 0)
        rc = os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        pass
    me = os.getpid()
    while True:
        for kid in children(me):
            try:
                group = os.getpgid(kid)
                if group != mine:
                    os.killpg(group, SIGKILL)
                os.kill(kid, SIGKILL)
            except OSError:
                continue
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return rc
        except InterruptedError:
            continue


# --- the supervisor: run as a script (`python -I -S supervisor.py FD ARGV...`) ---------------


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: Any) -> None:
    raise _Stop


def _send(fd: int, line: str) -> None:
    try:  # noqa: SIM105
        os.write(fd, line.encode("utf-8", "replace") + b"\n")
    except OSError:
        pass  # plan07 is gone: nothing to tell


def _spawn(argv: list[str], env: dict[str, str]) -> int:
    """Fork and exec the check: its own session, stdin /dev/null, stdout and stderr this
    process's, SIGKILL when this process dies. Raises OSError when it cannot start."""
    me = os.getpid()
    r, w = os.pipe()  # close-on-exec: the child writes why its exec failed, else EOF
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the check, until exec
        try:
            os.setsid()
            _prctl(PR_SET_PDEATHSIG, SIGKILL)
            if os.getppid() != me:
                os._exit(137)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            os.write(w, f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")[:4000])
        os._exit(127)
    os.close(w)
    why = b""
    while chunk := os.read(r, 4096):
        why += chunk
    os.close(r)
    if why:
        os.waitpid(pid, 0)
        raise OSError(why.decode("utf-8", "replace"))
    return pid


def _watch(fd: int, pid: int, parent: int) -> None:
    """Return when check `pid` exits, plan07 sends anything (`stop`), plan07's end of the
    socket closes, or this process's parent is no longer `parent` (plan07)."""
    import select

    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    poller = select.poll()
    poller.register(fd, select.POLLIN | getattr(select, "POLLRDHUP", 0x2000))
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    while True:
        events = poller.poll(1000 if pidfd is not None else 50)
        if any(f == fd for f, _ in events) or os.getppid() != parent:
            return
        if pidfd is not None and events:
            return  # the check exited: a zombie until end_tree reaps it
        if pidfd is None and os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
            return


def main(argv: list[str]) -> int:
    """Supervise `argv[2:]` (see the module doc); `argv[1]` is the socket's fd."""
    import _signal  # type: ignore[import-not-found]  # `signal` itself imports enum

    fd = int(argv[1])
    os.set_inheritable(fd, False)  # the check never holds it
    parent = os.getppid()
    become_subreaper()
    for sig in (SIGTERM, SIGINT, SIGHUP):
        _signal.signal(sig, _raise_stop)  # handlers, not SIG_IGN: the check must not inherit
    mark = os.urandom(8).hex()
    try:
        pid = _spawn(argv[2:], {**os.environ, MARK: mark})
    except OSError as exc:
        _send(fd, f"error could not start check: {exc}")
        return 0
    try:
        _send(fd, f"pid {pid} {mark}")
        _watch(fd, pid, parent)
    except _Stop:
        pass
    for sig in (SIGTERM, SIGINT, SIGHUP):
        _signal.signal(sig, _signal.SIG_IGN)  # the cleanup runs to its end
    rc = end_tree(pid)
    os.close(1)  # the output pipe: plan07 reads it to its end
    os.close(2)
    _send(fd, f"rc {'?' if rc is None else rc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
