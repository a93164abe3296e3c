"""§3.5 the local validation gate: parse a node's validation string into a check and run it (I/O:
subprocess, never a shell). When a plan may terminate is plan07.criteria; what a failure re-plans
is plan07.replan.

The validation string comes from a model, so it is data, never a command line: its grammar
(plan07.vocab) is a pytest node id (`path::name`, path inside the repo), `compile` (the repo's
Python files), `import:<module>` or `pytest:<path>`. Anything else is `unverifiable`; a path that
escapes the repo is refused. Every run also runs the repo-wide build check that proves temporal
consistency.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from plan07.errors import InputError
from plan07.model import Obligation, PlanNode, Verdict
from plan07.vocab import NODE_ID, CheckKind, classify

# Directories never compiled by the repo-wide build check (virtualenvs, VCS, build output).
_COMPILE_EXCLUDE = (
    r"[/\\](\.git|\.hg|\.venv|venv|\.tox|\.nox|node_modules|__pycache__|build|dist)[/\\]"
)
OUTPUT_TAIL_CHARS = 1500
PYTEST_ARGS = ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]


def _inside(repo: Path, rel: str, validation: str) -> str:
    """`rel` as a path inside `repo`, or InputError: `..`, absolute, option-like or a symlink
    that leads out of the repo is refused (the string came from a model)."""
    p = PurePosixPath(rel)
    if p.is_absolute() or rel.startswith("/"):
        raise InputError(f"absolute path refused in validation {validation!r}; use a path "
                         "inside the repo", field="validation")
    if any(part == ".." for part in p.parts):
        raise InputError(f"path escaping the repo refused in validation {validation!r}",
                         field="validation")
    if any(part.startswith("-") for part in p.parts):
        raise InputError(f"option-like path refused in validation {validation!r}",
                         field="validation")
    root = repo.resolve()
    if not (root / p).resolve().is_relative_to(root):
        raise InputError(f"path in validation {validation!r} leads out of the repo (symlink)",
                         field="validation")
    return str(p)


def parse_check(validation: str, repo: Path) -> tuple[CheckKind, list[str]]:
    """The check a validation string names, as an argv list to run with cwd=repo (never a shell).

    Returns ("unverifiable", []) for anything that is not a runnable check; raises InputError
    for a check whose path escapes the repo.
    """
    v = validation.strip()
    kind = classify(v)
    py = sys.executable
    if kind == "compile":
        return kind, [py, "-m", "compileall", "-q", "-x", _COMPILE_EXCLUDE, "."]
    if kind == "import":
        module = v.removeprefix("import:")
        return kind, [py, "-c", "import importlib, sys; importlib.import_module(sys.argv[1])",
                      module]
    if kind == "pytest_path":
        return kind, [py, *PYTEST_ARGS, _inside(repo, v.removeprefix("pytest:"), v)]
    if kind == "pytest_node":
        m = NODE_ID.fullmatch(v)
        assert m is not None
        return kind, [py, *PYTEST_ARGS, f"{_inside(repo, m['path'], v)}::{m['name']}"]
    return "unverifiable", []


def check_env(base: dict[str, str] | None = None, *, repo: Path | None = None
              ) -> dict[str, str]:
    """The subprocess environment: an allowlist, never a credential, and no bytecode written
    into the target repo (plan07.sandbox.check_env; which variables pass is decided there)."""
    from plan07.sandbox import check_env as allowlisted

    return allowlisted(base, repo=repo)


def _run(argv: list[str], repo: Path, timeout: float, env: dict[str, str]) -> tuple[bool, str]:
    """Run argv in repo with a timeout; on timeout the whole process group is killed, and the
    check dies with plan07 (PR_SET_PDEATHSIG); no credential of plan07's can be read from it
    (plan07.sandbox: shield, undumpable). The output comes back redacted."""
    from plan07.sandbox import child_setup, redact, shield, undumpable

    shield()
    with undumpable():
        try:
            proc = subprocess.Popen(  # noqa: S603 - argv list, shell=False, checked by parse_check
                argv, cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, shell=False, start_new_session=True,
                preexec_fn=child_setup(os.getpid()),  # noqa: PLW1509 - prctl only, no locks
            )
        except OSError as exc:
            return False, f"could not start check: {exc}"
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            text = out.decode("utf-8", "replace") if out else ""
            return False, redact(f"{text}\ncheck timed out after {timeout:g}s")
        except BaseException:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    return proc.returncode == 0, redact(out.decode("utf-8", "replace"))


def run_check(node: PlanNode, repo: Path, *, timeout: float = 120.0) -> Verdict:
    """§3.5 step 1: run the node's validation in `repo`, plus the repo-wide build check.

    pass iff both succeed. `test_calls` is 1 when the node's own check ran (it counts against
    the driver's max_test_calls), 0 when it could not run (unverifiable, refused, build broken).
    """
    check = node.validation.strip()
    start = time.monotonic()

    def verdict(passed: bool, kind: CheckKind, out: str, calls: int) -> Verdict:
        return Verdict(node_id=node.id, passed=passed, check=check, kind=kind,
                       output_tail=out[-OUTPUT_TAIL_CHARS:],
                       duration_s=round(time.monotonic() - start, 3), test_calls=calls)

    try:
        kind, argv = parse_check(check, repo)
    except InputError as exc:
        return verdict(False, "unverifiable", f"refused: {exc.one_line()}", 0)
    if kind == "unverifiable":
        return verdict(False, kind, "unverifiable: not a pytest node id (path::name), "
                       "`compile`, `import:<module>` or `pytest:<path>`; it was not run", 0)
    if not repo.is_dir():
        raise InputError("repository directory not found", source=str(repo))
    with tempfile.TemporaryDirectory(prefix="plan07-pyc-") as pyc:
        env = check_env(repo=repo)
        env["PYTHONPYCACHEPREFIX"] = pyc  # compileall writes its .pyc here, not into the repo
        _, build_argv = parse_check("compile", repo)
        ok, out = _run(build_argv, repo, timeout, env)  # §3.5: the build check compiles
        if not ok:
            return verdict(False, kind, f"repo-wide build check failed:\n{out}", 0)
        if kind == "compile":
            return verdict(True, kind, out, 1)
        ok, out = _run(argv, repo, timeout, env)
        return verdict(ok, kind, out, 1)


def run_node(node: PlanNode, members: Sequence[Obligation], repo: Path, *,
             timeout: float = 120.0) -> Verdict:
    """§3.5 step 1 for a plan node: `run_check`; a collapsed cycle is validated as one unit (every
    member's check must pass)."""
    if not members:
        return run_check(node, repo, timeout=timeout)
    parts = [run_check(PlanNode(**m.model_dump()), repo, timeout=timeout) for m in members]
    bad = next((p for p in parts if not p.passed), parts[-1])
    return Verdict(
        node_id=node.id, passed=all(p.passed for p in parts),
        check=" && ".join(p.check for p in parts), kind=bad.kind,
        output_tail=bad.output_tail, duration_s=round(sum(p.duration_s for p in parts), 3),
        test_calls=sum(p.test_calls for p in parts),
    )


def runnable_checks(node: PlanNode, members: Sequence[Obligation], repo: Path) -> int:
    """How many test calls the gate will make for `node`: one per check `run_check` would run
    (a collapsed cycle runs each member's); an unverifiable or refused check makes none."""
    runnable = 0
    for check in [m.validation for m in members] or [node.validation]:
        try:
            kind, _ = parse_check(check, repo)
        except InputError:
            continue
        runnable += kind != "unverifiable"
    return runnable
