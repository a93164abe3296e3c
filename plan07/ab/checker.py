"""Run a repo's build check and tests through the fork-server worker, and judge a step. I/O.

`Checker.check(repo)` really runs the repo's tests (in a forked child of a long-lived worker
process, see plan07.ab.worker). `Consistency` applies the §7.2 definition: a state is valid iff
every .py file compiles and no test that passed in any earlier state is broken now -- failing,
or in a file whose collection errored (`CheckResult.broken`). A test the change itself removed
or renamed (a rewritten parameter id is a new test id) is no longer collected and is not broken.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CheckResult:
    build_ok: bool
    passed: frozenset[str]
    failed: frozenset[str]
    error_files: tuple[str, ...] = ()
    broken_files: tuple[str, ...] = ()
    imports: dict[str, bool] = field(default_factory=dict)

    @property
    def green(self) -> bool:
        return self.build_ok and not self.failed and not self.error_files

    def broken(self, good: set[str] | frozenset[str]) -> set[str]:
        """The tests of `good` (passed in some earlier state) this state breaks: failing now, or
        in a file that errored at collection (a conftest.py's error covers its directory). A
        test no longer collected without an error (removed or renamed by the change) is not
        broken: it no longer exists. Every test when no test ran at all (a timeout, a conftest
        that does not import, a worker error)."""
        if not self.passed and not self.failed:
            return set(good)
        dirs = [e.rsplit("/", 1)[0] if "/" in e else "" for e in self.error_files
                if e.endswith("conftest.py")]
        files = set(self.error_files)

        def errored(test: str) -> bool:
            f = test.split("::", 1)[0]
            return f in files or any(d == "" or f.startswith(d + "/") for d in dirs) or any(
                f.startswith(e.rstrip("/") + "/") for e in files if not e.endswith(".py"))

        return {t for t in good if t in self.failed or (t not in self.passed and errored(t))}

    def satisfies(self, validation: str) -> bool:
        """Does this state pass a validation string (same grammar as plan07.gate.grammar)?"""
        v = validation.strip()
        if v == "compile":
            return self.build_ok
        if v.startswith("import:"):
            return self.build_ok and self.imports.get(v.removeprefix("import:"), False)
        if v.startswith("pytest:"):
            path = v.removeprefix("pytest:").rstrip("/")
            mine = [t for t in self.passed | self.failed if t == path or t.startswith(path + "/")
                    or t.startswith(path + "::")]
            errs = [e for e in self.error_files if e == path or e.startswith(path + "/")]
            return (self.build_ok and bool(mine) and not errs
                    and all(t in self.passed for t in mine))
        if "::" in v:
            return self.build_ok and v in self.passed
        return False


class Checker:
    """A client of one worker process; use as a context manager (the worker is ended on exit)."""

    def __init__(self, timeout: float = 120.0, *, python: str | None = None,
                 pythonpath: tuple[str, ...] = (), paths: tuple[str, ...] = (".",)) -> None:
        """`python`: the interpreter that runs the repo's tests (a real repo's venv, with its
        own pytest); the worker file is run by path there, so plan07 need not be installed in
        it. `pythonpath`: import roots relative to the repo; `paths`: what pytest runs."""
        self.timeout = timeout
        self.calls = 0
        self.pythonpath, self.paths = tuple(pythonpath), tuple(paths)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        for key in list(env):
            if key.upper().endswith("_API_KEY"):
                del env[key]
        env.pop("PYTHONPATH", None)  # the repo's import path comes with each request
        if python is None:
            argv = [sys.executable, "-m", "plan07.ab.worker"]
        else:
            from plan07.ab import worker

            argv = [python, "-c", "import runpy, sys; sys.argv = ['worker']; "
                    f"runpy.run_path({worker.__file__!r}, run_name='__main__')"]
        self._proc = subprocess.Popen(  # noqa: S603 - our own module, argv list
            argv, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)

    def check(self, repo: Path, imports: list[str] | None = None) -> CheckResult:
        req = {"repo": str(repo.resolve()), "imports": imports or [], "timeout": self.timeout,
               "pythonpath": list(self.pythonpath), "paths": list(self.paths)}
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        self.calls += 1
        if not line:
            raise RuntimeError("test worker died; rerun, or check `python -m plan07.ab.worker`")
        r: dict[str, Any] = json.loads(line)
        if "error" in r:
            return CheckResult(False, frozenset(), frozenset(), error_files=(r["error"],))
        return CheckResult(r["build_ok"], frozenset(r["passed"]), frozenset(r["failed"]),
                           tuple(r["error_files"]), tuple(r["broken_files"]), r["imports"])

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def imports_of(validations: list[str]) -> list[str]:
    return sorted({v.strip().removeprefix("import:") for v in validations
                   if v.strip().startswith("import:")})


class Consistency:
    """§7.2 temporal consistency, tracked over one strategy run: `observe` each state after an
    executed step; it is valid iff the repo builds and no test that passed in any earlier
    observed state (the baseline included) is broken (`CheckResult.broken`)."""

    def __init__(self, baseline: CheckResult) -> None:
        self.good: set[str] = set(baseline.passed)
        self.states: list[bool] = []
        self.baseline_ok = baseline.build_ok

    def observe(self, r: CheckResult) -> bool:
        ok = r.build_ok and not r.broken(self.good)
        self.states.append(ok)
        self.good |= r.passed
        return ok

    @property
    def rate(self) -> float:
        return sum(self.states) / len(self.states) if self.states else 1.0
