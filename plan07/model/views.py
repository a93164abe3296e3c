"""What the Planner answers a skin (the CLI, the MCP server, a harness): the next step, the plan's
status and its audit, as models every surface renders the same way. Pure.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_serializer

from plan07.model.artifacts import AuditRow, DriverView, Revision


class NextStep(BaseModel):
    """The single actionable obligation (§3.4), or, when nothing is left to hand out, whether
    the plan may terminate and what blocks it."""

    node: DriverView | None = Field(description="The obligation to work on now (§3.4 view); "
                                    "null when nothing is left to hand out.")
    can_terminate: bool = Field(description="True only when no node is left and every "
                                "termination condition holds: the plan is done.")
    termination_blockers: list[str] = Field(description="Why the plan may not terminate yet "
                                            "(empty while a node is handed out, or when done).")

    @field_serializer("node")
    def _view(self, node: DriverView | None) -> dict[str, Any] | None:
        return None if node is None else node.data()

    def data(self) -> dict[str, Any]:
        """What `plan07 next --json` prints: the view itself, or the termination answer."""
        if self.node is not None:
            return self.node.data()
        return {"node_id": None, "can_terminate": self.can_terminate,
                "termination_blockers": self.termination_blockers}


class StatusRow(BaseModel):
    """One node of the plan table (`active`: the handed-out one; `score`: an alternative's)."""

    id: str
    verb: str
    target: str
    state: str
    status: str
    deps: list[str]
    active: bool
    score: float | None


class CriterionRow(BaseModel):
    """One acceptance criterion and how it is settled (plan07.plan.criteria)."""

    n: int
    criterion: str
    kind: str
    settled: bool
    covered_by: list[str]
    confirmed: bool


class PlanStatus(BaseModel):
    """The plan table and its acceptance criteria, for the person supervising the agent (the
    agent works from `next`)."""

    plan_id: str
    active: str | None
    nodes: list[StatusRow]
    checkpoints_reached: list[str]
    criteria: list[CriterionRow]
    can_terminate: bool
    termination_blockers: list[str]
    left: bool = Field(default=False, description="A node is handed out or would be handed "
                       "out: the plan is not over.")


class AuditLog(BaseModel):
    """Every audit row and revision of a plan, the spilled ones first."""

    plan_id: str
    audit: list[AuditRow]
    revision_history: list[Revision]
