"""The library API a harness drives: `Planner` (plan, next, report, complete, feedback, rollback,
resume). The `PLAN` feature flag router (§8) is plan07.flag; the pipeline `create` persists is
plan07.plan.pipeline.

`Planner` is a thin transaction shell: each method takes the plan's lock, loads plan.json, runs one
pure step of plan07.plan.transitions over it, and saves it when it changed (`state.transaction`).
The effects (the gate's check, a scoped model call) run outside the lock, between two transactions.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from plan07 import caps, checkpoints, progress
from plan07.errors import InputError, Plan07Error, PlanStateError
from plan07.model import (
    Decomposition,
    DriverView,
    Evidence,
    Feedback,
    NextStep,
    ObservedChange,
    OrderResult,
    PlanArtifact,
    Revision,
    Verdict,
)
from plan07.plan import amend, artifact, criteria, transitions
from plan07.reader import PlanReader
from plan07.store import commit, state

if TYPE_CHECKING:
    from plan07.decompose import LLMClient
    from plan07.gate.checks import GateRun
    from plan07.plan.replan import ScopedCall
    from plan07.store.records import Restored

class Planner(PlanReader):
    """One persisted plan in `state_dir`, driven. Create it with `Planner.create`, reopen it with
    `Planner.open`; every method re-reads plan.json under the lock, so several processes (or
    Planner objects) may drive the same plan. What it reads (status, audit, explain, ...) is
    plan07.reader's."""

    def __init__(self, state_dir: Path, client: LLMClient | None = None) -> None:
        super().__init__(state_dir)
        self.client = client  # the model client for scoped re-decomposition (None: art.llm)
        self.restored: Restored | None = None  # what the last rollback/resume did
        self.reproduced: str | None = None  # what the reproduction showed (create)

    # -----------------------------------------------------------------------------------------
    # construction

    @classmethod
    def create(
        cls,
        request: str,
        *,
        repo: Path,
        evidence: Evidence | str | Path | None = None,
        llm: str | LLMClient = "builtin",
        state_dir: Path | None = None,
        engine: str = "pydatalog",
        task_text: str | None = None,
        plan_id: str | None = None,
        now: str | None = None,
        max_retries: int = caps.MAX_RETRIES_PER_NODE,
        ordering: bool = True,
        lint: bool = True,
        revision: bool = True,
        python: str | Path | None = None,
        test_command: str | None = None,
        replace: bool = False,
        reproduce: bool = False,
        preamble: str | None = None,
    ) -> Planner:
        """The whole pipeline: canonicalize -> decompose (the ONE model call) -> plan lint ->
        order (rules) -> schedule -> persist; nothing is written when a stage refuses (the plan is
        built and size-checked in memory first). `evidence`: a bundle or its path (JSON,
        recon.db); None: built-in recon of `repo`. `plan_id` / `now` fix the id and the
        timestamps (tests). `max_retries`: failures one node may have handled. `ordering=False`
        (the §7.5 ablation switch): the decomposition's own dependencies only; `revision=False`
        (the other): no obligation added from what the run observes; `lint=False`: the plan lint
        repairs nothing (a harness's gold decomposition kept as given). The gate's world is fixed
        here: the repo's interpreter (`python`, else $VIRTUAL_ENV, REPO/.venv, REPO/venv, else
        plan07's own), its test command (`test_command`, a JSON argv template, else [tool.plan07]
        of its pyproject.toml, else pytest) and the CP0 baseline of the plan's tests (deferred
        when no interpreter can run them). `reproduce=True`: the issue's own code (its fenced
        Python blocks, its `>>>` sessions) runs first in that interpreter, and what it raised and
        called steers the built-in localization (docs/evidence.md "Running the reproduction";
        `planner.reproduced` says what it showed; `preamble`: the session the project's issues
        assume, else `[tool.plan07] reproduce-preamble`); unused when `evidence` is given.

        A plan already in `state_dir` that has progress (an obligation validated or failed, an
        edit, a confirmation, a revision, a checkpoint past CP0) is replaced only with
        `replace=True`; otherwise the call is refused before anything runs (PlanStateError,
        reason `has_progress`), and again before anything is written if that plan progressed
        while this one was built."""
        from plan07.gate import world as gate
        from plan07.plan import pipeline
        from plan07.store import checkpoint, records

        if not replace:
            commit.refuse_over_progress(state.state_dir(state_dir))
        repo = Path(repo)
        if isinstance(evidence, str | Path):
            from plan07.evidence import load_evidence

            evidence = load_evidence(evidence)
        reproduction = None
        if reproduce and evidence is None:
            from plan07.gate.reproduce import reproduce as run_reproduction

            with progress.step("the issue's reproduction"):
                reproduction = run_reproduction(repo, request, python=python,
                                                preamble=preamble)
        draft, evidence, client = pipeline.draft_plan(
            request, repo=repo, evidence=evidence, llm=llm, engine=engine, task_text=task_text,
            plan_id=plan_id, now=now, max_retries=max_retries, ordering=ordering, lint=lint,
            reproduction=reproduction)
        if plan_id is not None:
            checkpoint.ref_name(plan_id, "CP0")  # a plan_id that cannot name a ref: refused
        d = state.state_dir(state_dir)
        info, base = gate.prepare(repo.resolve(), draft, evidence, python=python,
                                  test_command=test_command, state_dir=d)
        pipeline.lint_after_baseline(draft, evidence, request)
        planner = cls(d, None if isinstance(llm, str) else client)
        if reproduce:
            from plan07.evidence.repro import describe

            planner.reproduced = describe(reproduction)
        cp0 = draft.checkpoints[0]
        artifact.record(draft, cp0.id, "checkpoint", artifact.checkpoint_trace(cp0),
                        time=now or artifact.now())
        # everything that can refuse runs before anything is written: a refused plan leaves no
        # file, lock or ref, and an older plan in `d` whole
        ref = records.planned_ref(d, repo.resolve(), draft.plan_id, cp0.id)
        draft.checkpoints[0] = cp0.model_copy(update={"git_ref": ref})
        draft.checkpoint_seq, draft.epoch = 1, 0  # CP0 is record 1; nothing handed out
        draft.revision = None if revision else False
        prepared = state.fit(draft)  # refused (cap named) here, nothing written yet
        if not replace:  # the older plan may have progressed while the baseline ran
            commit.refuse_over_progress(d)
        commit.commit_new_plan(
            d, draft, prepared, cp0_ref=ref, cp0_tree=gate.git_tree(info.cp0_tree),
            write_sidecars=lambda: gate.write_baseline(d, info, base),
            drop_sidecars=lambda: gate.drop_baselines_except(d, info.baseline_file))
        return planner

    @classmethod
    def open(cls, state_dir: Path | str | None = None) -> Planner:
        """Reopen a persisted plan (validated with the shipped schema); refused when there is
        none (default dir: $PLAN07_STATE, else build/07-task-decomposition-planning/)."""
        d = state.state_dir(state_dir)
        state.load(d)
        return cls(d)

    # -----------------------------------------------------------------------------------------
    # driving

    def confirm(self, criteria: Iterable[int] | Literal["all"] = (), *,
                all: bool = False) -> list[int]:  # noqa: A002 - the CLI's and MCP's word
        """§3.1 step 2: the user confirms acceptance criteria (1-based numbers, or all: every
        derived criterion and every command plan07 does not run, still unsettled; a criterion
        naming a test no validation runs by its number only). Audited; returns the numbers."""
        if criteria == "all":
            criteria, all = (), True
        numbers = list(criteria)
        if bool(numbers) == all:
            raise InputError("give the criteria to confirm by number, or --all (not both)",
                             field="criteria")
        with state.transaction(self.state_dir) as tx:
            return amend.confirm(tx.art, "all" if all else numbers, time=artifact.now())

    def next_step(self) -> NextStep:
        """`next()` with its answer when nothing is left: whether the plan may terminate, and
        what blocks it (one read of the plan)."""
        from plan07.plan.status import next_step

        view, art = self._hand_out()
        return next_step(view, art)

    def resume_step(self) -> NextStep:
        """`resume()`, answered as `next_step()` is."""
        self._return_to(None, files_required=False, event="resumed")
        return self.next_step()

    def next(self) -> DriverView | None:
        """§3.4: the single actionable obligation (the one handed out, until it completes);
        None when nothing is left to hand out (then see `termination_blockers()`)."""
        return self._hand_out()[0]

    def _hand_out(self) -> tuple[DriverView | None, PlanArtifact]:
        from plan07.plan import driver

        with state.transaction(self.state_dir) as tx:
            node = transitions.hand_out(tx.art, time=artifact.now())
            saved = [] if node is None else checkpoints.saved_for(tx.art, node)
            view = None if node is None else driver.view(
                node, tx.art.requirement, digest=transitions.digest_of(tx.art, node),
                note=criteria.check_note(tx.art, node), saved=saved)
            tx.view_text = None if view is None else driver.as_text(view)
        return view, tx.art

    def report_edit(self, node_id: str, path: str | Path) -> None:
        """The harness edited `path` for `node_id` (the handed-out node); a 6th file is refused."""
        with state.transaction(self.state_dir) as tx:
            transitions.admit_edit(tx.art, node_id, _relative(path, tx.art.repo),
                                   time=artifact.now())

    def report_test_call(self, node_id: str) -> None:
        """The harness ran a test for `node_id`; the 11th call is refused."""
        with state.transaction(self.state_dir) as tx:
            transitions.admit_test_call(tx.art, node_id)

    def complete(self, node_id: str, *, timeout: float | None = None,
                 python: str | Path | None = None) -> Verdict:
        """§3.5: run the node's validation (outside the lock), then record the verdict. pass ->
        complete, reschedule, checkpoints reached; fail -> ONE scoped replan of the failed node
        and its true dependents (the model call outside the lock too). Only the handed-out node
        (§3.4: the single actionable obligation) is validated. `timeout` (seconds; None: sized
        from the CP0 run, plan07.gate.scope), `python` (takes a deferred CP0 baseline)."""
        from plan07.gate import world as gate
        from plan07.gate.checks import GateRun
        from plan07.gate.grammar import runnable_checks
        from plan07.gate.scope import check_timeout
        from plan07.plan import observed
        from plan07.plan.observed import worth_adapting

        check_timeout(timeout)
        with state.transaction(self.state_dir) as tx:  # the reservation and the hand-out epoch
            node, members = transitions.validatable(tx.art, node_id)  # refused: nothing written
            repo = gate.the_repo(tx.art)  # the one the plan was made for, or refused
            run = GateRun(node, members, repo, runnable_checks(node, members, repo))
            epoch = transitions.reserve(tx.art, node_id, run.reserved)
            evidence = self._evidence(tx.art)  # loaded once for the whole `complete`
        try:
            # what the edit changed, read before the check runs (docs/rules.md "Observed
            # changes"): a change that cannot be valid alone is merged, not checked
            tree = gate.fingerprint(repo, keep=[self.state_dir])
            started = time.perf_counter()
            changes = gate.observed_edit(tx.art, run, evidence, tree)
            # the re-walk only where the rules could merge (tx.art: the plan as just reserved;
            # asked again under the lock); the rest is recorded with the verdict below
            acting = bool(changes) and worth_adapting(tx.art, node_id, changes, evidence)
            merged = self._observe(run, epoch, changes, evidence) if acting else None
            observe_s = round(time.perf_counter() - started, 3)
            if merged is not None:
                return merged.model_copy(update={"observe_s": observe_s})
            # §3.3 step 4: the checkpoint certifies the content the check ran on; tx.art is the
            # plan as just saved (no reload)
            checked = gate.checked_run(tx.art, self.state_dir, run, evidence,
                                       timeout=timeout, tree=tree, python=python)
            verdict, tree = checked.verdict, checked.tree
            verdict.observed = [f"{c.kind}: {c.what}" for c in changes][:16]
            verdict.observe_s = observe_s
        except BaseException:
            with state.transaction(self.state_dir) as tx:
                if tx.art.epoch == epoch:
                    transitions.refund(tx.art, node_id, run.reserved)
            raise
        with state.transaction(self.state_dir) as tx:
            art = tx.art
            gate.keep_adopted(art, self.state_dir, checked.adopted)  # a deferred CP0 baseline
            if changes and not acting and art.active == node_id and art.epoch == epoch:
                observed.keep_changes(art, node_id, changes, time=artifact.now())
            if verdict.passed:  # its edit landed (its members' too): nothing to bring back
                checkpoints.landed(art, node_id)
            settled = transitions.settle(art, node_id, run.reserved, verdict,
                                         self._evidence(art), time=artifact.now(), tree=tree,
                                         epoch=epoch)
            for cp in settled.reached:
                checkpoints.reached(self.state_dir, art, cp, tree=tree)
            if settled.spent:  # its failed edit never stays under the next hand-out
                checkpoints.leave_no_failed_edit(self.state_dir, art, node_id)
        if settled.stale:
            raise PlanStateError(
                f"obligation {node_id!r} was settled, or handed out again (a resume, a "
                "rollback), by another process while its check ran; this verdict is discarded "
                "and nothing was recorded: run `plan07 next`", reason="stale", node=node_id,
            )
        if settled.replan is not None:
            self._replan(settled.replan, verdict, tx.art)
        return verdict

    def _observe(self, run: GateRun, epoch: int | None, changes: list[ObservedChange],
                 evidence: Evidence) -> Verdict | None:
        """The observed changes recorded and acted on (plan07.plan.observed); a Verdict when the
        node became one step with pending obligations (nothing checked, its reserved calls
        given back), None when its check is to run."""
        from plan07.plan.observed import adapt, worth_adapting
        from plan07.vocab import classify

        node_id = run.node.id
        with state.transaction(self.state_dir) as tx:
            art = tx.art
            if art.epoch != epoch or art.active != node_id or not worth_adapting(
                    art, node_id, changes, evidence):
                return None
            done = adapt(art, node_id, changes, evidence, time=artifact.now())
            if done.set_aside_for:
                transitions.refund(art, node_id, run.reserved)
                return checkpoints.set_aside(self.state_dir, art, run.node, done, changes)
            if done.merged_into is None:
                return None
            transitions.refund(art, node_id, run.reserved)
        return Verdict(
            node_id=node_id, passed=False, check=run.node.validation,
            kind=classify(run.node.validation), merged_into=done.merged_into,
            merged=list(done.merged), observed=[f"{c.kind}: {c.what}" for c in changes][:16],
            output_tail=f"not checked: the edit cannot be valid alone; {done.merged_into} lands "
                        f"it with {', '.join(done.merged)} (edit them too, then complete "
                        f"{done.merged_into})")

    def _replan(self, call: ScopedCall, verdict: Verdict, art: PlanArtifact) -> None:
        """§3.5 step 3: the fragment goes to ONE scoped decomposition (outside the lock); the
        rules re-walk it and its direct upstream; it is spliced in. Upstream and sibling nodes
        stay byte-identical. A fallback, a refused fragment, or a plan changed meanwhile keeps
        the plan as it was: the failed node is offered again."""
        from plan07.decompose.call import decompose_scoped
        from plan07.plan import replan

        evidence = self._evidence(art)
        try:
            dec = decompose_scoped(art.requirement, evidence, self._client(art),
                                   subgraph=call.fragment.obligations,
                                   failure=transitions.failure_text(verdict),
                                   fresh_prefix=call.prefix)
        except Plan07Error as exc:  # no client / endpoint down: keep the plan, say why
            dec = Decomposition(obligations=[], re_decompose=True,
                                reason=f"scoped call not made: {exc.one_line()}")
        node_id = call.fragment.failed
        with state.transaction(self.state_dir) as tx:
            art = tx.art
            evidence = self._evidence(art)
            if dec.usage:
                art.usage.append(dec.usage)
            if transitions.mark(art) != call.mark:
                amend.keep_plan(art, node_id, "the plan changed while the scoped call "
                                      "ran", evidence, time=artifact.now())
                return
            try:
                result = replan.respond(call.fragment, art, dec, evidence)
                amend.apply_replan(art, call, result, evidence, time=artifact.now())
            except Plan07Error as exc:  # a fallback, or a fragment the rules/scheduler refuse
                amend.keep_plan(art, node_id, exc.one_line(), evidence, time=artifact.now())

    # -----------------------------------------------------------------------------------------
    # recovery: impact feedback, rollback, resume

    def feedback(self, fb: Feedback) -> list[Revision]:
        """§3.6: impact feedback -> add the missing obligations, remove falsified ones, re-walk
        only the touched neighbourhood's edges through the rules; one revision per change, each
        naming its causing obligation. Nodes outside the neighbourhood keep their edges. Feedback
        naming what the plan does not know is refused before anything is written."""
        from plan07.order.derive import derive_order
        from plan07.plan.revise import check_feedback

        current = self.artifact  # refused before the lock is taken or anything is written
        check_feedback(artifact.obligations_of(current), self._evidence(current), fb)
        amend.refuse_falsifying_complete(current, fb)
        with state.transaction(self.state_dir) as tx:
            art = tx.art
            rev = amend.revise_feedback(art, fb, self._evidence(art), time=artifact.now())
            if not rev.revisions:
                return []
            walked = derive_order(rev.scope, rev.evidence, engine=art.engine, role_facts=art.roles,
                                  observed=art.observed) if rev.scope else OrderResult()
            amend.apply_feedback(art, rev, walked)
            return rev.revisions

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
        self.restored = checkpoints.return_to(self.state_dir, to, files_required=files_required,
                                              event=event)
        return self.restored

    # -----------------------------------------------------------------------------------------
    # effects

    def _client(self, art: PlanArtifact) -> LLMClient:
        """The model client of this plan: the one given to `create`, else `art.llm` (a spec)."""
        from plan07.decompose import make_client

        return self.client if self.client is not None else make_client(art.llm)

def _relative(path: str | Path, repo: str | None) -> str:
    """`path` relative to the repo when it lies inside it, else as given (posix)."""
    p = Path(path)
    inside = bool(repo) and p.is_absolute() and p.resolve().is_relative_to(Path(repo or "."))
    return (p.resolve().relative_to(Path(repo or ".")) if inside else p).as_posix()
