"""`plan07 mcp`: the CLI's verbs as MCP tools over stdio, for any coding agent that takes tools
over the Model Context Protocol. Built on the official MCP Python SDK's v2 API (`mcp>=2.3`,
`mcp.server.mcpserver.MCPServer`). I/O: stdio (the SDK's), the plan state dir (plan07.store.state).

Each tool is a thin call of the library (`plan07.api.Planner` and the views `plan07 status` and
`plan07 explain` print), with typed, documented arguments and a JSON result (structured content
validated against the tool's output schema, and the same JSON as text). A plan07 error (bad
input, a state that refuses the call) is a tool error whose text is the line the CLI prints
(`error: ...`) told to an agent (`for_agent`: a plan07 command it names becomes the tool to call,
a flag the tool's argument), with nothing written; a domain "no" (a failed check, an edge that
does not hold, a plan that may not terminate yet) is a normal result, as the CLI's exit 1 is.
Tool and argument descriptions are in plain words; the spec's sections are cited in the docs.

Invariant 6 (§3.4, §8): `next`, `resume` and `complete` return the single actionable obligation
(or its verdict) and nothing of the rest of the schedule; only `status`, which a person reads,
returns the plan table.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec

from pydantic import BaseModel, Field, WithJsonSchema

from plan07.errors import Plan07Error
from plan07.mcp.schemas import (
    ConfirmResult,
    FeedbackResult,
    NodeId,
    PlanResult,
    RollbackResult,
    State,
    feedback_schema,
)
from plan07.model import NextStep, PlanStatus, Proof, Verdict

if TYPE_CHECKING:
    from plan07 import Planner

SERVER_NAME = "plan07"
INSTRUCTIONS = (
    "plan07 plans a coding request into typed obligations ordered by Datalog rules and hands "
    "them out one at a time. Loop: `plan` once; then `next` (the one obligation to work on: its "
    "target, preconditions, bounds and required validation), edit the repository for it, "
    "`complete` it (runs its check: passed advances the plan, failed replans only that node and "
    "its dependents), and `next` again, until `next` returns no node and can_terminate is true. "
    "`feedback` reports an impact the plan did not foresee; `rollback`/`resume` return to a "
    "checkpoint; `confirm` settles acceptance criteria only the user can settle."
)

P = ParamSpec("P")

# ---------------------------------------------------------------------------------------------
# the tools: thin calls of the library


def _planner(state: str | None) -> Planner:
    from plan07 import Planner

    return Planner.open(state or None)


def plan(
    request: Annotated[str, Field(description="The request, as text (markdown; a GitHub issue "
                                  "is fine).")],
    repo: Annotated[str, Field(description="The repository the plan edits (a directory).")],
    state: State = None,
    llm: Annotated[str, Field(description="Who makes the one model call that breaks the request "
                              "into obligations: builtin (offline, no model), replay:PATH (a "
                              "recorded completion) or openai:MODEL (PLAN07_LLM_BASE_URL / "
                              "PLAN07_LLM_API_KEY, else OPENAI_BASE_URL / OPENAI_API_KEY).")]
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
    replace: Annotated[bool, Field(description="Replace a plan in the state directory that "
                                   "has progress (obligations completed or failed, edits, "
                                   "confirmations). Without it such a plan is kept and this "
                                   "call is an error; a plan with no progress is replaced "
                                   "either way.")] = False,
    reproduce: Annotated[bool, Field(description="Run the issue's own Python snippets with the "
                                     "repo's interpreter first; where they raise and what they "
                                     "call steers localization (docs/evidence.md).")] = False,
    reproduce_preamble: Annotated[str | None, Field(description="Python code run before the "
                                                    "snippets: the session the project's "
                                                    "issues assume; default: [tool.plan07] "
                                                    "reproduce-preamble.")] = None,
) -> PlanResult:
    """Plan a request: read it, break it into obligations, order them by the rules, schedule
    them and save the plan; then run the plan's tests once in the repository's environment (the
    baseline: what fails already is never blamed). A plan already in the state directory that
    has progress is kept, and this call refused, unless `replace` is true. Returns the plan's id
    and sizes, not its schedule; call `next` for the obligation to work on."""
    from plan07 import Planner

    planner = Planner.create(request, repo=Path(repo), evidence=evidence, llm=llm,
                             state_dir=Path(state) if state else None, engine=engine,
                             python=python, test_command=None if test_command is None
                             else json.dumps(test_command), replace=replace,
                             reproduce=reproduce, preamble=reproduce_preamble)
    art, gate = planner.artifact, planner.artifact.gate
    return PlanResult(plan_id=art.plan_id, state=str(planner.state_dir.resolve()),
                      goal=art.requirement.goal, nodes=len(art.nodes), edges=len(art.edges),
                      checkpoints=len(art.checkpoints), violations=art.violations,
                      python=f"{gate.python} (from {gate.python_source})" if gate else None,
                      reproduction=planner.reproduced)


def next_(state: State = None) -> NextStep:
    """The one obligation to work on now: id, verb, target, preconditions, permitted actions
    and bounds, required validation; nothing of the rest of the schedule. The same node
    until it is completed. When nothing is left: whether the plan may terminate, or what blocks
    it (failed nodes, unsettled acceptance criteria)."""
    return _planner(state).next_step()


def complete(
    node_id: NodeId,
    state: State = None,
    timeout: Annotated[float | None, Field(
        description="Seconds per check (> 0); default: sized from the CP0 baseline's run (a "
        "check that runs out of time is not judged).")] = None,
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


def status(state: State = None) -> PlanStatus:
    """The plan as a table (id, verb, target, state, deps; `active` marks the handed-out node)
    and its acceptance criteria, for the person supervising the agent: the result's text is
    marked for the user (content annotation audience ["user"]). The agent works from `next`,
    which shows only the current obligation."""
    return _planner(state).status()


def explain(
    src: Annotated[str, Field(description="The edge's source obligation, e.g. O1.")],
    dst: Annotated[str, Field(description="The edge's target obligation, e.g. O2.")],
    state: State = None,
    depth: Annotated[int | None, Field(description="Cut the proof tree at N levels.")] = None,
) -> Proof:
    """Why the plan orders SRC before DST: a minimal-height proof tree (rule id,
    rules/ordering.dl:LINE, fact sources). When the edge does not hold (a normal result):
    the closest candidate rule and its first missing premise (`why_not`)."""
    return _planner(state).explain(src, dst, depth=depth)


def feedback(
    feedback: Annotated[dict[str, Any], WithJsonSchema(feedback_schema()), Field(
        description="Impact feedback, an object in the shipped `feedback` schema "
                    "(this argument's schema): caused_by, impact_edges, "
                    "falsified_entities, falsified_obligations, note.")],
    state: State = None,
) -> FeedbackResult:
    """Impact feedback: add the obligations an unforeseen impact needs, remove falsified
    ones, re-walk only the touched edges through the rules. One revision per change."""
    from plan07 import parse_artifact

    fb = parse_artifact("feedback", feedback, source="feedback")
    return FeedbackResult(revisions=_planner(state).feedback(fb))


def confirm(
    criteria: Annotated[list[int] | None, Field(
        description="Acceptance criteria to confirm, by number (`status` lists them).")] = None,
    all: Annotated[bool, Field(description="Confirm every derived criterion and every command "
                               "plan07 does not run.")] = False,
    state: State = None,
) -> ConfirmResult:
    """Confirm acceptance criteria on the user's word: a plan may not terminate on
    a derived criterion, or a command plan07 never runs, until it is confirmed."""
    planner = _planner(state)
    new = planner.confirm(criteria or (), all=all)
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


def resume(state: State = None) -> NextStep:
    """After a crash: back to the last checkpoint (plan state, and files in a git tree), then
    the obligation to continue with, as `next` returns it."""
    return _planner(state).resume_step()


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
# every argument name of every tool (a CLI flag of the same name becomes it in an error)
_ARGUMENTS = {name for fn, _, _ in TOOLS.values()
              for name in inspect.signature(fn).parameters}


# ---------------------------------------------------------------------------------------------
# errors, told to an agent

# a tool's positional CLI arguments, by the tool argument they are
_POSITIONAL = {"plan": ("request",), "complete": ("node_id",), "explain": ("src", "dst"),
               "confirm": ("criteria",)}
_SPAN = re.compile(r"(?:\b(re-run|run) )?`([^`]*)`")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z-]*)(?: ([A-Z]+)\b)?")
_PLACEHOLDER = re.compile(r"[A-Z]+")


def for_agent(line: str) -> str:
    """A CLI error line as an agent reads it: "run `plan07 next`" -> "call the `next` tool",
    "pass --replace" -> "pass the `replace` argument". Commands and flags that are no tool's are
    kept as they are (`plan07 rules test --engine both`)."""

    def flags(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            name = m.group(1).replace("-", "_")
            return f"the `{name}` argument" if name in _ARGUMENTS else m.group(0)

        return _FLAG.sub(one, text)

    def span(m: re.Match[str]) -> str:
        lead, words = m.group(1), m.group(2).split()
        if len(words) == 1 and words[0].startswith("--"):  # `--all`
            return (f"{lead} " if lead else "") + flags(words[0])
        if len(words) < 2 or words[0] != "plan07" or words[1] not in TOOLS:
            return m.group(0)
        verb = words[1]
        return (f"call the `{verb}` tool{' again' if lead == 're-run' else ''}" if lead
                else f"the `{verb}` tool") + _arguments(verb, words[2:])

    out, last = [], 0
    for m in _SPAN.finditer(line):
        out += [flags(line[last:m.start()]), span(m)]
        last = m.end()
    return "".join([*out, flags(line[last:])])


def _arguments(verb: str, words: list[str]) -> str:
    """` with `repo`, `src` O2` for the CLI words after `plan07 VERB`."""
    named, positional = [], list(_POSITIONAL.get(verb, ()))
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") \
                and not _PLACEHOLDER.fullmatch(words[i + 1]) else None
            named.append(f"`{w[2:].replace('-', '_')}`" + (f" {value}" if value else ""))
            i += 2 if value else 1
            continue
        if positional and not _PLACEHOLDER.fullmatch(w):
            if verb == "confirm":
                named.append(f"`criteria` [{w}]")
            else:
                named.append(f"`{positional.pop(0)}` {w}")
        i += 1
    return f" with {', '.join(named)}" if named else ""


# ---------------------------------------------------------------------------------------------
# the server


def build_server() -> Any:
    """The MCP server with every plan07 tool registered (nothing is served yet)."""
    from importlib.metadata import version

    from mcp.types import ToolAnnotations

    from plan07.mcp.guard import as_tool, server_class

    server: Any = server_class()(SERVER_NAME, version=version("plan07"),
                                  instructions=INSTRUCTIONS, log_level="WARNING")
    for name, (fn, read_only, destructive) in TOOLS.items():
        server.add_tool(as_tool(fn, for_agent, user_only=name in USER_ONLY), name=name,
                        description=inspect.cleandoc(fn.__doc__ or ""),
                        annotations=ToolAnnotations(read_only_hint=read_only,
                                                    destructive_hint=destructive,
                                                    open_world_hint=False))
    return server


def serve() -> None:
    """Serve the tools over stdio until the client closes stdin (plan07.mcp.guard: an
    over-deep request gets its reply; a call still running after the client left ends)."""
    from plan07.mcp.guard import serve_stdio

    serve_stdio(build_server())


if __name__ == "__main__":  # python -m plan07.mcp.server --doc (docs/mcp.md: plan07.mcp.doc)
    from plan07.mcp.doc import main

    main(sys.argv[1:], build_server)
