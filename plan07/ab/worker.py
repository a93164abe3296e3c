"""A long-lived fork-server that runs a repo's tests in an isolated child per request. I/O.

The parent (this module run as `python -m plan07.ab.worker`) imports pytest once; for each
request it forks a child that chdirs into the repo, compiles every .py file (the build check),
runs pytest there and reports per-test outcomes, then exits, so nothing the repo imports
survives into the next check (isolation without paying interpreter start-up per step).
Protocol: one JSON request per stdin line {"repo": PATH, "imports": [MOD...]}, one JSON reply
per stdout line {"build_ok", "broken_files", "passed", "failed", "error_files", "imports"}.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

CHILD_TIMEOUT_S = 120.0
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "build", "dist", "node_modules", ".tox"}


class _Collector:
    def __init__(self) -> None:
        self.passed: list[str] = []
        self.failed: list[str] = []
        self.error_files: list[str] = []

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" and report.passed:
            self.passed.append(report.nodeid)
        elif report.failed:
            self.failed.append(report.nodeid)

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.error_files.append(report.nodeid)


def _child(req: dict[str, Any]) -> dict[str, Any]:
    import importlib

    import pytest

    repo = Path(req["repo"])
    os.chdir(repo)
    sys.path.insert(0, str(repo))
    for rel in reversed(req.get("pythonpath", [])):  # a src/ layout, relative to the repo root
        sys.path.insert(0, str(repo / rel))
    broken = []
    for p in sorted(repo.rglob("*.py")):
        if SKIP_DIRS.intersection(p.relative_to(repo).parts):
            continue
        try:
            compile(p.read_bytes(), str(p), "exec")
        except (SyntaxError, ValueError):
            broken.append(p.relative_to(repo).as_posix())
    col = _Collector()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    # one file's collection error must not hide the others' outcomes (pytest stops the whole
    # session on it by default): every other test file still runs and reports
    args = ["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
            *req.get("paths", ["."])]
    pytest.main(args, plugins=[col])
    imports = {}
    for mod in req.get("imports", []):
        try:
            importlib.import_module(mod)
            imports[mod] = True
        except Exception:  # noqa: BLE001 - any import failure is a failed check
            imports[mod] = False
    return {"build_ok": not broken, "broken_files": broken, "passed": sorted(set(col.passed)),
            "failed": sorted(set(col.failed)), "error_files": sorted(set(col.error_files)),
            "imports": imports}


def _serve_one(req: dict[str, Any]) -> dict[str, Any]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            out = _child(req)
        except BaseException as exc:  # noqa: BLE001 - report, never hang the parent
            out = {"error": f"{type(exc).__name__}: {exc}"}
        data = json.dumps(out).encode()
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + float(req.get("timeout", CHILD_TIMEOUT_S))
    with os.fdopen(r, "rb") as f:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"error": "timeout"}
            ready, _, _ = select.select([f], [], [], left)
            if ready:
                chunk = os.read(f.fileno(), 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    os.waitpid(pid, 0)
    try:
        reply: dict[str, Any] = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        reply = {"error": "child died without a reply"}
    return reply


def _warm_up() -> None:
    """Import pytest's machinery once, here, so every forked child inherits it warm."""
    import tempfile

    import pytest

    with tempfile.TemporaryDirectory() as d:
        fd = os.open(os.devnull, os.O_WRONLY)
        saved = os.dup(1), os.dup(2)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        try:
            pytest.main(["-q", "-p", "no:cacheprovider", d])
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(fd)


def main() -> None:
    import gc

    sys.dont_write_bytecode = True
    # Third-party pytest plugins (xdist, hypothesis, timeout...) are not the repo's: not loaded.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    _warm_up()
    # What the warm-up left is frozen out of the garbage collector: a child's collections (pytest
    # runs gc.collect() at every session's end) then walk only what the child itself allocated,
    # and do not touch, so copy, every page of the parent's heap (about a third of a check's CPU)
    gc.collect()
    gc.freeze()

    for line in sys.stdin:
        if not line.strip():
            continue
        reply = _serve_one(json.loads(line))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
