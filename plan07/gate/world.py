"""The plan's gate (§3.5): its check world fixed at CP0 and read back at each `complete`. I/O:
the CP0 baseline sidecar beside plan.json, the repo's files (fingerprints); the checks themselves
are plan07.gate.checks.

- `prepare`: at CP0, the repo's interpreter (plan07.gate.runner), its test command
  (plan07.gate.testcommand) and the baseline run of the plan's tests (`baseline.<digest>.json`).
  An environment that cannot run them defers the baseline (one warning, the plan is made): the
  first `complete` whose interpreter can takes it, on the CP0 content (plan07.gate.snapshot).
- `checked_run`: one node's check, with the repo fingerprinted before and after it: a file
  changed while the check ran makes it inconclusive, so a checkpoint certifies the content the
  check ran on (plan07.plan.criteria.record_pass notes it). A `regression` check runs the tests
  of the modules changed since CP0 (plan07.gate.regression); a check with no timeout given gets
  one sized from the CP0 run (plan07.gate.scope).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plan07 import caps, progress
from plan07.errors import InputError
from plan07.gate.baseline import Baseline
from plan07.gate.checks import (
    EXCLUDE_DIRS,
    GateContext,
    GateRun,
    defined_test,
    run_node,
)
from plan07.gate.interpreter import Interpreter
from plan07.gate.testcommand import TestCommand
from plan07.vocab import classify

if TYPE_CHECKING:
    from plan07.gate.cp0 import Adopted
    from plan07.model import (
        Evidence,
        GateInfo,
        Obligation,
        ObservedChange,
        PlanArtifact,
        PlanNode,
        Verdict,
    )

_BASELINE_NAME = re.compile(r"baseline(\.[0-9a-f]{16})?\.json")


def fingerprint(repo: Path, *, keep: Sequence[Path] = ()) -> str | None:
    """The repo's content now: its git tree id (`checkpoint.tree_of`), or outside git a digest
    of every file's path, size and mtime (the state dir and virtualenvs left out)."""
    import hashlib

    from plan07.store import checkpoint

    if checkpoint.is_git_tree(repo):
        return checkpoint.tree_of(repo, keep=keep)
    from plan07.store.boundedio import walk

    kept = [Path(k).resolve() for k in keep]
    h = hashlib.sha256()
    root = Path(repo)
    for dirpath, dirnames, filenames in walk(root, what="the repository"):
        dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDE_DIRS and not any(
            (Path(dirpath) / d).resolve() == k for k in kept))
        for f in sorted(filenames):
            p = Path(dirpath) / f
            try:
                st = p.stat()
            except OSError:
                continue
            h.update(f"{p.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n"
                     .encode("utf-8", "surrogateescape"))
    return "stat:" + h.hexdigest()


def prepare_gate(repo: Path, nodes: Sequence[PlanNode], exercised: Mapping[str, Sequence[str]],
                 *, python: str | Path | None = None, test_command: str | None = None,
                 env: Mapping[str, str], state_dir: Path,
                 timeout: float = caps.BASELINE_TIMEOUT_S) -> tuple[GateInfo, Baseline]:
    """At CP0: the repo's interpreter, its test command, the baseline run of the plan's tests
    and the content it ran on. An environment that cannot run the tests (a module or a pytest
    plugin it lacks, a run past `timeout`) defers the baseline (`baseline_deferred` says why):
    the plan is made, and the first `complete` that can takes it (`take_deferred`)."""
    from plan07.gate.interpreter import find_python
    from plan07.gate.regression import configured_mode
    from plan07.gate.testcommand import load_command
    from plan07.model import GateInfo

    interp = find_python(repo, python)
    check_interpreter(interp, repo, env)
    command = load_command(repo, test_command)
    mode = configured_mode(repo)
    ctx = GateContext(repo, interp, command, exercised=exercised, env=env)
    tree = fingerprint(repo, keep=[state_dir])
    info = GateInfo(
        python=interp.path, python_source=interp.source,
        test_command=None if command.source == "default" else list(command.argv),
        test_ids=command.test_ids, test_root=command.test_root, command_source=command.source,
        cp0_tree=tree, regression=mode)
    from plan07.gate.cp0 import adopt, baseline_run

    with progress.step("baseline: the plan's tests on the unchanged repository"):
        base = adopt(info, nodes, ctx, *baseline_run(nodes, ctx, timeout=timeout))
    return info, base


def check_interpreter(interp: Interpreter, repo: Path, env: Mapping[str, str]) -> None:
    """InputError (`--python`) unless the interpreter runs Python 3: an executable that is not
    one (`--python /bin/false`) is the environment's fault, never a node's."""
    from plan07.gate.interpreter import run_env
    from plan07.gate.runner import run_argv

    rc, out = run_argv([interp.path, "-c", "import sys; print('plan07-python', *sys.version_info"
                        "[:2])"], repo, 60.0, run_env(interp, env))
    if rc != 0 or "plan07-python 3 " not in out:
        why = " ".join(out.split())[:160] or f"exit {rc}, no output"
        raise InputError(f"{interp.path} (from {interp.source}) is not a working Python 3 "
                         f"interpreter ({why}); pass the repo's Python", field="--python")


def the_repo(art: PlanArtifact) -> Path:
    """The plan's repository, refused (InputError) unless it is the one the plan was made for
    (docs/safety.md "Hostile input"): a directory, and where the plan took a CP0 snapshot, the
    one holding it (a plan.json edited to name another folder, `/` say, never has the gate walk
    it)."""
    from plan07.store.git import ref_target

    repo = Path(art.repo or ".")
    if not repo.is_dir():
        raise InputError("repository directory not found", field="repo", source=str(repo))
    ref = art.checkpoints[0].git_ref if art.checkpoints else None
    if ref and ref_target(repo, ref) is None:
        raise InputError(f"it does not hold this plan's CP0 snapshot ({ref}): a plan's "
                         "repository is the one it was made for; restore plan.json or re-run "
                         "`plan07 plan`", field="repo", source=str(repo))
    return repo


def git_tree(tree: str | None) -> str | None:
    """A fingerprint as a git tree id to snapshot, or None (a stat digest outside git)."""
    return tree if tree and not tree.startswith("stat:") else None


def prepare(repo: Path, art: PlanArtifact, evidence: Evidence, *, python: str | Path | None,
            test_command: str | None, state_dir: Path) -> tuple[GateInfo, Baseline]:
    """`prepare_gate` for a new plan: its gate (recorded on `art` too) and the baseline."""
    from plan07.gate.grammar import check_env
    from plan07.gate.scope import target_tests

    exercised = target_tests(evidence, art.nodes, _members(art))
    info, base = prepare_gate(repo, art.nodes, exercised, python=python,
                              test_command=test_command, env=check_env(repo=repo),
                              state_dir=state_dir)
    if info.baseline_file:
        info.baseline_file = baseline_name(base)
    art.gate = info
    return info, base


def _baseline_text(base: Baseline) -> str:
    import json

    return json.dumps(base.to_json(), ensure_ascii=False)


def baseline_name(base: Baseline) -> str:
    """The baseline sidecar's file name, from its content (as the evidence sidecar's): a new
    plan's baseline, written before its plan.json, never overwrites the one the plan still in
    place names (a crash between the two leaves that plan whole, and the new file unnamed)."""
    import hashlib

    digest = hashlib.sha256(_baseline_text(base).encode("utf-8")).hexdigest()[:16]
    return f"baseline.{digest}.json"


def last_checkpoint_ref(art: PlanArtifact) -> str | None:
    """The git snapshot of the last checkpoint the plan reached (None outside git)."""
    from plan07.plan.artifact import reached_checkpoints

    reached = reached_checkpoints(art)
    return next((c.git_ref for c in reversed(art.checkpoints) if c.git_ref and c.id in reached),
                None)


def observed_edit(art: PlanArtifact, run: GateRun, evidence: Evidence,
                  tree: str | None) -> list[ObservedChange]:
    """What the handed-out node's edit changed since the last checkpoint, read off `tree` (the
    content its check would run on), entity by entity (plan07.gate.observe)."""
    from plan07.gate.observe import observe

    return observe(run.repo, last_checkpoint_ref(art), tree, evidence)


class Checked(NamedTuple):
    """A node's check run: its verdict, the content it ran on, and the CP0 baseline it took
    when the plan's was deferred (to keep on the plan: `keep_adopted`)."""

    verdict: Verdict
    tree: str | None
    adopted: Adopted | None = None


def checked_run(art: PlanArtifact, state_dir: Path, run: GateRun, evidence: Evidence, *,
                timeout: float | None, tree: str | None = None,
                python: str | Path | None = None) -> Checked:
    """§3.3 step 4: run the handed-out node's check on the content fingerprinted before it
    (`tree`, when the caller took it), compared after it (an edit made while it ran is not
    certified: inconclusive). A deferred CP0 baseline is taken first (with `python` when
    given, plan07.gate.cp0); a `regression` check runs the tests of what changed since CP0;
    `timeout` None: sized from the CP0 run."""
    from plan07.gate import bytecode, cp0
    from plan07.gate.grammar import check_env
    from plan07.gate.scope import sized_timeout

    if tree is None:
        tree = fingerprint(run.repo, keep=[state_dir])
    ctx = context_for(art, state_dir, evidence, tree=tree, env=check_env(repo=run.repo),
                      python=python)
    adopted = None
    if art.gate is not None and (art.gate.baseline_deferred or python is not None):
        adopted = cp0.take_deferred(art, ctx, tree, timeout=timeout)
        if adopted.info.baseline_deferred:
            return Checked(cp0.not_judged(run, adopted.info.baseline_deferred), tree)
        ctx.baseline = adopted.base
    gate = adopted.info if adopted else art.gate
    if any(classify(c) == "regression" for c in [m.validation for m in run.members]
           or [run.node.validation]):
        verdict = cp0.regression_scope(ctx, run, gate, tree, art)
        if verdict is not None:  # nothing changed since CP0: the plan's changes were not made
            return Checked(verdict, tree, adopted)
    if timeout is None:
        covered = len(ctx.baseline.scope) if ctx.baseline else 0
        timeout = sized_timeout(gate, scope=len(ctx.regression or ()), covered=covered)
    verdict = run_node(run.node, run.members, run.repo, timeout=timeout, ctx=ctx)
    if fingerprint(run.repo, keep=[state_dir]) != tree:
        if ctx.pycache is not None:  # compiled from files changing under it: none kept
            bytecode.sweep(ctx.pycache, run.repo, since_ns=ctx.swept_ns)
        verdict = verdict.model_copy(update={
            "passed": False, "inconclusive": "the repository's files changed while the check "
            "ran; nothing was recorded: run `plan07 complete` again"})
    return Checked(verdict, tree, adopted)


def keep_adopted(art: PlanArtifact, state_dir: Path, adopted: Adopted | None) -> None:
    """A CP0 baseline taken late (`checked_run`), kept: its sidecar written beside plan.json
    (content-named, before plan.json names it) and the plan's gate updated."""
    if adopted is None or art.gate is None or not art.gate.baseline_deferred:
        return
    info = adopted.info
    if info.baseline_file:
        info.baseline_file = baseline_name(adopted.base)
        write_baseline(state_dir, info, adopted.base)
    art.gate = info.model_copy(update={"validated": art.gate.validated})


def write_baseline(state_dir: Path, info: GateInfo, base: Baseline) -> None:
    """The baseline sidecar beside plan.json, under the name the new plan gives it (none when
    the plan ran no baseline). Written before plan.json: whatever was there stays."""
    from plan07.store.boundedio import write_atomic

    if info.baseline_file:
        write_atomic(state_dir / info.baseline_file, _baseline_text(base))


def drop_baselines_except(state_dir: Path, keep: str | None) -> None:
    """After plan.json is written: the baseline sidecars it does not name go (an older plan's,
    or a crashed plan's that was never named)."""
    for p in state_dir.glob("baseline*.json"):
        if p.name != keep and _BASELINE_NAME.fullmatch(p.name) and p.is_file():
            p.unlink(missing_ok=True)


def read_baseline(state_dir: Path, info: GateInfo) -> Baseline | None:
    import json

    if not info.baseline_file:
        return Baseline(0, {}, ())
    if not _BASELINE_NAME.fullmatch(info.baseline_file):
        raise InputError(f"the plan names a baseline file {info.baseline_file!r} plan07 never "
                         "writes; re-run `plan07 plan`", source=str(state_dir))
    path = state_dir / info.baseline_file
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the CP0 baseline: {exc}; re-run `plan07 plan`",
                         source=str(path)) from None
    if not isinstance(data, dict):
        raise InputError("corrupt CP0 baseline (not an object); re-run `plan07 plan`",
                         source=str(path))
    return Baseline.from_json(data)


def _members(art: PlanArtifact) -> dict[str, list[Obligation]]:
    return {k: list(v) for k, v in art.collapsed.items()}


def context_for(art: PlanArtifact, state_dir: Path, evidence: Evidence, *, tree: str | None,
                env: Mapping[str, str], python: str | Path | None = None) -> GateContext:
    """The gate's context for the plan's next check: its recorded interpreter (`python`, when
    given, while the CP0 baseline is deferred) and command, the CP0 baseline, the tests of each
    modify target (plan07.gate.scope), the .py files changed since the last reached checkpoint
    (`tree`: the content now), and whether a change was validated already."""
    from plan07.gate import bytecode
    from plan07.gate.interpreter import find_python
    from plan07.gate.scope import target_tests
    from plan07.gate.testcommand import load_command
    from plan07.store import checkpoint

    repo = Path(art.repo or ".")
    exercised = target_tests(evidence, art.nodes, _members(art))
    gate = art.gate
    if gate is None:  # a plan made before the gate recorded its world
        return GateContext(repo, find_python(repo), load_command(repo), exercised=exercised,
                           env=env, pycache=bytecode.cache_dir())
    if python is not None:
        if not gate.baseline_deferred:
            raise InputError("the plan's interpreter was fixed at CP0, where its baseline ran "
                             f"({gate.python}); --python is for a plan whose baseline is not "
                             "taken yet", field="--python")
        interp = find_python(repo, python)
    elif not Path(gate.python).is_file():
        raise InputError(f"the plan's interpreter {gate.python} is gone; re-run `plan07 plan "
                         "--python PATH`", field="--python")
    else:
        interp = Interpreter(gate.python, gate.python_source)  # type: ignore[arg-type]
    command = TestCommand() if not gate.test_command else TestCommand(
        tuple(gate.test_command), "dotted" if gate.test_ids == "dotted" else "pytest",
        gate.test_root, gate.command_source)
    changed: list[str] | None = None
    last = last_checkpoint_ref(art)
    if last and tree and not tree.startswith("stat:"):
        changed = [p for p in checkpoint.changed_files(repo, last, tree) if p.endswith(".py")]
    done = {n.id for n in art.nodes if n.state == "complete"}
    landed = any(n.id in done and n.obligation == "modify" and not defined_test(n)
                 for n in art.nodes)
    return GateContext(repo, interp, command, read_baseline(state_dir, gate), exercised,
                       changed, landed, env, bytecode.cache_dir(), cp0_tree=gate.cp0_tree)
