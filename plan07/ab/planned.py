"""The plan07 strategy: the task driven through the public library API (`plan07.Planner`), as a
harness would: create (the ONE decomposition call) -> next() -> edit -> report_edit ->
complete() -> on fail, the planner's scoped replan hands the node out again. I/O.

The §7.5 ablation switches are applied through what the harness hands the library, never by
patching it: ordering off = the obligations without dependencies and with no evidence (the
planner can only follow the listed order); gate off = each node's check is the bare build
check (`compile`), the real checks run at the end, and a failure there is re-planned as a new
Planner over the failed nodes and their true dependents -- the executor is still shown the view
the full plan07 shows (the node's real check and the criteria it serves: what the model is told
is the typed artifact's part, not the gate's; `_Drive.shown`); externalized plan off = the schedule
rides in every prompt and the harness keeps it (no plan state is consulted for what comes
next beyond the single node); typed artifacts off = the executor gets the raw request and the
obligation as prose instead of the typed driver view; revision off = no impact feedback is
ever fed (`.feedback` is not called).

Impact feedback (§3.6) comes from two observations the harness makes after a node passes its
gate: tests that passed before now fail, and the impact of the change just made (the task's 06
impact edges out of the node's target) reaching a consumer no plan node covers -- the way a
hidden consumer (`Task.hidden`) left out of the decomposition is found.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plan07 import ScriptedClient, caps
from plan07.ab import contexts
from plan07.ab.checker import Checker
from plan07.ab.edits import Applied, bring_back, revert_all
from plan07.ab.executors import Executor
from plan07.ab.feedback import changed_entities, feedback_edges, observed_changes
from plan07.ab.run import Ablation, RunResult, Session
from plan07.ab.tasks import GoldStep, Task
from plan07.ab.tokens import count_tokens, other_tokens
from plan07.model import DriverView, Evidence, Obligation, Usage
from plan07.vocab import covers

_FIELDS = set(Obligation.model_fields)


def gold_decomposer(obligations: Sequence[Obligation],
                    alt: list[int | None] | None = None) -> ScriptedClient:
    """The harness's stand-in for the §4 model: the first call returns the task's decomposition
    (the same list the static chain runs); a scoped re-invocation returns the subgraph it was
    given, unchanged (the decomposition was right, the edit was wrong). Usage is counted with
    the harness tokenizer (plan07.ab.tokens), so planning calls cost tokens like any other."""
    from plan07 import Completion

    plan = json.dumps({"obligations": [o.model_dump(mode="json") for o in obligations]})

    def reply(messages: list[dict[str, str]]) -> Completion:
        user = next((m["content"] for m in messages if m.get("role") == "user"), "")
        text = plan
        lines = user.splitlines()
        if "## scope" in lines:
            scope = json.loads(lines[lines.index("## scope") + 1])
            text = json.dumps({"obligations": [{k: v for k, v in o.items() if k in _FIELDS}
                                               for o in scope["obligations"]]})
        prompt = sum(count_tokens(m.get("content", "")) for m in messages)
        if alt is not None:  # the call's tokens under the other tokenizer, reported beside
            other = [other_tokens(m.get("content", "")) for m in messages] + [other_tokens(text)]
            alt.append(None if None in other else sum(a or 0 for a in other))
        return Completion(text=text, usage=Usage(prompt_tokens=prompt,
                                                 completion_tokens=count_tokens(text)))

    return ScriptedClient(reply, name="ab-gold")


def gold_step(task: Task, view: DriverView) -> GoldStep | None:
    """The gold step a handed-out node stands for: by id, else by target entity (a node a
    revision added under a fresh id)."""
    for s in task.steps:  # a hidden step's id may be reused by a node a revision added
        if s.id == view.node_id and s.id not in task.hidden:
            return s
    for s in task.steps:
        if s.obligation.target_entity == view.target_entity and s.edit is not None:
            return s
    return None


def gold_steps(task: Task, art: Any, view: DriverView) -> list[GoldStep]:
    """The gold steps a handed-out node stands for: a merged node (a collapsed cycle, an atomic
    step) stands for each of its members' (none found: none), any other node for its own."""
    node = next((n for n in art.nodes if n.id == view.node_id), None)
    if node is None or not node.cycle_collapsed:
        step = gold_step(task, view)
        return [step] if step is not None else []
    out: list[GoldStep] = []
    for m in art.collapsed.get(node.id, []):
        step = gold_step(task, view.model_copy(update={"node_id": m.id,
                                                       "target_entity": m.target_entity}))
        if step is not None and all(o.id != step.id for o in out):
            out.append(step)
    return out


def _handed(task: Task, ablation: Ablation) -> tuple[list[Obligation], Evidence]:
    """What the harness hands the planner. Ordering off drops the declared dependencies and
    plans with `Planner.create(ordering=False)` (no rule-derived edges), but keeps the evidence:
    impact feedback and scoped replans read it, and they are other mechanisms."""
    obs = task.obligations
    ev = task.evidence
    if not ablation.ordering:
        obs = [o.model_copy(update={"dependencies": [], "status": "ready"}) for o in obs]
    if not ablation.gate:
        obs = [o.model_copy(update={"validation": "compile"}) for o in obs]
    return obs, ev


def _members(p: Any, node_id: str) -> list[str]:
    """The obligations plan node `node_id` holds (a merged step's members; [] for one
    obligation, or a node the plan no longer has)."""
    return next((list(n.members) for n in p.artifact.nodes if n.id == node_id), [])


class _Drive:
    """One plan07 run: planners created over (sub)sets of the obligations, driven to the end."""

    def __init__(self, s: Session, state_dir: Path, ablation: Ablation, engine: str) -> None:
        self.s, self.state_dir, self.ab, self.engine = s, state_dir, ablation, engine
        self.applied: list[tuple[str, list[Applied]]] = []
        self.plans = 0
        self.members: dict[str, list[str]] = {}  # plan node id -> the gold steps it ran
        # a merged step (plan07 read an edit that cannot be valid alone): its id -> the steps
        # already made for it and their edits, kept in the tree until the step is checked
        self.held: dict[str, tuple[list[str], list[Applied]]] = {}
        # a node set aside (its edit narrowed what pending consumers use, or the step it merged
        # into waits for them): its id -> the files its edit touched and the steps made for it,
        # brought back by the view's `saved_edit` when it (or the step holding it) comes again
        self.aside: dict[str, tuple[list[str], list[str]]] = {}
        self._seen = 0  # usage entries of the current planner already metered

    def plan(self, obligations: list[Obligation], evidence: Evidence, *, retry: bool) -> Any:
        from plan07 import Planner

        self.plans += 1
        self.known = {n.id for n in evidence.recon.nodes}
        self.alt: list[int | None] = []
        p = Planner.create(self.s.task.request, repo=self.s.repo, evidence=evidence,
                           llm=gold_decomposer(obligations, self.alt),
                           state_dir=self.state_dir / f"plan{self.plans}", engine=self.engine,
                           ordering=self.ab.ordering, revision=self.ab.revision,
                           # the task's gold decomposition as given: a lint repair would add
                           # steps the scripted executor has no gold edit for
                           lint=False, max_retries=min(self.s.bound, caps.MAX_RETRIES_CAP))
        self._seen = 0
        self._account(p, retry=retry)
        return p

    def _account(self, p: Any, *, retry: bool) -> None:
        usage = p.usage
        for k, u in enumerate(usage[self._seen:], self._seen):
            alt = self.alt[k] if k < len(self.alt) else None
            self.s.plan_call(u.prompt_tokens, u.completion_tokens, retry=retry, alt=alt)
        self._seen = len(usage)

    def drive(self, p: Any) -> bool:
        """Run the plan until nothing is ready; False when an obligation exhausts the bound."""
        s, task = self.s, self.s.task
        failure: dict[str, str] = {}
        schedule = contexts.chain(task) if not self.ab.externalized_plan else ""
        while (view := p.next()) is not None:
            key = view.node_id
            made, kept = self.held.pop(key, ([], []))
            steps = [st for st in gold_steps(task, p.artifact, view) if st.id not in made]
            oids = [st.id for st in steps]
            if any(s.executed[o] > s.bound for o in oids):
                return False
            done = [a for o, a in self.applied if o == key]
            if done:  # a complete node handed out again (plan07.plan.retry re-opened it): its step
                for applied in reversed(done):  # is redone from where it started, as the
                    revert_all(s.repo, applied)  # static chain redoes its steps
                self.applied = [(o, a) for o, a in self.applied if o != key]
            self.members[key] = oids
            ctx = contexts.plan07(self.shown(p, view), contexts.files_of(task, oids), s.repo,
                                  failure.get(view.node_id), typed=self.ab.typed_artifacts,
                                  request=task.request, schedule=schedule)
            got = [self.aside.pop(m) for m in dict.fromkeys([key, *_members(p, key)])
                   if m in self.aside]
            # the edits it had when set aside, as the view says (no model call); the steps they
            # hold are not made again
            back = bring_back(s.repo, view.saved_edit, sorted({f for fs, _ in got for f in fs})) \
                if steps and got and view.saved_edit else None
            rest = oids if back is None else [o for o in oids
                                              if not any(o in ms for _, ms in got)]
            applied = back or []
            if rest and view.obligation == "validate" and view.node_id not in failure \
                    and not view.failure_digest:
                applied += s.apply(s.check_only(rest[0]))  # nothing to edit: the gate checks it
            elif rest:
                applied += s.apply(s.call(ctx, rest))
            for f in sorted({a.file for a in applied}):
                p.report_edit(view.node_id, f)
            before = set(s.consistency.good)
            checked = s.check()
            verdict = p.complete(view.node_id)
            self._account(p, retry=True)
            applied = kept + applied
            if verdict.merged_into is not None:  # mid-step: not executed, nothing measured; the
                self.held[verdict.merged_into] = (made + oids, applied)  # edit stays in the tree
                continue
            if verdict.set_aside_for:  # plan07 put the files back (the edit saved): the node
                self.aside[(_members(p, key) or [key])[0]] = (
                    sorted({a.file for a in applied}), made + oids)  # it comes again after the
                continue  # consumers it narrows, and its view says how to bring the edit back
            state = s.step_done(checked)
            if verdict.passed:
                self.applied.append((key, applied))
                if self.ab.revision:
                    self._feedback(p, view, state.broken(before), [a.file for a in applied])
                    self._impact(p, view, applied)
            else:
                if p.events[-1]["event"] != "restored":  # plan07 put the files back itself
                    revert_all(s.repo, applied)
                failure[view.node_id] = _digest(verdict, s.repo)
        return True

    def shown(self, p: Any, view: DriverView) -> DriverView:
        """The view the executor reads. Gate off hands the planner `compile` checks, which
        would also change what the prompt says (check, required validation, the criteria the
        node serves); in isolation only the gate goes, so the executor reads the view of the
        node with its real validation (a merged node: its members' joined as plan07.plan.schedule
        joins them). A node with no task obligation (a revision's) is shown as it is."""
        if self.ab.gate:
            return view
        from plan07 import driver_view

        real = {o.id: o.validation for o in self.s.task.obligations}
        node = next((n for n in p.artifact.nodes if n.id == view.node_id), None)
        if node is None:
            return view
        ids = list(node.members) if node.cycle_collapsed else [node.id]
        if not ids or any(i not in real for i in ids):
            return view
        node = node.model_copy(update={"validation": " && ".join(real[i] for i in ids),
                                       "status": "ready"})
        return driver_view(node, p.artifact.requirement, digest=view.failure_digest)

    def _feedback(self, p: Any, view: DriverView, broken: set[str],
                  edited: Sequence[str] = ()) -> None:
        """§3.6: the node passed its gate, yet tests that passed before now fail: consumers the
        plan did not foresee. Fed to the planner as impact feedback (revision trigger), as
        edges the plan can read (`feedback_edges`); what it cannot is said in the note."""
        art, obligations = p.artifact, p.obligations()
        edges, left = feedback_edges(changed_entities(art, obligations, view.node_id),
                                     [o.target_entity for o in obligations],
                                     self.known, broken, edited)
        if not edges:
            return
        from plan07.model import Feedback

        note = f"{len(broken)} previously passing test(s) broke"
        if left:
            note += f"; {left} with no entity in the plan's evidence left out"
        p.feedback(Feedback(caused_by=view.node_id, impact_edges=edges, note=note))
        self.s.result.feedbacks += 1
        self._account(p, retry=True)

    def _impact(self, p: Any, view: DriverView, applied: Sequence[Applied] = ()) -> None:
        """§3.6: the 06 impact of the change just made reaches consumers that no node of the
        plan targets (an obligation the decomposition missed): fed as impact feedback. Only
        edges the edit's observed change follows (plan07.ab.observed.reaches): recon lists
        every potential consumer, not the ones this change reaches."""
        from plan07.ab.observed import reaches

        art, obligations = p.artifact, p.obligations()
        # what the plan rewrites: a validate (the closing regression run over the package) holds
        # no consumer
        targets = [o.target_entity for o in obligations if o.obligation == "modify"]
        srcs = set(changed_entities(art, obligations, view.node_id))
        changes = observed_changes(self.s.repo, applied)
        edges = [e for e in self.s.task.evidence.impact.edges if e.src in srcs
                 and not any(covers(t, e.dst) for t in targets)
                 and reaches(e.src, e.dst, e.cause, changes)]
        if not edges:
            return
        from plan07.model import Feedback

        p.feedback(Feedback(caused_by=view.node_id, impact_edges=edges[:16],
                            note=f"{len(edges)} consumer(s) of {view.target_entity} unplanned"))
        self.s.result.feedbacks += 1
        self._account(p, retry=True)


def _digest(verdict: Any, repo: Path) -> str:
    """The one line (<= 160 chars) a retry carries: the planner's own digest of the failure
    (plan07.plan.retry), the same size as the baselines' one-line failure."""
    from plan07 import failure_digest

    return failure_digest(verdict.check, verdict.output_tail, repo=str(repo.resolve()))


def run_planned(task: Task, repo: Path, executor: Executor, checker: Checker, bound: int, *,
                state_dir: Path, ablation: Ablation, engine: str = "pydatalog") -> RunResult:
    from plan07.errors import Plan07Error

    name = "plan07" + "".join(f"-no_{k}" for k in ablation.off())
    s = Session(name, task, repo, executor, checker, bound)
    d = _Drive(s, state_dir, ablation, engine)
    obligations, evidence = _handed(task, ablation)
    try:
        if not d.drive(d.plan(obligations, evidence, retry=False)):
            return s.finish()
    except Plan07Error as exc:  # plan07 refused (a cap, a state error): unresolved, said why,
        from plan07.ab.run import salvage  # with every token it spent up to the refusal

        return salvage(s.result.strategy, task, f"plan07 refused: {exc.one_line()}")
    if ablation.gate:
        return s.finish()
    return _deferred_checks(task, s, d, evidence)


def _deferred_checks(task: Task, s: Session, d: _Drive, evidence: Evidence) -> RunResult:
    """Gate off: the real checks run only at the end; a failure re-plans the failed nodes and
    their true dependents (plan07.plan.replan.affected_subgraph) as a new plan."""
    from plan07 import affected_subgraph

    nodes = [o for o in task.obligations]
    edges = [(dep, o.id) for o in nodes for dep in o.dependencies]
    while True:
        r = s.check()
        # `failing` indexes the handed decomposition (`task.visible`), not `task.steps`: with a
        # hidden consumer the two differ, and `steps[k]` named the wrong obligation
        bad = [task.visible[k].id for k in s.failing(r)]
        if not bad and r.green:
            return s.finish(r)
        if not bad or any(s.executed[b] > s.bound for b in bad):
            return s.finish(r)
        scope: set[str] = set()
        for b in bad:
            scope |= set(affected_subgraph(_plan_nodes(nodes), edges, b))
        # a plan node in scope (a merged one: any of its members)
        hit = {k for k, _ in d.applied if k in scope or set(d.members.get(k, ())) & scope}
        for key, applied in reversed(d.applied):
            if key in hit:
                revert_all(s.repo, applied)
        d.applied = [(o, a) for o, a in d.applied if o not in hit]
        sub = [o.model_copy(update={"validation": "compile", "dependencies": [
            x for x in o.dependencies if x in scope]}) for o in nodes if o.id in scope]
        if not d.drive(d.plan(sub, evidence, retry=True)):
            return s.finish()


def _plan_nodes(obligations: list[Obligation]) -> list[Any]:
    from plan07.model import PlanNode

    return [PlanNode(**o.model_dump()) for o in obligations]
