"""Warm checks: the default pytest command forked from a process that imported pytest once. I/O.

A check of the default command (`python -m pytest ...`, plan07.gate.testcommand) is a fresh
interpreter that spends most of its CPU importing pytest (about 0.35 s of its 0.5 s on a small
repo). From the second such check a process makes with the same interpreter and environment,
plan07 runs it in a child forked from a long-lived *check server* instead: a process of that
interpreter, started with that environment, that imported pytest and nothing of the repo. The
child becomes what the fresh process would have been before it ran anything of the repo:

- its own session (its process group is what a timeout kills), stdin /dev/null, stdout and
  stderr one pipe that plan07 reads (passed to the server over a Unix socket), no other fd;
- the check's environment (`os.environ`), cwd, `sys.argv`, and `sys.path` as `python -m` builds
  it: the cwd first (unless PYTHONSAFEPATH), then PYTHONPATH's entries, then the interpreter's;
- then `runpy` runs pytest as `-m` does, and the child exits as any interpreter does (atexit,
  flush), its exit status passed back as a returncode (negative: the signal).

What the server itself read at start-up is the check's: the same interpreter, environment
(PYTHONPATH without the run's own plugin folder), flags and PYTHONPYCACHEPREFIX. What differs
from a fresh process, and why it is kept apart:

- the hash seed: when PYTHONHASHSEED is unset, every check of one server shares the server's
  random seed (a fresh check drew its own);
- the server holds no module of the repo: one that does (the repo is pytest itself, or one of
  its dependencies, installed from the repo) is never used for that repo; a relative PYTHONPATH
  entry (read against the cwd) or an interpreter without `socket.send_fds` means no server;
- the check's parent is the server, whose environment is the check's own (no credential, as
  plan07.sandbox asks of a check's parent); plan07 stays undumpable while the check runs;
- plan07 dying (any signal) closes the server's socket: the server kills the running check's
  process group and exits (in place of PR_SET_PDEATHSIG, which would kill the server first).

Anything else (a configured test command, the first check, a server that failed, a system other
than Linux) runs as a fresh process (plan07.gate.runner.run_argv). `close_all` ends the servers
(also at exit); a process keeps at most four, the least recently used ended first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plan07.gate.supervised import Capture

# --- the server: run by path in the check's interpreter; imports only what pytest imports ------


def _serve(sock_fd: int, sup: dict[str, Any]) -> None:  # pragma: no cover - the server
    import json
    import select
    import socket

    sock = socket.socket(fileno=sock_fd)
    del sys.path[0]  # run as `-c`: the cwd, which a check's child puts back as its own
    try:
        import pytest  # noqa: F401 - the point: imported once, here
    except BaseException as exc:  # noqa: BLE001 - report, then let plan07 run checks fresh
        sock.sendall(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode() + b"\n")
        return
    if not hasattr(socket, "send_fds"):
        sock.sendall(b'{"error": "no socket.send_fds"}\n')
        return
    base = list(sys.path)
    sup["become_subreaper"]()  # what a check leaves is re-parented here, and ended with it
    files = sorted({os.path.realpath(f) for m in list(sys.modules.values())
                    for f in [getattr(m, "__file__", None)] if isinstance(f, str)})
    sock.sendall(json.dumps({"ready": os.getpid(), "files": files}).encode() + b"\n")
    import gc

    gc.collect()
    gc.freeze()  # a child's collections then never touch, so copy, the server's pages
    buf = b""
    while True:
        data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 1)
        if not data:
            return
        buf += data
        if not buf.endswith(b"\n"):
            for fd in fds:
                os.close(fd)
            continue
        req, buf = json.loads(buf), b""
        out_fd = fds[0]
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            sock.detach()  # its fd is closed with every other one
            _become_check(req, out_fd, ready_w, base)  # returns only by raising SystemExit
            return
        os.close(out_fd)
        os.close(ready_w)
        os.read(ready_r, 1)  # the child is its own session leader: killpg(pid) reaches it
        os.close(ready_r)
        sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        poller = select.poll()  # plan07's end closed (it died), not data it sent meanwhile
        poller.register(sock.fileno(), getattr(select, "POLLRDHUP", 0x2000))
        if pidfd is not None:
            poller.register(pidfd, select.POLLIN)
        while True:
            events = poller.poll(50 if pidfd is None else None)
            if any(fd == sock.fileno() for fd, _ in events):  # plan07 is gone
                sup["end_tree"](pid)
                return
            if events if pidfd is not None else os.waitid(
                    os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                rc = sup["end_tree"](pid)  # the check, and every process it left
                if pidfd is not None:
                    os.close(pidfd)
                sock.sendall(json.dumps({"rc": rc}).encode() + b"\n")
                break


def _become_check(req: dict[str, Any], out_fd: int, ready_w: int,
                  base: list[str]) -> None:  # pragma: no cover - the forked check
    import runpy
    import types

    os.setsid()
    os.write(ready_w, b"1")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.closerange(3, 1 << 16)  # a fresh check has no other fd (subprocess's close_fds)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    extra: list[str] = []  # PYTHONPATH's entries the server did not start with (as site would)
    for p in req["env"].get("PYTHONPATH", "").split(os.pathsep):
        p = os.path.abspath(p) if p else ""  # noqa: PTH100 - site's own rule (no symlinks)
        if p and p not in extra and p not in base:
            extra.append(p)
    first = [] if req["env"].get("PYTHONSAFEPATH") else [os.getcwd()]  # noqa: PTH109
    sys.path[:] = first + extra + base
    if isinstance(getattr(sys, "orig_argv", None), list):
        sys.orig_argv[:] = req["argv"]
    sys.argv[:] = ["-m", *req["argv"][3:]]
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=__builtins__, __annotations__={})  # as the interpreter's
    sys.modules["__main__"] = main
    run_as_main = getattr(runpy, "_run_module_as_main", None)
    if run_as_main is not None:
        run_as_main("pytest")
    else:
        runpy.run_module("pytest", run_name="__main__", alter_sys=True)
    raise SystemExit(0)


# --- plan07's side ------------------------------------------------------------------------------

FIRST_WARM_CHECK = 2  # the first check of a key runs fresh: a one-check process starts no server
_MAX_SERVERS = 4  # the least recently used one ends when a fifth key needs one


class _Server:
    def __init__(self, python: str, env: dict[str, str], cwd: str) -> None:
        import json
        import socket
        import subprocess
        import threading

        self.lock = threading.Lock()  # one check at a time, whichever thread asks

        from plan07.sandbox import shield

        shield()
        mine, theirs = socket.socketpair()
        # not runpy.run_path, which imports pkgutil: a check's sys.modules is a fresh one's
        from plan07.gate import supervisor

        code = (f"import sys; sys.argv = ['plan07-check-server']; f = {__file__!r}; "
                f"s = {supervisor.__file__!r}; "
                "g = {'__name__': '__plan07_check_server__', '__file__': f}; "
                "h = {'__name__': '__plan07_supervisor__', '__file__': s}; "
                "exec(compile(open(f, 'rb').read(), f, 'exec'), g); "
                "exec(compile(open(s, 'rb').read(), s, 'exec'), h); "
                f"g['_serve']({theirs.fileno()}, h)")
        self.proc = subprocess.Popen(  # noqa: S603 - our own module, argv list
            [python, "-c", code], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            pass_fds=(theirs.fileno(),))
        theirs.close()
        self.sock = mine
        self.reader = mine.makefile("rb")
        mine.settimeout(120.0)  # importing pytest; then every read waits as long as the check
        try:
            line = self.reader.readline()
        except OSError:
            line = b""
        mine.settimeout(None)
        hello = json.loads(line) if line else {"error": "the check server exited"}
        self.files: list[str] = list(hello.get("files", []))
        self.ok = "ready" in hello

    def serves(self, repo: str) -> bool:
        root = os.path.realpath(repo).rstrip("/") + "/"
        return self.ok and self.proc.poll() is None and not any(
            f.startswith(root) for f in self.files)

    def close(self) -> None:
        import contextlib
        import subprocess

        with contextlib.suppress(OSError):
            self.reader.close()
            self.sock.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_Key = tuple[str, tuple[tuple[str, str], ...]]
_servers: dict[_Key, _Server] = {}  # least recently used first
_failed: set[_Key] = set()  # a server that could not start, or died: these run fresh
_seen: dict[_Key, int] = {}
_owner = os.getpid()


def server_for(python: str, env: dict[str, str], plugin_dir: str, repo: str) -> _Server | None:
    """The server for a check of `python` in `env` (its PYTHONPATH minus `plugin_dir`), or None:
    run it fresh (the first check of that key, no usable server, a relative PYTHONPATH, or
    `PLAN07_WARM_CHECKS=off` in plan07's own environment: every check a fresh process)."""
    if os.environ.get("PLAN07_WARM_CHECKS", "").strip().lower() == "off":
        return None
    with _lock:
        return _server_for(python, env, plugin_dir, repo)


def _server_for(python: str, env: dict[str, str], plugin_dir: str, repo: str) -> _Server | None:
    if not sys.platform.startswith("linux"):  # fork, fd passing and pidfd/POLLRDHUP as tested
        return None
    base = dict(env)
    pp = [p for p in base.get("PYTHONPATH", "").split(os.pathsep) if p and p != plugin_dir]
    if any(not os.path.isabs(p) for p in pp):  # noqa: PTH117 - strings, as the env has them
        return None
    if pp:
        base["PYTHONPATH"] = os.pathsep.join(pp)
    else:
        base.pop("PYTHONPATH", None)
    key = (python, tuple(sorted(base.items())))
    global _owner
    if _owner != os.getpid():  # a forked copy of plan07: its parent's servers are not its own
        _servers.clear()
        _failed.clear()
        _seen.clear()
        _owner = os.getpid()
    _seen[key] = _seen.get(key, 0) + 1
    if _seen[key] < FIRST_WARM_CHECK or key in _failed:
        return None
    srv = _servers.pop(key, None)
    if srv is None:
        while len(_servers) >= _MAX_SERVERS:
            _servers.pop(next(iter(_servers))).close()
        try:
            srv = _Server(python, base, repo)
        except OSError:
            _failed.add(key)
            return None
    if not srv.ok or srv.proc.poll() is not None:  # it could not start, or died: no more warm
        srv.close()  # checks of this key
        _failed.add(key)
        return None
    _servers[key] = srv  # the most recently used, last
    return srv if srv.serves(repo) else None


def run(srv: _Server, argv: list[str], cwd: str, timeout: float, env: dict[str, str],
        drain_fd: Callable[[int, float, Capture], None]) -> tuple[int | None, str]:
    """As plan07.gate.runner.run_argv, in a child of `srv`: (returncode, output); None on timeout.
    `drain_fd` reads the output pipe (plan07.gate.runner's, as a fresh check's)."""
    import contextlib
    import json
    import signal
    import socket
    import subprocess

    from plan07.gate.supervised import Capture
    from plan07.sandbox import redact, undumpable
    from plan07.store import running

    mark = os.urandom(8).hex()  # plan07.gate.supervisor.MARK: a later plan07 finds it by it
    env = {**env, "PLAN07_CHECK": mark}
    with srv.lock, undumpable():
        r, w = os.pipe()
        try:
            socket.send_fds(srv.sock, [json.dumps({"argv": argv, "cwd": cwd, "env": env})
                                       .encode() + b"\n"], [w])
        finally:
            os.close(w)
        line = srv.reader.readline()
        if not line:
            os.close(r)
            raise OSError("the check server exited")
        pid = json.loads(line)["pid"]
        chunks = Capture()
        record = running.started(srv.proc.pid, pid, mark)
        try:
            drain_fd(r, timeout, chunks)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):  # a writer outside its group
                drain_fd(r, 60.0, chunks)
            srv.reader.readline()
            # the words of plan07.gate.runner.TIMED_OUT (not imported: this process stays light)
            return None, redact(f"{chunks.text()}\ncheck timed out after {timeout:g}s")
        except BaseException:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            srv.ok = False  # its reply is left unread: the next check starts afresh
            raise
        finally:
            os.close(r)
            running.ended(record)
        line = srv.reader.readline()
        if not line:
            raise OSError("the check server exited")
        rc = json.loads(line)["rc"]
    return rc, redact(chunks.text())


def close_all() -> None:
    """End every check server (each reaps its checks first)."""
    while _servers:
        _servers.pop(next(iter(_servers))).close()
    _failed.clear()
    _seen.clear()


if __name__ != "__plan07_check_server__":  # plan07's side only: the server imports no more
    import atexit
    import threading

    _lock = threading.Lock()
    atexit.register(close_all)
