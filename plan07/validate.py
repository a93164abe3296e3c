"""§3.5 the local validation gate: parse a node's validation string into a check, run it (I/O:
subprocess, never a shell), and the pure scoping half (affected subgraph, termination check).

The validation string comes from a model, so it is data, never a command line (design.md):
a pytest node id (`path::name`, path inside the repo), `compile` (the repo's Python files),
`import:<module>` or `pytest:<path>`. Anything else is `unverifiable`; a path that escapes the
repo is refused. Every run also runs the repo-wide build check that proves temporal consistency.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from plan07.errors import InputError
from plan07.model import (
    CheckKind,
    Decomposition,
    DerivedEdge,
    Obligation,
    OrderResult,
    PlanArtifact,
    PlanNode,
    Verdict,
    Violation,
)

# Grammar of the runnable checks. Anything outside these character sets (spaces, `;`, `$`,
# backticks, quotes, pipes, redirections, globs...) is not a check: `unverifiable`.
_PATH = r"[\w.+/-]+"
_NAME = r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:\[[\w.,+=-]*\])?"
_NODE_ID = re.compile(rf"^(?P<path>{_PATH}\.py)::(?P<name>{_NAME})$")
_PYTEST_PATH = re.compile(rf"^pytest:(?P<path>{_PATH})$")
_IMPORT = re.compile(r"^import:(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")

# Directories never compiled by the repo-wide build check (virtualenvs, VCS, build output).
_COMPILE_EXCLUDE = (
    r"[/\\](\.git|\.hg|\.venv|venv|\.tox|\.nox|node_modules|__pycache__|build|dist)[/\\]"
)
OUTPUT_TAIL_CHARS = 1500
PYTEST_ARGS = ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]


def classify(validation: str) -> CheckKind:
    """The kind of check a validation string names, from its syntax alone. Pure."""
    v = validation.strip()
    if v == "compile":
        return "compile"
    if _IMPORT.fullmatch(v):
        return "import"
    if _PYTEST_PATH.fullmatch(v):
        return "pytest_path"
    if _NODE_ID.fullmatch(v):
        return "pytest_node"
    return "unverifiable"


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
        m = _NODE_ID.fullmatch(v)
        assert m is not None
        return kind, [py, *PYTEST_ARGS, f"{_inside(repo, m['path'], v)}::{m['name']}"]
    return "unverifiable", []


def check_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The subprocess environment: no API keys (PLAN07_LLM_API_KEY, any *_API_KEY), and no
    bytecode written into the target repo."""
    env = dict(os.environ if base is None else base)
    for key in list(env):
        if key == "PLAN07_LLM_API_KEY" or key.upper().endswith("_API_KEY"):
            del env[key]
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(argv: list[str], repo: Path, timeout: float, env: dict[str, str]) -> tuple[bool, str]:
    """Run argv in repo with a timeout; on timeout the whole process group is killed."""
    try:
        proc = subprocess.Popen(  # noqa: S603 - argv list, shell=False, checked by parse_check
            argv, cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, shell=False, start_new_session=True,
        )
    except OSError as exc:
        return False, f"could not start check: {exc}"
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        text = out.decode("utf-8", "replace") if out else ""
        return False, f"{text}\ncheck timed out after {timeout:g}s"
    return proc.returncode == 0, out.decode("utf-8", "replace")


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
        env = check_env()
        env["PYTHONPYCACHEPREFIX"] = pyc  # compileall writes its .pyc here, not into the repo
        _, build_argv = parse_check("compile", repo)
        ok, out = _run(build_argv, repo, timeout, env)  # §3.5: the build check compiles
        if not ok:
            return verdict(False, kind, f"repo-wide build check failed:\n{out}", 0)
        if kind == "compile":
            return verdict(True, kind, out, 1)
        ok, out = _run(argv, repo, timeout, env)
        return verdict(ok, kind, out, 1)


# ---------------------------------------------------------------------------------------------
# The pure scoping half


def affected_subgraph(
    nodes: Sequence[PlanNode], edges: Sequence[tuple[str, str]], failed: str
) -> list[str]:
    """§3.5 step 3: the failed node plus its true dependents (reachable through dependency edges,
    the declared `dependencies` included), sorted. Pure."""
    ids = {n.id for n in nodes}
    if failed not in ids:
        raise InputError(f"no node {failed!r} in the plan", field="node_id")
    succ: dict[str, set[str]] = {}
    pairs: Iterable[tuple[str, str]] = list(edges) + [
        (d, n.id) for n in nodes for d in n.dependencies
    ]
    for a, b in pairs:
        succ.setdefault(a, set()).add(b)
    seen, todo = {failed}, [failed]
    while todo:
        for nxt in succ.get(todo.pop(), ()):
            if nxt in ids and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return sorted(seen)


# §3.1 step 2 / §3.5: when may a plan terminate? Every scheduled node validated by a runnable
# check, and every acceptance criterion settled:
#   check    - it names pytest node ids (or is "`pytest [PATHS]` succeeds"): settled when each is
#              run by the validation of a complete node (the same id, a class/function prefix of
#              it, or `pytest:<dir or file>` holding it), or when the user confirmed it;
#   command  - "`CMD` succeeds" for any other command: plan07 never runs commands, so only the
#              user can settle it (`plan07 confirm N`);
#   derived  - the request named no criterion and these were derived (needs_confirmation): the
#              user must confirm them, a plan may not terminate on an unconfirmed one;
#   named    - a behaviour the request named in prose: no check names it, the spec counts it a
#              legal terminal once every scheduled node's validation passed.
_CRITERION_TEST = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]*\.py::[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:\[[^\]\s]*\])?)"
)
_COMMAND_CRITERION = re.compile(r"^`(?P<cmd>[^`]+)` succeeds$")
_PYTEST_QUIET_OPTS = {"-q", "-qq", "-x", "-v", "-vv", "--quiet", "--verbose", "-rA"}
CriterionKind = Literal["check", "command", "derived", "named"]


@dataclass(frozen=True)
class Criterion:
    """One acceptance criterion and how it is settled (see the rule above). Pure value."""

    index: int  # 1-based, as `plan07 confirm N` takes it
    text: str
    kind: CriterionKind
    checks: tuple[str, ...]  # the pytest ids / paths a `check` criterion names
    covered_by: tuple[str, ...]  # complete nodes whose validation runs every one of them
    confirmed: bool

    @property
    def settled(self) -> bool:
        return self.kind == "named" or self.confirmed or bool(self.covered_by)

    @property
    def confirmable(self) -> bool:
        """`plan07 confirm --all` confirms these (a `check` one only by its number)."""
        return self.kind in ("derived", "command") and not self.settled

    def blocker(self) -> str | None:
        if self.settled:
            return None
        quoted = f"criterion {self.index} {self.text[:80]!r}"
        if self.kind == "derived":
            return (f"{quoted} was derived, not named (requirement.needs_confirmation, §3.1): "
                    f"confirm it with `plan07 confirm {self.index}` (or `--all`)")
        if self.kind == "command":
            return (f"{quoted} is a command plan07 never runs: run it yourself, then "
                    f"`plan07 confirm {self.index}`")
        return (f"{quoted} names {', '.join(self.checks)}, which no complete node's "
                f"validation runs; plan a validate obligation for it, or check it yourself and "
                f"`plan07 confirm {self.index}`")


def _pytest_command(cmd: str) -> list[str] | None:
    """The test ids/paths `pytest ...` (or `python -m pytest ...`) runs; None for any other
    command or one with options that change what runs."""
    argv = cmd.split()
    if argv[:1] in (["pytest"], ["py.test"]):
        args = argv[1:]
    elif len(argv) >= 3 and argv[0] in ("python", "python3") and argv[1:3] == ["-m", "pytest"]:
        args = argv[3:]
    else:
        return None
    if any(a.startswith("-") and a not in _PYTEST_QUIET_OPTS for a in args):
        return None
    return [a.rstrip("/") or "." for a in args if not a.startswith("-")] or ["."]


def _runs(validation: str, check: str) -> bool:
    """True iff the validation string `validation` runs every test `check` names."""
    v = validation.strip()
    kind = classify(v)
    if kind == "pytest_node":
        return check == v or check.startswith((v + "::", v + "["))
    if kind == "pytest_path":
        root = v.removeprefix("pytest:").rstrip("/") or "."
        path = check.split("::", 1)[0]
        return root in (".", "./") or path == root or path.startswith(root + "/")
    return False


def criteria_status(artifact: PlanArtifact) -> list[Criterion]:
    """Every acceptance criterion of the plan with how (and whether) it is settled. Pure."""
    done: list[tuple[str, str]] = []  # (node id, validation) of complete nodes, members too
    for n in artifact.nodes:
        if n.state != "complete":
            continue
        members = artifact.collapsed.get(n.id) or []
        done += [(n.id, m.validation) for m in members] or [(n.id, n.validation)]
    confirmed = set(artifact.confirmed_criteria or [])
    out = []
    for i, text in enumerate(artifact.requirement.acceptance_criteria, start=1):
        m = _COMMAND_CRITERION.match(text.strip())
        checks = _pytest_command(m["cmd"]) if m else None
        if checks is None:
            checks = _CRITERION_TEST.findall(text)
        kind: CriterionKind
        if checks:
            kind = "check"
        elif m:
            kind = "command"
        else:
            kind = "derived" if artifact.requirement.needs_confirmation else "named"
        covered = tuple(sorted({nid for c in checks for nid, v in done if _runs(v, c)}))
        if checks and not all(any(_runs(v, c) for _, v in done) for c in checks):
            covered = ()
        out.append(Criterion(i, text, kind, tuple(checks), covered, i in confirmed))
    return out


def termination_blockers(artifact: PlanArtifact) -> list[str]:
    """Why the plan may not terminate (empty = it may). Pure.

    §3.1 step 2 / design.md: a checkable predicate is the only legal terminal, so a plan cannot
    terminate while a scheduled node's validation is unverifiable or not passed, nor while an
    acceptance criterion is unsettled (`criteria_status`: a derived one unconfirmed, a named
    test no complete validation runs, a command nobody confirmed).
    """
    from plan07 import caps

    out: list[str] = []
    for n in artifact.nodes:
        if n.status == "alternative":
            continue
        checks = [m.validation for m in artifact.collapsed.get(n.id) or []] or [n.validation]
        bad = [c for c in checks if classify(c) == "unverifiable"]
        spent = artifact.bounds.get(n.id)
        if bad:
            out.append(f"{n.id}: validation {bad[0]!r} is unverifiable")
        elif n.state == "failed" and spent and spent.replans >= caps.MAX_REPLANS_PER_NODE:
            out.append(f"{n.id}: failed and its replans are spent (MAX_REPLANS_PER_NODE): "
                       "`plan07 feedback` or `plan07 rollback`")
        elif n.state != "complete":
            out.append(f"{n.id}: not complete (state {n.state})")
    out += [b for c in criteria_status(artifact) if (b := c.blocker())]
    return out


def can_terminate(artifact: PlanArtifact) -> bool:
    """True iff `termination_blockers(artifact)` is empty. Pure."""
    return not termination_blockers(artifact)


@dataclass
class Replan:
    """The outcome of a scoped replan (§3.5 step 3). `accepted` is False when the scoped
    decomposition fell back or gave an unusable fragment: the plan is then left as it was."""

    failed: str
    affected: list[str]  # plan node ids: the failed node + its true dependents
    removed: list[str]  # obligation ids replaced
    added: list[Obligation]  # the re-decomposed fragment
    edges: list[DerivedEdge]  # the plan's derived edges after the splice
    violations: list[Violation]
    decomposition: Decomposition | None = None
    accepted: bool = True
    reason: str = ""
    rewalked: list[str] = field(default_factory=list)  # obligation ids the rules saw


def scoped_replan(
    nodes: Sequence[PlanNode],
    obligations: Sequence[Obligation],
    order: OrderResult,
    failed: str,
    *,
    redecompose: Callable[[Sequence[Obligation]], Decomposition],
    rewalk: Callable[[Sequence[Obligation]], OrderResult],
) -> Replan:
    """§3.5 step 3 over values: the affected subgraph (failed node + true dependents) is handed,
    alone, to `redecompose` (ONE scoped call, §4), its result re-ordered by `rewalk` (the rules)
    over that fragment and its direct upstream only, and spliced in. Upstream and sibling nodes
    keep their obligations and edges. Pure apart from what the two callables do."""
    from plan07.revise import rewalk_scope, splice_edges

    plan_edges = [(d, n.id) for n in nodes for d in n.dependencies]
    affected = affected_subgraph(nodes, plan_edges, failed)
    members = {n.id: (n.members or [n.id]) for n in nodes}
    gone = sorted({m for a in affected for m in members[a]})
    fragment = [o for o in obligations if o.id in gone]
    kept = [o for o in obligations if o.id not in gone]
    keep_ids = {o.id for o in kept}

    def refuse(why: str, dec: Decomposition | None) -> Replan:
        return Replan(failed, affected, [], [], list(order.edges), list(order.violations),
                      dec, accepted=False, reason=why)

    dec = redecompose(fragment)
    if not dec.obligations:
        return refuse(f"scoped decomposition fell back ({dec.reason or 're_decompose'}); "
                      "the subgraph is kept as it was", dec)
    clash = sorted({o.id for o in dec.obligations} & keep_ids)
    known = keep_ids | {o.id for o in dec.obligations}
    dangling = sorted({d for o in dec.obligations for d in o.dependencies} - known)
    if clash or dangling:
        return refuse(f"scoped decomposition reused id(s) {clash} of untouched nodes or named "
                      f"unknown dependencies {dangling}; the subgraph is kept as it was", dec)
    new_ids = {o.id for o in dec.obligations}
    scope = rewalk_scope([*kept, *dec.obligations], new_ids)
    walked = rewalk([o for o in scope if o.id in new_ids or o.id in keep_ids])
    # an untouched node never gains a dependency on the replanned fragment (§3.5: untouched)
    into_new = [e for e in walked.edges if e.to in new_ids]
    edges = splice_edges(order.edges, into_new, new_ids, removed=set(gone) - new_ids)
    hit = new_ids | set(gone)
    violations = [v for v in order.violations if not set(v.nodes) & hit]
    violations += [v for v in walked.violations if set(v.nodes) & new_ids]
    return Replan(failed, affected, gone, list(dec.obligations), edges, violations, dec,
                  rewalked=[o.id for o in scope])
