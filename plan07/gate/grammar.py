"""§3.5 the local validation gate's grammar: a node's validation string parsed into a check (an
argv, never a shell line), and the environment a check runs in. Running a node's check is
plan07.gate.checks (`run_check`, `run_node`); when a plan may terminate is plan07.plan.criteria;
what a failure re-plans is plan07.plan.replan.

The validation string comes from a model, so it is data, never a command line (design.md): its
grammar (plan07.vocab) is a pytest node id (`path::name`, path inside the repo), `compile` (the
repo's Python files), `import:<module>` or `pytest:<path>`. Anything else is `unverifiable`; a
path that escapes the repo is refused. What a check runs and how its verdict is decided (the
repo's interpreter and test command, the CP0 baseline, red-green, the build check) is
plan07.gate.checks.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from plan07.errors import InputError
from plan07.model import Obligation, PlanNode
from plan07.vocab import NODE_ID, CheckKind, classify

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
    path (plan07.gate.checks hands it to the repo's test command).

    Returns ("unverifiable", []) for anything that is not a runnable check; raises InputError
    for a check whose path escapes the repo.
    """
    v = validation.strip()
    kind = classify(v)
    py = python or sys.executable
    if kind == "compile":
        return kind, [py, "-m", "compileall", "-q", "-x", _COMPILE_EXCLUDE, "."]
    if kind == "regression":  # its tests are the changed modules' (plan07.gate.regression)
        return kind, []
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


def runnable_checks(node: PlanNode, members: Sequence[Obligation], repo: Path) -> int:
    """How many test calls the gate will make for `node`: one per check `checks.run_check` runs
    (a collapsed cycle runs each member's); an unverifiable or refused check makes none."""
    runnable = 0
    for check in [m.validation for m in members] or [node.validation]:
        try:
            kind, _ = parse_check(check, repo)
        except InputError:
            continue
        runnable += kind != "unverifiable"
    return runnable
