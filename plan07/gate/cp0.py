"""The gate's runs against CP0 (README "No false done"). I/O: runs the repo's tests, on the CP0
content where the tree has moved on (plan07.gate.snapshot).

- `baseline_run`, `adopt`: the CP0 run of the plan's tests, and what the plan's gate records of
  it (its numbers, the nodes whose check it passed, or why it is deferred);
- `take_deferred`: a plan made where no interpreter could run its tests has no CP0 baseline yet;
  the first `complete` whose interpreter can (the plan's, its environment fixed since, or the
  one `--python` names) takes it, on the CP0 content, never on the edited tree;
- `regression_scope`: what the plan's `regression` check runs, the tests of every module
  changed since CP0 (plan07.gate.regression); none changed is a failure (no false "done").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from plan07 import caps
from plan07.gate.baseline import Baseline
from plan07.gate.checks import GateContext, GateRun, planned_checks, take_baseline
from plan07.model import GateInfo, PlanArtifact, PlanNode, Verdict
from plan07.vocab import classify

BASELINE_FILE = "baseline.json"  # a plan made before the name held the content's digest


@dataclass
class Adopted:
    """The plan's gate with the CP0 baseline a late run took (or, in `info.baseline_deferred`,
    why it still could not)."""

    info: GateInfo
    base: Baseline


def baseline_run(nodes: Sequence[PlanNode], ctx: GateContext, *, timeout: float
                 ) -> tuple[Baseline, str | None, float]:
    """The CP0 run of the plan's tests in `ctx` (its repo: the work tree at CP0, or a copy of
    the CP0 content): the baseline, the environment problem that kept it from judging (None:
    none), the seconds it took."""
    import time

    start = time.monotonic()
    base, problem = take_baseline(nodes, ctx, timeout=timeout)
    return base, problem, round(time.monotonic() - start, 2)


def adopt(info: GateInfo, nodes: Sequence[PlanNode], ctx: GateContext, base: Baseline,
          problem: str | None, seconds: float) -> Baseline:
    """Record a CP0 run on the plan's gate: the baseline's numbers and which nodes' checks
    passed on it, or, when the environment could not run it, why it is deferred."""
    from plan07.gate.scope import passed_at_cp0

    if problem:
        info.baseline_deferred = problem
        info.baseline_file = None
        return Baseline(0, {}, ())
    failing = base.failing()
    info.baseline_deferred = None
    info.baseline_file = BASELINE_FILE if base.scope else None
    info.baseline_tests = sum(1 for k in (base.outcomes or {}) if "::" in k)
    info.baseline_failing, info.baseline_failing_total = failing[:16], len(failing)
    info.baseline_seconds = seconds
    ctx.baseline = base
    info.passed_at_cp0 = passed_at_cp0(planned_checks(nodes, ctx), base)
    return base


def take_deferred(art: PlanArtifact, ctx: GateContext, tree: str | None, *,
                  timeout: float | None) -> Adopted:
    """Run the plan's CP0 baseline now (module docstring): on the CP0 content written to a
    temporary folder (git), in place when the tree is still the CP0 content, else not at all
    (no baseline: every failure is the node's)."""
    from plan07.gate.snapshot import materialized, snapshot_env

    assert art.gate is not None
    info = art.gate.model_copy(deep=True)
    info.python, info.python_source = ctx.interp.path, ctx.interp.source
    limit = timeout or caps.BASELINE_TIMEOUT_S
    cp0 = info.cp0_tree
    if cp0 and not cp0.startswith("stat:") and cp0 != tree:
        with materialized(ctx.repo, cp0) as copy:
            here = GateContext(copy, ctx.interp, ctx.command, exercised=ctx.exercised,
                               env=snapshot_env(ctx.env, ctx.repo, copy))
            run = baseline_run(art.nodes, here, timeout=limit)
    elif cp0 == tree:
        run = baseline_run(art.nodes, ctx, timeout=limit)
    else:  # outside git, edited since CP0: the CP0 content is gone
        run = (Baseline(0, {}, ()), None, 0.0)
    problem = run[1]
    if problem:
        info.baseline_deferred = (f"{problem} (the CP0 baseline is not taken yet: `plan07 "
                                  "complete ID --python PATH` with an environment that runs the "
                                  "repo's tests)")[: caps.FIELD_MAX_CHARS]
        return Adopted(info, Baseline(0, {}, ()))
    base = adopt(info, art.nodes, ctx, *run)
    return Adopted(info, base)


def not_judged(run: GateRun, why: str) -> Verdict:
    """The verdict of a check that did not run: the environment, not the node."""
    return Verdict(node_id=run.node.id, passed=False, check=run.node.validation,
                   kind=classify(run.node.validation), inconclusive=why)


def regression_scope(ctx: GateContext, run: GateRun, gate: GateInfo | None, tree: str | None,
                     art: PlanArtifact) -> Verdict | None:
    """Fill `ctx.regression` with what the regression check runs; a failed Verdict (nothing
    checked) when the plan changed no file since CP0."""
    from plan07.gate import regression

    changed = regression.changed_files(ctx.repo, gate.cp0_tree if gate else None, tree)
    if changed is not None and not changed:
        return Verdict(node_id=run.node.id, passed=False, check=run.node.validation,
                       kind="regression", output_tail="the plan changed no file since CP0: its "
                       "changes were never made, so there is nothing to regress and nothing "
                       "is done; make them, then `plan07 complete` this node again")
    targets = [n.target_entity for n in art.nodes
               if n.obligation == "modify" and n.status != "alternative"]
    covered = ctx.baseline.scope if ctx.baseline else ()
    ctx.regression = tuple(regression.scope(
        Path(ctx.repo), changed, mode=gate.regression if gate else "modules",
        covered=covered, targets=targets))
    return None
