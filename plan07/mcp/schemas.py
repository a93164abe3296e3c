"""The MCP tools' typed arguments and results (their descriptions and models become the tools'
input and output schemas, plan07.mcp.server). Pure.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from plan07.model import Revision, Violation

# ---------------------------------------------------------------------------------------------
# arguments (their descriptions become the tools' input schemas)

State = Annotated[str | None, Field(
    description="The plan state directory (holds plan.json). Default as the CLI: "
                "$PLAN07_STATE, else build/07-task-decomposition-planning/ under the server's "
                "working directory. Relative paths are read from that directory too.")]
NodeId = Annotated[str, Field(description="The obligation id `next` handed out, e.g. O3.")]


def feedback_schema() -> dict[str, Any]:
    """The shipped feedback schema with its `$defs` inlined: it becomes one property of the
    tool's input schema, where a `#/$defs/...` reference would point at the wrong root."""
    from plan07 import shipped_schema

    schema = shipped_schema("feedback")
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
    reproduction: str | None = Field(default=None, description="With `reproduce`: what running "
                                     "the issue's own code showed (where it raised, what it "
                                     "called), one line.")


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
