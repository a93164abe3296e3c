"""The library API a harness drives: `Planner` (plan, next, report, complete) and the `PLAN` feature
flag router (§8). I/O: state files via plan07.state, checks via plan07.validate.

Every state change is one read-modify-write of plan.json under its lock (`_transaction`), so two
processes driving one plan never lose an update. The private steps are kept small so the fail path
(scoped replan), feedback, rollback and resume (issue 7) slot in: `_reschedule`,
`_replace_subgraph`, `_on_fail`, `_on_checkpoint`, `_record`.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from plan07 import caps, driver, state
from plan07.errors import InputError, ModelOutputError, Plan07Error, PlanStateError
from plan07.model import (
    AuditRow,
    Checkpoint,
    Decomposition,
    DerivedEdge,
    DriverView,
    Evidence,
    Feedback,
    NodeBounds,
    Obligation,
    OrderResult,
    PlanArtifact,
    PlanDAG,
    PlanNode,
    PlanSchedule,
    Requirement,
    Revision,
    Usage,
    Verdict,
    Violation,
)
from plan07.planner import schedule, sort_ids, topological_order

if TYPE_CHECKING:
    from plan07.checkpoint import Restored
    from plan07.llm import LLMClient

FLAG_ENV = "PLAN"
Route = Literal["plan07", "current"]


def route(task: object | None = None, *, env: Mapping[str, str] | None = None) -> Route:
    """§8 feature flag: `PLAN=plan07|current` (default `current`) decides which path a harness
    takes for `task`; switching back needs no code change. `task` is accepted so the A/B harness
    (§7) can route per task later; today the flag alone decides."""
    del task
    value = (os.environ if env is None else env).get(FLAG_ENV, "").strip() or "current"
    if value not in ("plan07", "current"):
        raise InputError(f"PLAN={value!r}; use PLAN=plan07 or PLAN=current", field=FLAG_ENV)
    return "plan07" if value == "plan07" else "current"


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """True iff the harness should plan with plan07 (PLAN=plan07)."""
    return route(env=env) == "plan07"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Planner:
    """One persisted plan in `state_dir`. Create it with `Planner.create`, reopen it with
    `Planner.open`; every method re-reads plan.json under the lock, so several processes (or
    Planner objects) may drive the same plan."""

    def __init__(self, state_dir: Path, client: LLMClient | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.client = client  # the model client for scoped re-decomposition (None: art.llm)

    # -----------------------------------------------------------------------------------------
    # construction

    @classmethod
    def create(
        cls,
        request: str,
        *,
        repo: Path,
        evidence: Evidence | None = None,
        llm: str | LLMClient = "builtin",
        state_dir: Path | None = None,
        engine: str = "pydatalog",
        task_text: str | None = None,
        plan_id: str | None = None,
        now: str | None = None,
    ) -> Planner:
        """The whole pipeline: canonicalize -> decompose (the ONE model call) -> order (rules) ->
        schedule -> persist. Raises before anything is written when a stage refuses: the plan
        is built and size-checked in memory first, and only then are an older plan's checkpoints
        cleared, the CP0 snapshot taken and files written. `plan_id` / `now` fix the id and the
        timestamps (tests); by default the id is fresh and unique (`new_plan_id`)."""
        from plan07 import checkpoint
        from plan07.canonicalize import canonicalize
        from plan07.decompose import decompose
        from plan07.evidence import build_evidence, neighbourhood
        from plan07.llm import make_client
        from plan07.obliggraph import derive_order

        repo = Path(repo)
        if not repo.is_dir():
            raise InputError("repository directory not found", field="--repo", source=str(repo))
        requirement = canonicalize(request, task_text)
        if evidence is None:
            evidence = build_evidence(repo, request=request)
        client = make_client(llm) if isinstance(llm, str) else llm
        dec = decompose(requirement, evidence, client)
        if not dec.obligations:
            why = "re-scope it into smaller requests" if dec.rescope else "re-canonicalize it"
            raise ModelOutputError(
                f"the decomposition gave no obligations ({dec.reason or 're_decompose'}); "
                f"nothing was planned: {why} (§4 fallback)",
                raw=dec.raw or "",
            )
        order = derive_order(dec.obligations, evidence, engine=engine)
        kept = neighbourhood(evidence, [o.target_entity for o in dec.obligations], hops=2)
        artifact = build_artifact(
            requirement, dec.obligations, order, kept, repo=repo.resolve(), engine=engine,
            llm=llm if isinstance(llm, str) else getattr(client, "name", "client"),
            usage=[dec.usage] if dec.usage else [], now=now or _now(), plan_id=plan_id,
        )
        if plan_id is not None:
            checkpoint.ref_name(plan_id, "CP0")  # a plan_id that cannot name a ref: refused
        d = state.state_dir(state_dir)
        planner = cls(d, None if isinstance(llm, str) else client)
        cp0 = artifact.checkpoints[0]
        planner._record(artifact, cp0.id, "checkpoint", _checkpoint_trace(cp0), time=now)
        # everything that can refuse runs before anything is written (issue: a refused plan
        # must leave no file, lock, ref, and an older plan in `d` whole)
        ref = checkpoint.planned_ref(d, repo.resolve(), artifact.plan_id, cp0.id)
        artifact.checkpoints[0] = cp0.model_copy(update={"git_ref": ref})
        prepared = state.prepare(artifact)  # refused (cap named) here, nothing written yet
        with state.lock(d):
            checkpoint.clear(d)  # a new plan in this state dir: older records are not ours
            taken = checkpoint.record(d, artifact, artifact.checkpoints[0], check_owner=False)
            if taken.git_ref != ref:
                raise PlanStateError(f"the CP0 snapshot went to {taken.git_ref}, not {ref}")
            state.write(d, artifact, prepared)
            # sidecars of a plan this one replaced (only after the save, so a refused plan
            # leaves the old one whole)
            used = {artifact.evidence_file} | {
                o.file for o in (artifact.audit_overflow, artifact.revisions_overflow) if o}
            for stale in (state.AUDIT_OVERFLOW, state.REVISIONS_OVERFLOW, state.EVIDENCE_FILE):
                if stale not in used:
                    (d / stale).unlink(missing_ok=True)
        return planner

    @classmethod
    def open(cls, state_dir: Path | None = None) -> Planner:
        """Reopen a persisted plan (validated with the shipped schema)."""
        d = state.state_dir(state_dir)
        state.load(d)
        return cls(d)

    # -----------------------------------------------------------------------------------------
    # what a harness reads

    @property
    def artifact(self) -> PlanArtifact:
        """The §3.7 artifact as it is on disk now."""
        return state.load(self.state_dir)

    @property
    def events(self) -> list[dict[str, Any]]:
        """One event per state transition (node, event, verdict), from the full audit trail."""
        art = self.artifact
        verdicts = {"passed": "pass", "failed": "fail"}
        return [
            {"node": r.obligation, "event": r.event, "verdict": verdicts.get(r.event),
             "time": r.time}
            for r in state.full_audit(self.state_dir, art)
        ]

    @property
    def usage(self) -> list[Usage]:
        """Token usage, one entry per model call (the A/B harness sums these, §7)."""
        return list(self.artifact.usage)

    def dag(self) -> PlanDAG:
        return dag_of(self.artifact)

    def termination_blockers(self) -> list[str]:
        """Why the plan may not terminate yet (empty: it may). When `next()` returns None, a
        harness must check this: a plan ends only at checkable or confirmed predicates (§3.1)."""
        from plan07.validate import termination_blockers

        return termination_blockers(self.artifact)

    def confirm(self, criteria: Iterable[int] | Literal["all"]) -> list[int]:
        """§3.1 step 2: the user confirms acceptance criteria (1-based numbers, or "all": every
        derived criterion and every command plan07 does not run, still unsettled). A criterion
        naming a test no validation runs may be confirmed by its number only. Recorded in the
        audit and the revision history; returns the newly confirmed numbers."""
        from plan07.validate import criteria_status

        with self._transaction() as art:
            status = criteria_status(art)
            if criteria == "all":
                wanted = [c.index for c in status if c.confirmable]
            else:
                wanted = sorted(set(criteria))
                for i in wanted:
                    if not 1 <= i <= len(status):
                        raise InputError(f"no acceptance criterion {i}; the plan has "
                                         f"1..{len(status)} (`plan07 status` lists them)",
                                         field="criteria")
                    c = status[i - 1]
                    if c.kind == "named":
                        raise InputError(f"criterion {i} was named by the request and needs no "
                                         "confirmation", field="criteria")
                    if c.covered_by:
                        raise InputError(f"criterion {i} is already proven by the passing "
                                         f"validation of {', '.join(c.covered_by)}",
                                         field="criteria")
            new = [i for i in wanted if not status[i - 1].confirmed]
            if not new:
                return []
            art.confirmed_criteria = sorted(set(art.confirmed_criteria or []) | set(new))
            nums = ", ".join(map(str, new))
            texts = "; ".join(repr(status[i - 1].text[:60]) for i in new)
            self._record(art, "plan", "confirmed",
                         f"acceptance criteria {nums} confirmed by the user: {texts}"
                         [: caps.FIELD_MAX_CHARS])
            self._revise(art, f"confirmed acceptance criteria {nums} (§3.1 step 2)", "user")
            return new

    # -----------------------------------------------------------------------------------------
    # driving

    def next(self) -> DriverView | None:
        """§3.4: the single actionable obligation (the one handed out, until it completes);
        None when nothing is left to hand out: the plan is done, or waits on a failed node whose
        replans are spent. Then `termination_blockers()` says whether the plan may terminate."""
        with self._transaction() as art:
            nodes = {n.id: n for n in art.nodes}
            current = nodes.get(art.active or "")
            if current is None or current.state == "complete" or current.status != "ready":
                current = driver.pick(dag_of(art), skip=stuck_nodes(art))
            if current is None:
                art.active = None
                return None
            if art.active != current.id:
                art.active = current.id
                self._record(art, current.id, "handed_out",
                             f"handed out: {current.obligation} {current.target_entity}")
            return driver.view(current)

    def report_edit(self, node_id: str, path: str | Path) -> None:
        """The harness edited `path` for `node_id` (the handed-out node); a 6th file is refused."""
        with self._transaction() as art:
            driver.require_active(art.active, node_id)
            rel = _relative(path, art.repo)
            b = art.bounds.get(node_id, NodeBounds())
            edited = driver.admit_edit(node_id, b.edited_files, rel)
            art.bounds[node_id] = b.model_copy(update={"edited_files": edited})
            node = _node(art, node_id)
            self._record(art, node_id, "edit",
                         f"edit accepted because {node_id} is the active obligation "
                         f"({node.obligation} {node.target_entity})", accepted_edit=rel)

    def report_test_call(self, node_id: str) -> None:
        """The harness ran a test for `node_id`; the 11th call is refused."""
        with self._transaction() as art:
            driver.require_active(art.active, node_id)
            b = art.bounds.get(node_id, NodeBounds())
            calls = driver.admit_test_call(node_id, b.test_calls)
            art.bounds[node_id] = b.model_copy(update={"test_calls": calls})

    def complete(self, node_id: str, *, timeout: float = 120.0) -> Verdict:
        """§3.5: run the node's validation (outside the lock), then record the verdict. pass ->
        complete, reschedule, checkpoints reached; fail -> `_on_fail`. Only the handed-out node
        (§3.4: the single actionable obligation) is validated; `timeout` must be > 0 seconds."""
        if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
            raise InputError(f"timeout {timeout!r} must be a number of seconds > 0",
                             field="--timeout")
        art = self.artifact
        node = _node(art, node_id)
        if node.state == "complete":
            raise PlanStateError(f"obligation {node_id!r} is already complete; run `plan07 next`")
        if node_id in stuck_nodes(art):
            raise PlanStateError(_stuck_text(node_id, art.bounds[node_id].replans))
        if node.status != "ready":
            done = {n.id for n in art.nodes if n.state == "complete"}
            waiting = [d for d in node.dependencies if d not in done]
            why = f"waits on {', '.join(waiting)}" if waiting else "is an alternative branch"
            raise PlanStateError(f"obligation {node_id!r} is {node.status}: it {why}; "
                                 "complete those first (`plan07 next` shows the ready one)")
        driver.require_active(art.active, node_id)  # §3.4: only the handed-out node
        if not art.repo:
            raise PlanStateError("the plan records no repository; re-run `plan07 plan --repo DIR`")
        members, repo = art.collapsed.get(node_id, []), Path(art.repo)
        # §3.4 bounds: the gate's own checks count against max_test_calls (issue 7); they are
        # reserved before anything runs, so the 11th call is refused, not made.
        checks = _runnable_checks(node, members, repo)
        if checks:
            with self._transaction() as art:
                b = art.bounds.get(node_id, NodeBounds())
                calls = driver.admit_gate_calls(node_id, b.test_calls, checks)
                art.bounds[node_id] = b.model_copy(update={"test_calls": calls})
        try:
            verdict = self._validate(node, members, repo, timeout)
        except BaseException:
            with self._transaction() as art:
                _refund_test_calls(art, node_id, checks)
            raise
        with self._transaction() as art:
            _refund_test_calls(art, node_id, checks - verdict.test_calls)
            node = _node(art, node_id)
            # The check ran outside the lock: another process may have settled this node
            # meanwhile. Its verdict stands; this one is discarded, never recorded twice.
            stale = node.state == "complete" or art.active != node_id
            if not stale and verdict.passed:
                reached_before = reached_checkpoints(art)
                node.state = "complete"
                art.bounds.pop(node_id, None)
                art.active = None
                self._record(art, node_id, "passed", f"validated: {verdict.check} passed")
                self._reschedule(art)
                for cp in art.checkpoints:
                    if cp.id in reached_checkpoints(art) and cp.id not in reached_before:
                        self._on_checkpoint(art, cp)
            elif not stale:
                node.state = "failed"
                self._record(art, node_id, "failed",
                             f"validation failed: {verdict.check} ({verdict.kind})")
                self._on_fail(art, node_id, verdict)
        if stale:
            raise PlanStateError(
                f"obligation {node_id!r} was settled by another process while its check ran; "
                "this verdict is discarded: run `plan07 next`"
            )
        return verdict

    # -----------------------------------------------------------------------------------------
    # recovery (issue 7): impact feedback, rollback, resume

    def feedback(self, fb: Feedback) -> list[Revision]:
        """§3.6: impact feedback -> add the missing obligations, remove falsified ones, re-walk
        only the touched neighbourhood's edges through the rules; one revision per change, each
        naming its causing obligation. Nodes outside the neighbourhood keep their edges."""
        from plan07.obliggraph import derive_order
        from plan07.revise import check_feedback, merge_evidence, revise, rewalk_scope, splice_edges

        current = self.artifact  # refused before the lock is taken or anything is written
        check_feedback(obligations_of(current), state.evidence_of(self.state_dir, current), fb)
        with self._transaction() as art:
            before = obligations_of(art)
            evidence = merge_evidence(state.evidence_of(self.state_dir, art), fb)
            last = state.full_revisions(self.state_dir, art)[-1:]
            new, touched, revs = revise(before, evidence, fb,
                                        first_rev=(last[0].rev + 1) if last else 1, now=_now())
            removed = sorted({o.id for o in before} - {o.id for o in new})
            self._record(art, fb.caused_by, "feedback",
                         f"impact feedback: {len(fb.impact_edges)} edge(s), "
                         f"{len(fb.falsified_entities) + len(fb.falsified_obligations)} "
                         f"falsification(s) -> {len(revs)} revision(s)")
            if not revs:
                return []
            scope = rewalk_scope(new, touched)
            walked = derive_order(scope, evidence, engine=art.engine) if scope else OrderResult()
            hit = set(touched) | set(removed)
            violations = [v for v in art.violations if not set(v.nodes) & hit]
            violations += [v for v in walked.violations if set(v.nodes) & set(touched)]
            states = {m: n.state for n in art.nodes for m in (n.members or [n.id])}
            art.nodes = [PlanNode(**o.model_dump(), state=states.get(o.id, "pending"))
                         for o in new]
            art.collapsed = {}
            art.edges = splice_edges(art.edges, walked.edges, touched, removed)
            art.violations = violations
            art.evidence, art.evidence_file = evidence, None
            if art.active in removed:
                art.active = None
            for oid in removed:
                art.bounds.pop(oid, None)
            self._reschedule(art)
            art.revision_history.extend(revs)
            return revs

    def rollback(self, to: str | None = None) -> Restored:
        """Return the repository's files and the plan state to checkpoint `to` (default: the
        last one reached). Refuses outside a git work tree (no file snapshots there). The audit
        and revision history are kept and say what happened; later checkpoints are dropped."""
        return self._return_to(to, files_required=True, event="rolled_back")

    def resume(self) -> DriverView | None:
        """After a crash: continue from the last checkpoint, not from the top. The plan state
        returns to it (and the files, in a git work tree: the in-flight edit is undone); then
        the node to work on is handed out, as `next()` does."""
        self._return_to(None, files_required=False, event="resumed")
        return self.next()

    def _return_to(self, to: str | None, *, files_required: bool, event: str) -> Restored:
        from plan07 import checkpoint

        with self._transaction() as art:
            records = checkpoint.reached(self.state_dir)
            target = checkpoint.pick(records, to)
            cp, repo = target.checkpoint, Path(art.repo) if art.repo else None
            if files_required and cp.git_ref is None:
                raise PlanStateError(
                    f"rollback restores files from git snapshots, and {art.repo or 'the repo'} "
                    "is not a git work tree (no snapshot was taken at "
                    f"{cp.id}); restore the files yourself, or `git init` before planning")
            removed: list[str] = []
            if cp.git_ref is not None and repo is not None:
                removed = checkpoint.restore(repo, cp.git_ref, keep=[self.state_dir])
            history = {k: getattr(art, k) for k in ("audit", "audit_overflow", "revision_history",
                                                    "revisions_overflow", "usage")}
            for name in type(art).model_fields:
                setattr(art, name, getattr(target.plan, name))
            for name, value in history.items():
                setattr(art, name, value)
            art.active = None
            later = [r for r in records if r.seq > target.seq]
            checkpoint.forget(self.state_dir, repo, later)
            files = (f"files restored from {cp.git_ref}" + (f", removed {', '.join(removed)}"
                                                             if removed else "")
                     if cp.git_ref else "files not restored (not a git work tree)")
            self._record(art, cp.id, event, f"{event.replace('_', ' ')} to {cp.id}: plan state "
                         f"as at step {cp.step}; {files}")
            self._revise(art, f"{event.replace('_', ' ')} to checkpoint {cp.id}", cp.id)
            return checkpoint.Restored(cp.id, cp.git_ref, removed)

    # -----------------------------------------------------------------------------------------
    # the private steps (issue 7 extends these: scoped replan, feedback, rollback, resume)

    @contextmanager
    def _transaction(self) -> Iterator[PlanArtifact]:
        """Read-modify-write under the lock; written only when something changed."""
        with state.lock(self.state_dir):
            art = state.load(self.state_dir)
            before = art.model_copy(deep=True)
            yield art
            if art != before:
                state.save(self.state_dir, art)

    def _record(self, art: PlanArtifact, node_id: str, event: str, trace: str, *,
                accepted_edit: str = "", time: str | None = None) -> None:
        art.audit.append(AuditRow(obligation=node_id, accepted_edit=accepted_edit, trace=trace,
                                  event=event, time=time or _now()))

    def _revise(self, art: PlanArtifact, change: str, caused_by: str) -> Revision:
        last = state.full_revisions(self.state_dir, art)[-1:] if state.exists(self.state_dir) \
            else art.revision_history[-1:]
        rev = Revision(rev=(last[0].rev + 1) if last else 1, time=_now(), change=change,
                       caused_by=caused_by)
        art.revision_history.append(rev)
        return rev

    def _reschedule(self, art: PlanArtifact) -> None:
        """Recompute the §3.3 DAG from the plan's obligations, edges and node states."""
        obligations = obligations_of(art)
        dag = schedule(
            obligations, OrderResult(edges=art.edges, violations=art.violations),
            state.evidence_of(self.state_dir, art),
            completed=[n.id for n in art.nodes if n.state == "complete"],
            failed=[n.id for n in art.nodes if n.state == "failed"],
        )
        _apply(art, dag, obligations)

    def _replace_subgraph(
        self, art: PlanArtifact, *, remove: Iterable[str], add: Sequence[Obligation],
        edges: Sequence[DerivedEdge], violations: Sequence[Violation] | None = None,
        change: str, caused_by: str,
    ) -> Revision:
        """Drop `remove`, add `add`, take `edges` as the plan's derived edges (and `violations`
        when given), reschedule; every other node keeps its state. One revision recorded."""
        gone = set(remove)
        states = {m: n.state for n in art.nodes for m in (n.members or [n.id])}
        kept = [o for o in obligations_of(art) if o.id not in gone]
        art.nodes = [PlanNode(**o.model_dump(), state=states.get(o.id, "pending"))
                     for o in [*kept, *add]]
        art.collapsed = {}
        art.edges = list(edges)
        if violations is not None:
            art.violations = list(violations)
        self._reschedule(art)
        return self._revise(art, change, caused_by)

    def _on_fail(self, art: PlanArtifact, node_id: str, verdict: Verdict) -> None:
        """§3.5 step 3: scoped replan. The failed node + its true dependents (only) go to ONE
        scoped decomposition; the rules re-walk that fragment and its direct upstream; it is
        spliced in and rescheduled. Upstream and sibling nodes stay byte-identical. When the
        scoped call falls back, the subgraph is kept and the failed node is offered again."""
        from plan07.validate import scoped_replan

        if art.active == node_id:
            art.active = None
        # a replan count kept across replans (ids are reused), so one failure cannot loop
        spent = art.bounds.get(node_id, NodeBounds())
        if spent.replans >= caps.MAX_REPLANS_PER_NODE:
            self._record(art, node_id, "replan_refused",
                         _stuck_text(node_id, spent.replans)[: caps.FIELD_MAX_CHARS])
            self._reschedule(art)
            return
        attempt = spent.replans + 1
        art.bounds[node_id] = spent.model_copy(update={"replans": attempt})
        evidence = state.evidence_of(self.state_dir, art)
        rev = (state.full_revisions(self.state_dir, art)[-1:] or art.revision_history[-1:])
        prefix = f"{node_id.split('_')[0]}.r{(rev[0].rev + 1) if rev else 1}."

        def redecompose(fragment: Sequence[Obligation]) -> Decomposition:
            from plan07.decompose import decompose_scoped

            try:
                dec = decompose_scoped(art.requirement, evidence, self._client(art),
                                       subgraph=fragment, failure=_failure_text(verdict),
                                       fresh_prefix=prefix)
            except Plan07Error as exc:  # no client / endpoint down: keep the plan, say why
                return Decomposition(obligations=[], re_decompose=True,
                                     reason=f"scoped call not made: {exc.one_line()}")
            if dec.usage:
                art.usage.append(dec.usage)
            return dec

        def rewalk(scope: Sequence[Obligation]) -> OrderResult:
            from plan07.obliggraph import derive_order

            return derive_order(scope, evidence, engine=art.engine)

        try:
            result = scoped_replan(art.nodes, obligations_of(art),
                                   OrderResult(edges=art.edges, violations=art.violations),
                                   node_id, redecompose=redecompose, rewalk=rewalk)
            if not result.accepted:
                raise PlanStateError(result.reason)
            trial = art.model_copy(deep=True)  # the plan changes only if the whole splice holds
            self._replace_subgraph(
                trial, remove=result.removed, add=result.added, edges=result.edges,
                violations=result.violations, caused_by=node_id,
                change=f"scoped replan after {node_id} failed: re-decomposed "
                       f"{', '.join(sort_ids(result.affected))} into "
                       f"{', '.join(sort_ids(o.id for o in result.added))}")
            fresh = {o.id for o in result.added}
            for n in trial.nodes:  # the re-decomposed fragment is new work: pending again
                if (set(n.members) or {n.id}) & fresh and n.state == "failed":
                    n.state = "pending"
            self._reschedule(trial)
        except Plan07Error as exc:  # a fallback, or a fragment the rules/scheduler refuse
            self._record(art, node_id, "replan_kept",
                         f"plan kept as it was: {exc.one_line()}"[: caps.FIELD_MAX_CHARS])
            self._reschedule(art)
            return
        for name in type(art).model_fields:
            setattr(art, name, getattr(trial, name))
        if art.active in result.affected:
            art.active = None
        # bounds: a node gone from the plan leaves them; a reused id keeps its counters (edits,
        # test calls, replans); every node of the fresh fragment carries this replan's count
        fresh = {o.id for o in result.added}
        node_ids = {n.id for n in art.nodes}
        for nid in [*result.affected, *result.removed]:
            if nid not in node_ids:
                art.bounds.pop(nid, None)
        for n in art.nodes:
            if (set(n.members) or {n.id}) & fresh:
                b = art.bounds.get(n.id, NodeBounds())
                art.bounds[n.id] = b.model_copy(update={"replans": max(b.replans, attempt)})
        self._record(art, node_id, "replanned",
                     f"scoped replan of {', '.join(sort_ids(result.affected))} (failed node + "
                     f"true dependents); rules re-walked {', '.join(sort_ids(result.rewalked))}")

    def _client(self, art: PlanArtifact) -> LLMClient:
        """The model client of this plan: the one given to `create`, else `art.llm` (a spec)."""
        from plan07.llm import make_client

        return self.client if self.client is not None else make_client(art.llm)

    def _on_checkpoint(self, art: PlanArtifact, cp: Checkpoint) -> None:
        """A checkpoint was reached (every earlier obligation validated): audited, the repo's
        files snapshotted under refs/plan07/<plan>/<CP> when it is a git tree (`cp.git_ref`),
        and the plan state recorded beside plan.json for rollback/resume."""
        from plan07 import checkpoint

        self._record(art, cp.id, "checkpoint", _checkpoint_trace(cp))
        ref = checkpoint.record(self.state_dir, art, cp).git_ref
        for i, c in enumerate(art.checkpoints):
            if c.id == cp.id:
                art.checkpoints[i] = c.model_copy(update={"git_ref": ref})

    def _validate(self, node: PlanNode, members: Sequence[Obligation], repo: Path,
                  timeout: float) -> Verdict:
        """§3.5 step 1 via plan07.validate.run_check; a collapsed cycle is validated as one unit
        (every member's check must pass)."""
        from plan07.validate import run_check

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


# ---------------------------------------------------------------------------------------------
# pure helpers over artifacts


def _runnable_checks(node: PlanNode, members: Sequence[Obligation], repo: Path) -> int:
    """How many test calls the gate will make for `node`: one per check `run_check` would run
    (a collapsed cycle runs each member's); an unverifiable or refused check makes none."""
    from plan07.validate import parse_check

    runnable = 0
    for check in [m.validation for m in members] or [node.validation]:
        try:
            kind, _ = parse_check(check, repo)
        except InputError:
            continue
        runnable += kind != "unverifiable"
    return runnable


def _refund_test_calls(art: PlanArtifact, node_id: str, unused: int) -> None:
    """Give back reserved gate calls that did not run (the build check failed first)."""
    b = art.bounds.get(node_id)
    if unused > 0 and b is not None:
        art.bounds[node_id] = b.model_copy(update={"test_calls": max(0, b.test_calls - unused)})


def build_artifact(
    requirement: Requirement, obligations: Sequence[Obligation], order: OrderResult,
    evidence: Evidence, *, repo: Path | None, engine: str, llm: str, usage: list[Usage], now: str,
    plan_id: str | None = None,
) -> PlanArtifact:
    """A fresh §3.7 artifact: the schedule of `obligations` with revision 1 and one audit row.
    `plan_id` defaults to a fresh unique one (`new_plan_id`)."""
    dag = schedule(obligations, order, evidence)
    art = PlanArtifact(
        plan_id=plan_id or new_plan_id(now), requirement=requirement, nodes=[], checkpoints=[],
        branch_scores={}, revision_history=[
            Revision(rev=1, time=now, caused_by=f"decomposition ({llm})",
                     change=f"planned {len(obligations)} obligations, {len(order.edges)} "
                            f"edges, {len(order.violations)} violations")],
        audit=[AuditRow(obligation="plan", trace=f"planned {len(obligations)} obligations "
                        f"with engine {engine}", event="planned", time=now)],
        repo=str(repo) if repo else None, engine=engine, llm=llm, edges=order.edges,
        violations=order.violations, evidence=evidence, usage=usage,
    )
    _apply(art, dag, obligations)
    return art


def new_plan_id(now: str) -> str:
    """A plan id unique per plan: `plan-YYYYMMDD-HHMMSS-<8 random hex>`. Two plans made in the
    same second of the same request still differ (their checkpoint refs
    `refs/plan07/<plan_id>/...` must never collide in one repo)."""
    stamp = now[:19].replace("-", "").replace("T", "-").replace(":", "")
    return f"plan-{stamp}-{secrets.token_hex(4)}"


def _apply(art: PlanArtifact, dag: PlanDAG, obligations: Sequence[Obligation]) -> None:
    by_id = {o.id: o for o in obligations}
    old_refs = {(c.id, tuple(c.after)): c.git_ref for c in art.checkpoints}
    art.nodes = dag.nodes
    art.checkpoints = [
        c.model_copy(update={"git_ref": old_refs.get((c.id, tuple(c.after)), c.git_ref)})
        for c in dag.checkpoints
    ]
    art.branch_scores = dict(dag.branch_scores)
    art.collapsed = {n.id: [by_id[m] for m in n.members] for n in dag.nodes if n.cycle_collapsed}
    art.schedule = PlanSchedule(order=topological_order(dag), ready=dag.ready,
                                blocked=dag.blocked, alternative=dag.alternative)


def obligations_of(art: PlanArtifact) -> list[Obligation]:
    """The plan's obligations: its nodes, with every collapsed cycle expanded to its members."""
    out: list[Obligation] = []
    fields = set(Obligation.model_fields)
    for n in art.nodes:
        if n.cycle_collapsed:
            out.extend(art.collapsed.get(n.id, []))
        else:
            out.append(Obligation(**n.model_dump(include=fields)))
    return out


def dag_of(art: PlanArtifact) -> PlanDAG:
    """The §3.3 view of a persisted plan (edges from the nodes' effective dependencies)."""
    return PlanDAG(
        nodes=art.nodes,
        edges=[(d, n.id) for n in art.nodes for d in n.dependencies],
        ready=art.schedule.ready, blocked=art.schedule.blocked,
        alternative=art.schedule.alternative, checkpoints=art.checkpoints,
        branch_scores=art.branch_scores,
    )


def reached_checkpoints(art: PlanArtifact) -> list[str]:
    """Checkpoints whose steps, and every earlier checkpoint's, are all complete."""
    done = {n.id for n in art.nodes if n.state == "complete"}
    out = []
    for cp in art.checkpoints:
        if not set(cp.after) <= done:
            break
        out.append(cp.id)
    return out


def stuck_nodes(art: PlanArtifact) -> list[str]:
    """Failed nodes whose scoped replans are spent (caps.MAX_REPLANS_PER_NODE): never handed out
    again, `complete` refuses them; `plan07 feedback` or `plan07 rollback` moves the plan on."""
    return sorted(n.id for n in art.nodes if n.state == "failed" and n.id in art.bounds
                  and art.bounds[n.id].replans >= caps.MAX_REPLANS_PER_NODE)


def _stuck_text(node_id: str, replans: int) -> str:
    return (f"obligation {node_id!r} failed after {replans} scoped replans (cap "
            f"MAX_REPLANS_PER_NODE {caps.MAX_REPLANS_PER_NODE}, ours); no further model call is "
            "made: revise the plan with `plan07 feedback` or return to a checkpoint with "
            "`plan07 rollback`")


def _checkpoint_trace(cp: Checkpoint) -> str:
    return (f"checkpoint {cp.id} reached after step {cp.step}: "
            f"{', '.join(cp.after) or 'the start'} validated")


def _failure_text(verdict: Verdict) -> str:
    """What the scoped decomposer is told about a failure: the check and the output's tail."""
    return f"{verdict.check} failed ({verdict.kind}): {verdict.output_tail[-400:]}"


def _node(art: PlanArtifact, node_id: str) -> PlanNode:
    for n in art.nodes:
        if n.id == node_id:
            return n
    raise PlanStateError(f"no obligation {node_id!r} in the plan; it has "
                         f"{', '.join(sort_ids(n.id for n in art.nodes))}")


def _relative(path: str | Path, repo: str | None) -> str:
    p = Path(path)
    if repo and p.is_absolute() and p.resolve().is_relative_to(Path(repo)):
        return p.resolve().relative_to(Path(repo)).as_posix()
    return p.as_posix()
