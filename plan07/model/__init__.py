"""The pydantic models of every artifact of spec 07, with their caps enforced. Pure. Import them
from here (`from plan07.model import PlanArtifact`):

- `artifacts`: the requirement (§3.1), the obligation record (§3.2/§4), the decomposition (§4), the
  derived order (§3.2), the plan DAG (§3.3), the driver view (§3.4), the persisted plan (§3.7),
  a check's verdict (§3.5) and impact feedback (§3.6);
- `evidence`: the 03/04/05/06 evidence bundle plan07 reads;
- `gate`: the check world, a check's verdict, the changes observed in an edit;
- `proof`: the proof tree `explain` returns;
- `views`: what the Planner answers a skin (the next step, the status table, the audit);
- `fields`: the strict base model and the constrained field types they share.

The JSON Schemas shipped in `plan07/schemas/` are generated from these (plan07.store.schema).
"""

from __future__ import annotations

from plan07.model.artifacts import (
    AuditRow,
    Bounds,
    Checkpoint,
    Decomposition,
    DerivedEdge,
    DriverView,
    Feedback,
    LintContext,
    LogOverflow,
    NodeBounds,
    Obligation,
    OrderResult,
    PermittedActions,
    PlanArtifact,
    PlanDAG,
    PlanNode,
    PlanSchedule,
    Requirement,
    Revision,
    RoleFacts,
    RoleWord,
    Usage,
    Violation,
)
from plan07.model.evidence import (
    ContextItem,
    EdgeKind,
    Evidence,
    Impact,
    ImpactEdge,
    Localization,
    NodeKind,
    Recon,
    ReconEdge,
    ReconNode,
    SoftRank,
)
from plan07.model.gate import (
    BREAKING_KINDS,
    ChangeKind,
    GateInfo,
    GateRecord,
    ObservedChange,
    Verdict,
)
from plan07.model.proof import Proof, ProofNode
from plan07.model.views import AuditLog, CriterionRow, NextStep, PlanStatus, StatusRow

__all__ = [
    "BREAKING_KINDS",
    "ChangeKind",
    "ObservedChange",
    "AuditLog",
    "CriterionRow",
    "NextStep",
    "PlanStatus",
    "StatusRow",
    "AuditRow",
    "Bounds",
    "Checkpoint",
    "ContextItem",
    "Decomposition",
    "DerivedEdge",
    "DriverView",
    "EdgeKind",
    "Evidence",
    "Feedback",
    "GateInfo",
    "GateRecord",
    "Impact",
    "ImpactEdge",
    "Localization",
    "LogOverflow",
    "NodeBounds",
    "NodeKind",
    "Obligation",
    "OrderResult",
    "PermittedActions",
    "PlanArtifact",
    "PlanDAG",
    "PlanNode",
    "PlanSchedule",
    "Proof",
    "ProofNode",
    "Recon",
    "ReconEdge",
    "ReconNode",
    "Requirement",
    "Revision",
    "RoleFacts",
    "RoleWord",
    "SoftRank",
    "Usage",
    "Verdict",
    "LintContext",
    "Violation",
]
