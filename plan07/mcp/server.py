"""`plan07 mcp`: the CLI's verbs as MCP tools over stdio, for any coding agent that takes tools
over the Model Context Protocol. Built on the official MCP Python SDK's v2 API (`mcp>=2.3`,
`mcp.server.mcpserver.MCPServer`). I/O: stdio (the SDK's), the plan state dir (plan07.store.state).

Each tool is a thin call of the library (`plan07.api.Planner` and the views `plan07 status` and
`plan07 explain` print), with typed, documented arguments and a JSON result (structured content
validated against the tool's output schema, and the same JSON as text). A plan07 error (bad
input, a state that refuses the call) is a tool error whose text is exactly the line the CLI
prints (`error: ...`), with nothing written; a domain "no" (a failed check, an edge that does not
hold, a plan that may not terminate yet) is a normal result, as the CLI's exit 1 is.

Invariant 6 (§3.4, §8): `next`, `resume` and `complete` return the single actionable obligation
(or its verdict) and nothing of the rest of the schedule; only `status`, which a person reads,
returns the plan table.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec

from pydantic import BaseModel, Field, WithJsonSchema, field_serializer

from plan07.errors import Plan07Error
from plan07.model import DriverView, Revision, Verdict, Violation
from plan07.model.proof import Proof

if TYPE_CHECKING:
    from plan07.api import Planner

SERVER_NAME = "plan07"
INSTRUCTIONS = (
    "plan07 plans a coding request into typed obligations ordered by Datalog rules and hands "
    "them out one at a time. Loop: `plan` once; then `next` (the ONE obligation to work on: its "
    "target, preconditions, bounds and required validation), edit the repository for it, "
    "`complete` it (runs its check: passed advances the plan, failed replans only that node and "
    "its dependents), and `next` again, until `next` returns no node and can_terminate is true. "
    "`feedback` reports an impact the plan did not foresee; `rollback`/`resume` return to a "
    "checkpoint; `confirm` settles acceptance criteria only the user can settle."
)

P = ParamSpec("P")

# ---------------------------------------------------------------------------------------------
# arguments (their descriptions become the tools' input schemas)

State = Annotated[str | None, Field(
    description="The plan state directory (holds plan.json). Default as the CLI: "
                "$PLAN07_STATE, else build/07-task-decomposition-planning/ under the server's "
                "working directory. Relative paths are read from that directory too.")]
NodeId = Annotated[str, Field(description="The obligation id `next` handed out, e.g. O3.")]


def _feedback_schema() -> dict[str, Any]:
    """The shipped feedback schema with its `$defs` inlined: it becomes one property of the
    tool's input schema, where a `#/$defs/...` reference would point at the wrong root."""
    from plan07.store.schema import shipped

    schema = shipped("feedback")
    defs = schema.get("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return inline(defs[ref.removeprefix("#/$defs/")])
            return {k: inline(v) for k, v in node.items() if k not in ("$defs", "$schema", "$id")}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    out: dict[str, Any] = inline(schema)
    return out


# ---------------------------------------------------------------------------------------------
# results (their models become the tools' output schemas)


class PlanResult(BaseModel):
    """A persisted plan: its id and sizes, and the violations the rules found. The schedule
    itself stays in plan.json (invariant 6): call `next` for the obligation to work on."""

    plan_id: str
    state: str = Field(description="The state directory the plan was written to.")
    goal: str
    nodes: int
    edges: int
    checkpoints: int
    violations: list[Violation]
    python: str | None = Field(description="The interpreter every check runs with and where it "
                               "was found (from plan07: plan07's own, the repo's dependencies "
                               "are probably missing; pass `python`).")


class NextResult(BaseModel):
    """The single actionable obligation (§3.4), or, when nothing is left to hand out, whether
    the plan may terminate and what blocks it."""

    node: DriverView | None = Field(description="The obligation to work on now (§3.4 view); "
                                    "null when nothing is left to hand out.")

    @field_serializer("node")
    def _view(self, node: DriverView | None) -> dict[str, Any] | None:
        """The view in the CLI's shape (plan07.plan.driver.as_data)."""
        from plan07.plan.driver import as_data

        return None if node is None else as_data(node)
    can_terminate: bool = Field(description="True only when no node is left and every "
                                "termination condition holds: the plan is done.")
    termination_blockers: list[str] = Field(description="Why the plan may not terminate yet "
                                            "(empty while a node is handed out, or when done).")


class StatusRow(BaseModel):
    id: str
    verb: str
    target: str
    state: str
    status: str
    deps: list[str]
    active: bool
    score: float | None


class CriterionRow(BaseModel):
    n: int
    criterion: str
    kind: str
    settled: bool
    covered_by: list[str]
    confirmed: bool


class StatusResult(BaseModel):
    """The plan table and its acceptance criteria, as `plan07 status --json` prints them: for the
    person supervising the agent (the agent works from `next`)."""

    plan_id: str
    active: str | None
    nodes: list[StatusRow]
    checkpoints_reached: list[str]
    criteria: list[CriterionRow]
    can_terminate: bool
    termination_blockers: list[str]


class FeedbackResult(BaseModel):
    """One revision per change the feedback made (empty: the plan already accounts for it)."""

    revisions: list[Revision]


class ConfirmResult(BaseModel):
    confirmed: list[int] = Field(description="The criteria newly confirmed by this call.")
    can_terminate: bool


class RollbackResult(BaseModel):
    checkpoint: str
    git_ref: str | None
    removed: list[str] = Field(description="Files removed because they were added after the "
                               "checkpoint.")


# ---------------------------------------------------------------------------------------------
# the tools: thin calls of the library


def _planner(state: str | None) -> Planner:
    from plan07.api import Planner

    return Planner.open(Path(state) if state else None)


def plan(
    request: Annotated[str, Field(description="The request, as text (markdown; a GitHub issue "
                                  "is fine).")],
    repo: Annotated[str, Field(description="The repository the plan edits (a directory).")],
    state: State = None,
    llm: Annotated[str, Field(description="Who makes the ONE decomposition call: builtin "
                              "(offline, no model), replay:PATH (a recorded completion) or "
                              "openai:MODEL (PLAN07_LLM_BASE_URL / PLAN07_LLM_API_KEY).")]
    = "builtin",
    evidence: Annotated[str | None, Field(description="An evidence bundle (JSON or recon.db); "
                                          "built-in recon of `repo` when absent.")] = None,
    engine: Annotated[str, Field(description="The rule engine: pydatalog or clingo.")]
    = "pydatalog",
    python: Annotated[str | None, Field(description="The repo's Python (or virtualenv dir) "
                                        "every check runs with; default: $VIRTUAL_ENV, "
                                        "REPO/.venv, REPO/venv, else plan07's own.")] = None,
    test_command: Annotated[list[str] | None, Field(description="The test command as an argv "
                                                    "template, e.g. [\"{python}\", "
                                                    "\"tests/runtests.py\", \"{tests}\"]; "
                                                    "default: [tool.plan07] test-command, "
                                                    "else pytest.")] = None,
) -> PlanResult:
    """Plan a request: canonicalize -> decompose -> order (rules) -> schedule -> plan.json
    (replacing a plan already in the state dir), and run the plan's tests once in the repo's
    environment (the CP0 baseline; what fails already is never blamed). Returns the plan's id
    and sizes, not its schedule; call `next` for the obligation to work on."""
    from plan07.api import Planner

    ev = None
    if evidence is not None:
        from plan07.evidence import load_evidence

        ev = load_evidence(Path(evidence))
    planner = Planner.create(request, repo=Path(repo), evidence=ev, llm=llm,
                             state_dir=Path(state) if state else None, engine=engine,
                             python=python, test_command=None if test_command is None
                             else json.dumps(test_command))
    art, gate = planner.artifact, planner.artifact.gate
    return PlanResult(plan_id=art.plan_id, state=str(planner.state_dir.resolve()),
                      goal=art.requirement.goal, nodes=len(art.nodes), edges=len(art.edges),
                      checkpoints=len(art.checkpoints), violations=art.violations,
                      python=f"{gate.python} (from {gate.python_source})" if gate else None)


def _next_result(planner: Planner, view: DriverView | None) -> NextResult:
    if view is not None:
        return NextResult(node=view, can_terminate=False, termination_blockers=[])
    blockers = planner.termination_blockers()
    return NextResult(node=None, can_terminate=not blockers, termination_blockers=blockers)


def next_(state: State = None) -> NextResult:
    """The single actionable obligation (§3.4): id, verb, target, preconditions, permitted
    actions and bounds, required validation; nothing of the rest of the schedule. The same node
    until it is completed. When nothing is left: whether the plan may terminate, or what blocks
    it (failed nodes, unsettled acceptance criteria)."""
    planner = _planner(state)
    return _next_result(planner, planner.next())


def complete(
    node_id: NodeId,
    state: State = None,
    timeout: Annotated[float, Field(description="Seconds per check (> 0).")] = 120.0,
) -> Verdict:
    """Run the handed-out obligation's validation in the repository. passed: the node is
    complete and the plan advances; failed (a normal result, not an error): only that node and
    its true dependents are replanned. Returns the verdict: passed, the check, its kind, the
    tail of its output. A check the repo's environment could not judge (a module or plugin it
    lacks; files changed while it ran) is a tool error: the node neither passed nor failed, no
    replan is spent. Call `next` for what to do now."""
    verdict = _planner(state).complete(node_id, timeout=timeout)
    if verdict.inconclusive:  # the environment, not the node: the CLI's line (it exits 2)
        raise Plan07Error(f"{node_id} not judged: {verdict.inconclusive}")
    return verdict


def status(state: State = None) -> StatusResult:
    """The plan as a table (id, verb, target, state, deps; `active` marks the handed-out node)
    and its acceptance criteria, for the person supervising the agent: the result's text is
    marked for the user (content annotation audience ["user"]). The agent works from `next`,
    which shows only the current obligation."""
    from plan07.plan.artifact import reached_checkpoints
    from plan07.plan.criteria import criteria_status, termination_blockers

    art = _planner(state).artifact
    order = art.schedule.order
    pos = {nid: i for i, nid in enumerate(order)}
    nodes = [
        StatusRow(id=n.id, verb=n.obligation, target=n.target_entity, state=n.state,
                  status=n.status, deps=list(n.dependencies), active=n.id == art.active,
                  score=art.branch_scores.get(n.id))
        for n in sorted(art.nodes, key=lambda n: (pos.get(n.id, len(order)), n.id))
    ]
    criteria = [CriterionRow(n=c.index, criterion=c.text, kind=c.kind, settled=c.settled,
                             covered_by=list(c.covered_by), confirmed=c.confirmed)
                for c in criteria_status(art)]
    blockers = termination_blockers(art)
    return StatusResult(plan_id=art.plan_id, active=art.active, nodes=nodes,
                        checkpoints_reached=reached_checkpoints(art), criteria=criteria,
                        can_terminate=not blockers, termination_blockers=blockers)


def explain(
    src: Annotated[str, Field(description="The edge's source obligation, e.g. O1.")],
    dst: Annotated[str, Field(description="The edge's target obligation, e.g. O2.")],
    state: State = None,
    depth: Annotated[int | None, Field(description="Cut the proof tree at N levels.")] = None,
) -> Proof:
    """Why the plan orders SRC before DST: a minimal-height proof tree (rule id,
    rules/ordering.dl:LINE, fact sources). When the edge does not hold (a normal result):
    the closest candidate rule and its first missing premise (`why_not`)."""
    from plan07.order.derive import explain as explain_edge
    from plan07.plan.artifact import obligations_of
    from plan07.store import state as st

    planner = _planner(state)
    art = planner.artifact
    return explain_edge(obligations_of(art), st.evidence_of(planner.state_dir, art), src, dst,
                        engine=art.engine, depth=depth, role_facts=art.roles)


def feedback(
    feedback: Annotated[dict[str, Any], WithJsonSchema(_feedback_schema()), Field(
        description="Impact feedback, an object in the shipped `feedback` schema "
                    "(`plan07 schema feedback`): caused_by, impact_edges, "
                    "falsified_entities, falsified_obligations, note.")],
    state: State = None,
) -> FeedbackResult:
    """Impact feedback (§3.6): add the obligations an unforeseen impact needs, remove falsified
    ones, re-walk only the touched edges through the rules. One revision per change."""
    from plan07.store.schema import parse

    fb = parse("feedback", feedback, source="feedback")
    return FeedbackResult(revisions=_planner(state).feedback(fb))


def confirm(
    criteria: Annotated[list[int] | None, Field(
        description="Acceptance criteria to confirm, by number (`status` lists them).")] = None,
    all: Annotated[bool, Field(description="Confirm every derived criterion and every command "
                               "plan07 does not run.")] = False,
    state: State = None,
) -> ConfirmResult:
    """Confirm acceptance criteria (§3.1 step 2) on the user's word: a plan may not terminate on
    a derived criterion, or a command plan07 never runs, until it is confirmed."""
    from plan07.errors import InputError

    if bool(criteria) == all:
        raise InputError("give the criteria to confirm by number, or --all (not both)",
                         field="criteria")
    planner = _planner(state)
    new = planner.confirm("all" if all else list(criteria or []))
    return ConfirmResult(confirmed=new, can_terminate=not planner.termination_blockers())


def rollback(
    to: Annotated[str | None, Field(description="Checkpoint id, e.g. CP2 (default: the last "
                                    "one reached).")] = None,
    state: State = None,
) -> RollbackResult:
    """Restore the repository's files (git work trees only) and the plan state to a
    checkpoint; files added after it are removed, nothing else is touched."""
    done = _planner(state).rollback(to)
    return RollbackResult(checkpoint=done.checkpoint, git_ref=done.git_ref,
                          removed=list(done.removed))


def resume(state: State = None) -> NextResult:
    """After a crash: back to the last checkpoint (plan state, and files in a git tree), then
    the obligation to continue with, as `next` returns it."""
    planner = _planner(state)
    return _next_result(planner, planner.resume())


# name -> (function, read-only?, destructive?)
TOOLS: dict[str, tuple[Callable[..., BaseModel], bool, bool]] = {
    "plan": (plan, False, True),
    "next": (next_, False, False),
    "complete": (complete, False, False),
    "status": (status, True, False),
    "explain": (explain, True, False),
    "feedback": (feedback, False, False),
    "confirm": (confirm, False, False),
    "rollback": (rollback, False, True),
    "resume": (resume, False, True),
}
# The plan table is for the person supervising the agent, not the model (invariant 6): its text
# is marked so (MCP content annotations, `audience`); a client decides what its model reads.
USER_ONLY = {"status"}


# ---------------------------------------------------------------------------------------------
# the server


def _as_tool(fn: Callable[P, BaseModel], *, user_only: bool = False) -> Callable[P, Any]:
    """`fn` as the SDK calls it: its signature and output model unchanged (`functools.wraps`,
    so the SDK derives the same schemas), a plan07 error turned into a tool error carrying the
    CLI's line, a result into structured content plus the same JSON as text (marked for the
    user's eyes only when `user_only`)."""
    from mcp.types import Annotations, CallToolResult, TextContent

    audience = Annotations(audience=["user"]) if user_only else None

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            result = fn(*args, **kwargs)
        except Plan07Error as exc:
            return CallToolResult(is_error=True, content=[
                TextContent(type="text", text=f"error: {exc.one_line()}")])
        data = result.model_dump(mode="json", by_alias=True)
        return CallToolResult(structured_content=data, content=[
            TextContent(type="text", text=json.dumps(data, ensure_ascii=False),
                        annotations=audience)])

    return call


def build_server() -> Any:
    """The MCP server with every plan07 tool registered (nothing is served yet)."""
    from importlib.metadata import version

    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server: Any = MCPServer(SERVER_NAME, version=version("plan07"), instructions=INSTRUCTIONS,
                            log_level="WARNING")
    for name, (fn, read_only, destructive) in TOOLS.items():
        server.add_tool(_as_tool(fn, user_only=name in USER_ONLY), name=name,
                        description=inspect.cleandoc(fn.__doc__ or ""),
                        annotations=ToolAnnotations(read_only_hint=read_only,
                                                    destructive_hint=destructive,
                                                    open_world_hint=False))
    return server


def serve() -> None:
    """Serve the tools over stdio until the client closes stdin."""
    build_server().run("stdio")


if __name__ == "__main__":  # python -m plan07.mcp.server --doc (docs/mcp.md: plan07.mcp.doc)
    from plan07.mcp.doc import main

    main(sys.argv[1:], build_server)
