"""§3.5 step 1 in the repository's own world: what a node's check runs and the verdict it earns.
I/O: runs the repo's interpreter and test command (plan07.gate.runner), never a shell.

A node's check (`plan_check`) is chosen from its validation string (the grammar of
plan07.gate.grammar) and the plan's knowledge of the repo:

- a modify node that defines a test (its target is the test its validation names, and that test
  did not pass at the baseline) runs it `red`: it must exist and fail for an assertion;
- a named test `path::name` runs `green`; `pytest:<path>` runs `suite` (plan07.gate.baseline);
- a modify node whose validation is only `import:` or `compile` also runs, `suite`, the tests of
  its target (plan07.evidence.testmap: the tests recon links to it, else the test modules that
  import its module), when there are any: an import alone proves no behaviour (no false "done");
- `regression` runs, `suite`, the tests of every module the plan changed since CP0
  (plan07.gate.regression): the plan terminates only after it passed.

A failing test the CP0 run never ran is blamed, unless the CP0 content (plan07.gate.snapshot)
says it failed then too.

Every check first compiles, with the repo's interpreter, the Python files changed since the last
checkpoint (the repo-wide build check of §3.5; unchanged files compiled when they were checked).
A check whose environment lacks a module is an environment problem (`Verdict.inconclusive`): the
node is neither failed nor replanned.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from plan07.errors import InputError
from plan07.gate.baseline import Baseline, Judgement, Mode, judge, resolve
from plan07.gate.interpreter import Interpreter, run_env
from plan07.gate.runner import (
    compile_files,
    environment_problem,
    run_argv,
    run_tests,
    timed_out,
)
from plan07.gate.testcommand import TestCommand
from plan07.model import Obligation, PlanNode, Verdict
from plan07.vocab import CheckKind, classify

OUTPUT_TAIL_CHARS = 1500
EXERCISED_MAX = 32  # tests reaching a target run by id; more run as their files
EXCLUDE_DIRS = {".git", ".hg", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
                "build", "dist", ".eggs"}


@dataclass
class GateContext:
    """What the gate knows of the repo while checking one node."""

    repo: Path
    interp: Interpreter
    command: TestCommand = field(default_factory=TestCommand)
    baseline: Baseline | None = None
    exercised: Mapping[str, Sequence[str]] = field(default_factory=dict)  # entity -> tests
    changed_py: Sequence[str] | None = None  # None: unknown (no git) -> every .py file
    landed: bool = False  # a non-test modify of the plan was validated already
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    pycache: Path | None = None  # plan07's bytecode cache (plan07.gate.bytecode); None: none kept
    swept_ns: int = 0  # when the last check's sweep of it started (plan07.gate.bytecode.sweep)
    cp0_tree: str | None = None  # the CP0 content (a git tree): a test's outcome then, on demand
    regression: tuple[str, ...] | None = None  # what a `regression` check runs (None: unknown)


@dataclass(frozen=True)
class GateRun:
    """What the gate runs for one handed-out node: the node, its members (a collapsed cycle),
    the repo, and the test calls reserved for its checks (plan07.gate.grammar.runnable_checks)."""

    node: PlanNode
    members: list[Obligation]
    repo: Path
    reserved: int


@dataclass(frozen=True)
class PlannedCheck:
    """What `check_node` will run for a node."""

    kind: CheckKind
    argv: list[str]  # the validation's own argv (import/compile), [] for test runs
    mode: Mode | None  # how a test run is judged (None: no test run)
    tests: tuple[str, ...] = ()  # what the test command is given
    own: tuple[str, ...] = ()  # the node's named tests


def defined_test(node: PlanNode) -> str | None:
    """The test id a modify node defines: its target is the very test its validation names
    (`tests/test_x.py::test_new`, or that id in dots). None for any other node."""
    v = node.validation.strip()
    if node.obligation != "modify" or classify(v) != "pytest_node":
        return None
    t = node.target_entity.strip()
    if t == v:
        return v
    dotted = v.replace(".py::", ".").replace("::", ".").replace("/", ".")
    return v if t == dotted or dotted.endswith("." + t) and "test" in t.rsplit(".", 1)[-1] \
        else None


def exercising_tests(node: PlanNode, exercised: Mapping[str, Sequence[str]]) -> list[str]:
    """The tests that reach the node's target through the recon graph (by id, or grouped by
    file past EXERCISED_MAX)."""
    tests = sorted(set(exercised.get(node.target_entity, ())))
    if len(tests) > EXERCISED_MAX:
        tests = sorted({t.split("::", 1)[0] for t in tests})
    return tests


def plan_check(node: PlanNode, ctx: GateContext) -> PlannedCheck:
    """The check `node` gets (module docstring). InputError for a path escaping the repo."""
    from plan07.gate.grammar import parse_check

    v = node.validation.strip()
    kind, argv = parse_check(v, ctx.repo, python=ctx.interp.path)
    if kind == "unverifiable":
        return PlannedCheck(kind, [], None)
    if kind == "pytest_node":
        test = argv[-1]
        if defined_test(node) and not (ctx.baseline and ctx.baseline.passed(test)):
            return PlannedCheck(kind, [], "red", (test,), (test,))
        return PlannedCheck(kind, [], "green", (test,), (test,))
    if kind == "pytest_path":
        return PlannedCheck(kind, [], "suite", (argv[-1],))
    if kind == "regression":
        return PlannedCheck(kind, [], "suite", tuple(ctx.regression or ()))
    tests = exercising_tests(node, ctx.exercised) if node.obligation == "modify" else []
    return PlannedCheck(kind, argv, "suite" if tests else None, tuple(tests))


def planned_checks(nodes: Sequence[PlanNode], ctx: GateContext
                   ) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Node id -> (how its check judges: "red", "green", "suite", "regression", or its kind
    when it runs no test; the tests it runs), for every node whose check plan07 can run."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for n in nodes:
        try:
            planned = plan_check(n, ctx)
        except InputError:
            continue
        if planned.kind == "unverifiable":
            continue
        mode = "regression" if planned.kind == "regression" else planned.mode or planned.kind
        out[n.id] = (mode, planned.tests)
    return out


def python_files(repo: Path) -> list[str]:
    """Every .py file of the repo outside virtualenvs, VCS and build folders (no git)."""
    from plan07.store.boundedio import walk

    out = []
    root = Path(repo)
    for dirpath, dirnames, filenames in walk(root, what="the repository"):
        dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDE_DIRS)
        rel = Path(dirpath).relative_to(root)
        out += [(rel / f).as_posix() for f in sorted(filenames) if f.endswith(".py")]
    return out


def bytecode_env(ctx: GateContext, base: Mapping[str, str]) -> dict[str, str]:
    """The check's bytecode: kept in plan07's cache, every .pyc of the repo's files that could
    be stale deleted first (plan07.gate.bytecode); with no cache (a check outside a plan, the CP0
    baseline, `PLAN07_CACHE_DIR=off`), none written."""
    from plan07.gate import bytecode

    if ctx.pycache is not None:
        ctx.swept_ns = bytecode.sweep(ctx.pycache, ctx.repo)
    return bytecode.check_env(base, ctx.pycache)


def check_node(node: PlanNode, ctx: GateContext, *, timeout: float = 120.0) -> Verdict:
    """§3.5 step 1: the build check, then the node's check (`plan_check`), judged against the
    baseline. `test_calls` is 1 when the node's own check ran, 0 when it could not run."""
    import time

    check = node.validation.strip()
    start = time.monotonic()

    def verdict(passed: bool, kind: CheckKind, out: str, calls: int, *,
                j: Judgement | None = None, tests: Sequence[str] = (), env: str | None = None,
                red: bool = False) -> Verdict:
        return Verdict(node_id=node.id, passed=passed, check=check, kind=kind,
                       output_tail=out[-OUTPUT_TAIL_CHARS:],
                       duration_s=round(time.monotonic() - start, 3), test_calls=calls,
                       inconclusive=env or (j.environment if j else None),
                       preexisting=list(j.preexisting[:16]) if j else [],
                       tests=list(tests[:16]), red=red,
                       fixed=list(j.fixed[:16]) if j and not red else [],
                       ran=j.ran if j else 0)

    try:
        planned = plan_check(node, ctx)
    except InputError as exc:
        return verdict(False, "unverifiable", f"refused: {exc.one_line()}", 0)
    if planned.kind == "unverifiable":
        return verdict(False, "unverifiable", "unverifiable: not a pytest node id (path::name), "
                       "`compile`, `import:<module>` or `pytest:<path>`; it was not run", 0)
    if not ctx.repo.is_dir():
        raise InputError("repository directory not found", source=str(ctx.repo))
    env = bytecode_env(ctx, ctx.env)
    files = list(ctx.changed_py) if ctx.changed_py is not None else python_files(ctx.repo)
    ok, out = compile_files(ctx.interp, ctx.repo, files, timeout=timeout, env=env)
    if not ok and timed_out(out):  # the environment's time, not the node
        from plan07.gate.baseline import timed_out_text

        return verdict(False, planned.kind, out, 0, env=timed_out_text(out))
    if not ok:
        return verdict(False, planned.kind, f"repo-wide build check failed:\n{out}", 0)
    if planned.kind == "compile" and planned.mode is None:
        return verdict(True, "compile", out, 1)
    if planned.kind == "regression" and not planned.tests:
        return verdict(True, "regression", "no existing test imports a module the plan changed: "
                       "nothing to regress", 1)
    if planned.kind == "import":
        rc, out = run_argv(planned.argv, ctx.repo, timeout, run_env(ctx.interp, env))
        if rc != 0:
            from plan07.gate.baseline import timed_out_text
            from plan07.gate.runner import TestRun

            problem = timed_out_text(out) if rc is None else environment_problem(
                TestRun(rc, out), ctx.repo, ctx.interp, [out])
            return verdict(False, "import", out, 1, env=problem)
        if planned.mode is None:
            return verdict(True, "import", out, 1)
    run = run_tests(ctx.command, ctx.interp, ctx.repo, planned.tests, timeout=timeout, env=env)
    assert planned.mode is not None
    j = judge(run, mode=planned.mode, own=planned.own, baseline=ctx.baseline, repo=ctx.repo,
              interp=ctx.interp, landed=ctx.landed)
    if j.unknown and ctx.cp0_tree and not ctx.cp0_tree.startswith("stat:"):
        j = resolve(j, run, outcomes_at_cp0(ctx, j.unknown, timeout=timeout))
    text = f"{run.output.rstrip()}\n{j.summary}"  # the verdict's line last: the tail keeps it
    return verdict(j.passed, planned.kind, text, 1, j=j, tests=planned.tests,
                   red=planned.mode == "red")


def outcomes_at_cp0(ctx: GateContext, tests: Sequence[str], *, timeout: float,
                    scope: Sequence[str] | None = None) -> dict[str, str]:
    """The outcome at CP0 of each of `tests`, run on the CP0 content (plan07.gate.snapshot):
    id -> status; a test that did not exist then is absent. `scope`: what to run (default:
    `tests` themselves, a file of more than EXERCISED_MAX of them). {} when git cannot
    write the content."""
    from plan07.errors import PlanStateError
    from plan07.gate.snapshot import materialized, snapshot_env

    assert ctx.cp0_tree is not None
    if scope is None:
        scope = sorted(set(tests)) if len(tests) <= EXERCISED_MAX else \
            sorted({t.split("::", 1)[0] for t in tests})
    try:
        with materialized(ctx.repo, ctx.cp0_tree) as copy:
            env = snapshot_env(bytecode_env(GateContext(copy, ctx.interp), ctx.env), ctx.repo,
                               copy)
            present = [t for t in scope if (copy / t.split("::", 1)[0]).exists()]
            if not present:
                return {}
            run = run_tests(ctx.command, ctx.interp, copy, present, timeout=timeout, env=env)
    except (PlanStateError, OSError):
        return {}
    return {k: o.status for k, o in (run.outcomes or {}).items()}


def baseline_scope(nodes: Sequence[PlanNode], repo: Path,
                   exercised: Mapping[str, Sequence[str]]) -> list[str]:
    """What the CP0 run covers: every existing test file a check names (the whole file, so a
    test defined later is known not to have existed), every `pytest:<path>` that exists, and
    the tests reaching each import/compile-validated modify target."""
    from plan07.gate.grammar import parse_check

    out: set[str] = set()
    for n in nodes:
        try:
            kind, argv = parse_check(n.validation, repo)
        except InputError:
            continue
        if kind == "pytest_node":
            out.add(argv[-1].split("::", 1)[0])
        elif kind == "pytest_path":
            out.add(argv[-1])
        elif kind in ("import", "compile") and n.obligation == "modify":
            out |= {t.split("::", 1)[0] for t in exercising_tests(n, exercised)}
    root = Path(repo)
    existing = sorted(p for p in out if (root / p).exists())
    # a path inside another path of the scope is run once
    return [p for p in existing if not any(q != p and (q in (".", "") or
                                                       p.startswith(q.rstrip("/") + "/"))
                                           for q in existing)]


def take_baseline(nodes: Sequence[PlanNode], ctx: GateContext, *,
                  timeout: float = 600.0) -> tuple[Baseline, str | None]:
    """§3.5 baseline at CP0: run the plan's tests once on the unchanged repo. Returns the
    baseline and an environment problem (one line) when the environment cannot run them."""
    scope = baseline_scope(nodes, ctx.repo, ctx.exercised)
    if not scope:
        return Baseline(0, {}, ()), None
    env = bytecode_env(ctx, ctx.env)
    run = run_tests(ctx.command, ctx.interp, ctx.repo, scope, timeout=timeout, env=env)
    base = Baseline(run.rc, {k: o.status for k, o in run.outcomes.items()}
                    if run.outcomes is not None else None, tuple(scope))
    problem = None
    if run.timed_out:
        problem = f"the baseline run of {len(scope)} test path(s) timed out after {timeout:g}s"
    elif run.rc not in (0, 1) or run.outcomes is None:
        texts = [run.output]
        problem = environment_problem(run, ctx.repo, ctx.interp, texts)
    elif run.outcomes:
        # every test of the scope failing for a module the environment lacks
        msgs = [o.message for o in run.outcomes.values() if o.status in ("failed", "error")]
        if msgs and len(msgs) == len(run.outcomes):
            problem = environment_problem(run, ctx.repo, ctx.interp, msgs)
    return base, problem


def run_check(node: PlanNode, repo: Path, *, timeout: float = 120.0,
              ctx: GateContext | None = None) -> Verdict:
    """§3.5 step 1: run the node's validation in `repo` with the repo's interpreter and test
    command, plus the build check (`check_node`). Without `ctx`: the interpreter
    `find_python(repo)` finds, the repo's configured test command, no baseline.

    pass iff both succeed. `test_calls` is 1 when the node's own check ran (it counts against
    the driver's max_test_calls), 0 when it could not run (unverifiable, refused, build broken).
    """
    from plan07.gate.grammar import check_env
    from plan07.gate.interpreter import find_python
    from plan07.gate.testcommand import load_command

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
