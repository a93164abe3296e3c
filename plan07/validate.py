"""§3.5 the local validation gate: parse a node's validation string into a check and run it (I/O:
subprocess, never a shell). When a plan may terminate is plan07.criteria; what a failure re-plans
is plan07.replan.

The validation string comes from a model, so it is data, never a command line (design.md): its
grammar (plan07.vocab) is a pytest node id (`path::name`, path inside the repo), `compile` (the
repo's Python files), `import:<module>` or `pytest:<path>`. Anything else is `unverifiable`; a
path that escapes the repo is refused. What a check runs and how its verdict is decided (the
repo's interpreter and test command, the CP0 baseline, red-green, the build check) is
plan07.checks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from plan07.errors import InputError
from plan07.model import Obligation, PlanNode, Verdict
from plan07.vocab import NODE_ID, CheckKind, classify

if TYPE_CHECKING:
    from plan07.checks import GateContext

# Directories never compiled by the repo-wide build check (virtualenvs, VCS, build output).
_COMPILE_EXCLUDE = (
    r"[/\\](\.git|\.hg|\.venv|venv|\.tox|\.nox|node_modules|__pycache__|build|dist)[/\\]"
)
OUTPUT_TAIL_CHARS = 1500
PYTEST_ARGS = ["-m", "pytest", "-q", "-p", "no:cacheprovider"]  # the default; see runner


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


def parse_check(validation: str, repo: Path, *,
                python: str | None = None) -> tuple[CheckKind, list[str]]:
    """The check a validation string names, as an argv list to run with cwd=repo (never a shell)
    by `python` (default: plan07's own). The last argument of a pytest check is its test id or
    path (plan07.checks hands it to the repo's test command).

    Returns ("unverifiable", []) for anything that is not a runnable check; raises InputError
    for a check whose path escapes the repo.
    """
    v = validation.strip()
    kind = classify(v)
    py = python or sys.executable
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


def run_check(node: PlanNode, repo: Path, *, timeout: float = 120.0,
              ctx: GateContext | None = None) -> Verdict:
    """§3.5 step 1: run the node's validation in `repo` with the repo's interpreter and test
    command, plus the build check (plan07.checks.check_node). Without `ctx`: the interpreter
    `find_python(repo)` finds, the repo's configured test command, no baseline.

    pass iff both succeed. `test_calls` is 1 when the node's own check ran (it counts against
    the driver's max_test_calls), 0 when it could not run (unverifiable, refused, build broken).
    """
    from plan07.checks import GateContext, check_node
    from plan07.runner import find_python
    from plan07.testcommand import load_command

    if ctx is None:
        if not repo.is_dir():
            raise InputError("repository directory not found", source=str(repo))
        ctx = GateContext(repo, find_python(repo), load_command(repo), env=check_env(repo=repo))
    return check_node(node, ctx, timeout=timeout)


def run_node(node: PlanNode, members: Sequence[Obligation], repo: Path, *,
             timeout: float = 120.0, ctx: GateContext | None = None) -> Verdict:
    """§3.5 step 1 for a plan node: `run_check`; a collapsed cycle is validated as one unit (every
    member's check must pass; an inconclusive one makes the unit inconclusive)."""
    if not members:
        return run_check(node, repo, timeout=timeout, ctx=ctx)
    parts = [run_check(PlanNode(**m.model_dump()), repo, timeout=timeout, ctx=ctx)
             for m in members]
    bad = next((p for p in parts if p.inconclusive),
               next((p for p in parts if not p.passed), parts[-1]))
    return Verdict(
        node_id=node.id, passed=all(p.passed for p in parts),
        check=" && ".join(p.check for p in parts), kind=bad.kind,
        output_tail=bad.output_tail, duration_s=round(sum(p.duration_s for p in parts), 3),
        test_calls=sum(p.test_calls for p in parts), inconclusive=bad.inconclusive,
        preexisting=sorted({t for p in parts for t in p.preexisting})[:16],
        tests=[t for p in parts for t in p.tests][:16], red=any(p.red for p in parts),
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
