"""Pydantic models for every artifact of spec 07, with its caps enforced. Pure.

One model per artifact: the requirement (§3.1), the obligation record (§3.2/§4), the
decomposition result (§4), the derived order (§3.2), the plan DAG (§3.3), the driver view (§3.4)
and the persisted plan artifact (§3.7). JSON Schemas shipped in `plan07/schemas/` are generated
from these (see plan07.store.schema); a test fails on drift. The shared field types and the strict
base are plan07.model.fields'.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from plan07 import caps
from plan07.model.evidence import Evidence, ImpactEdge
from plan07.model.fields import (
    Entity,
    Field500,
    NodeState,
    NonBlank,
    ObligationId,
    Predicate,
    Status,
    Strict,
    Unit,
    Verb,
)
from plan07.model.gate import GateInfo, ObservedChange
from plan07.vocab import duplicates

# ---------------------------------------------------------------------------------------------
# §3.1 requirement artifact


class Requirement(Strict):
    """The typed requirement artifact of §3.1. `needs_confirmation` is true when the criteria were
    derived from the request's verbs rather than named by it: a plan may start on such a
    predicate but must not terminate on it (§3.1 step 2)."""

    goal: Annotated[
        str, StringConstraints(min_length=1, max_length=caps.GOAL_MAX_CHARS, pattern=NonBlank)
    ]
    acceptance_criteria: Annotated[
        list[Predicate], Field(min_length=1, max_length=caps.MAX_ACCEPTANCE_CRITERIA)
    ]
    constraints: Annotated[list[Predicate], Field(max_length=caps.MAX_CONSTRAINTS)] = []
    needs_confirmation: bool = False


# ---------------------------------------------------------------------------------------------
# §3.2 / §4 obligation record: exactly these 8 fields, nothing outside them.


class Obligation(Strict):
    """The P1 PlanNode record (§3.2, §4). `dependencies: ["O3"]` on O7 is the edge O3 -> O7."""

    id: ObligationId
    target_entity: Entity
    obligation: Verb
    caused_by: Field500
    dependencies: Annotated[list[ObligationId], Field(max_length=caps.MAX_DEPENDENCIES)]
    evidence: Annotated[str, StringConstraints(max_length=caps.EVIDENCE_MAX_CHARS)]
    status: Status
    validation: Field500


# The words of `mentions(O, W)` (docs/rules.md): what the rules know of an obligation's text.
RoleWord = Literal["default", "old_default", "new_default", "compatible", "breaking", "behaviour"]


class RoleFacts(Strict):
    """The `mentions` facts plan07 gives an obligation it wrote itself (docs/rules.md "Role
    facts"), read instead of its prose. `of` binds them to the obligation's text
    (plan07.order.roles.digest): one rewritten under the same id is read from its prose again."""

    of: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{12}$")]
    words: list[RoleWord]


class Usage(Strict):
    """Token usage of one model call (the A/B harness sums these, §7)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


class Decomposition(Strict):
    """The §4 output. On any parse failure, schema violation or > 64 records:
    `obligations == []` and `re_decompose == true` (the fallback), with the reason and the raw
    completion kept for the audit. Never a second call."""

    obligations: Annotated[list[Obligation], Field(max_length=caps.MAX_OBLIGATIONS)]
    re_decompose: bool = False
    rescope: bool = False  # > 64 records: flagged for re-scoping, nothing scheduled (§4 caps)
    reason: str | None = None
    raw: str | None = None
    usage: Usage | None = None
    client: str | None = None
    # plan07's own decomposer's role facts for the obligations it wrote; never a model's
    roles: dict[ObligationId, RoleFacts] | None = None

    @model_validator(mode="after")
    def _unique_ids(self) -> Decomposition:
        dup = duplicates(o.id for o in self.obligations)
        if dup:
            raise ValueError(f"duplicate obligation id(s): {', '.join(dup)}")
        return self


# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# §3.2 the derived order: edges with their rule, and temporal-consistency violations


class DerivedEdge(Strict):
    """`precedes(from, to, rule)`: `from` must be discharged before `to`."""

    from_: ObligationId = Field(alias="from")
    to: ObligationId
    rule: str


class Violation(Strict):
    """`violation(...)`: a temporal-consistency problem the rules found. `nodes` are the obligation
    ids (or entities) involved; an offending edge is `nodes == [from, to]`."""

    kind: str
    nodes: list[str]
    detail: str = ""


class LintContext(Strict):
    """What the plan lint read besides the plan and its evidence (docs/rules.md "Plan lint"), so
    `plan07 lint` and `explain --finding` read the same: where the plan's new tests belong, and
    the entities the request names in code."""

    homes: list[str] = []
    requested: list[Entity] = []


class OrderResult(Strict):
    """The rules' output: the edges to follow, the violations, and the dependency cycles among
    the edges (each a sorted member list; the scheduler collapses each into one step, §3.3)."""

    edges: list[DerivedEdge] = []
    violations: list[Violation] = []
    cycles: list[list[ObligationId]] = []


# ---------------------------------------------------------------------------------------------
# §3.3 plan DAG and §3.7 plan nodes


class PlanNode(Obligation):
    """An obligation in the plan, with its execution state (§3.7 `state`). A composite node made by
    cycle collapse (§3.3 step 2) has `cycle_collapsed` and records its member ids."""

    state: NodeState = "pending"
    cycle_collapsed: bool = False
    members: list[ObligationId] = []


class Checkpoint(Strict):
    """A step marker (§3.3 step 4): after `after` are all validated, the repo is temporally
    consistent and the plan is persisted. `git_ref` is the repository snapshot, when a git tree."""

    id: Annotated[str, StringConstraints(pattern=r"^CP[0-9]+$")]
    step: int
    after: list[ObligationId]
    git_ref: str | None = None


class PlanDAG(Strict):
    """The §3.3 emit: nodes, edges as obligation-id pairs, the exact ready/blocked/alternative
    partition, checkpoints and branch scores."""

    nodes: Annotated[list[PlanNode], Field(max_length=caps.MAX_NODES)]
    edges: list[tuple[ObligationId, ObligationId]]
    ready: list[ObligationId]
    blocked: list[ObligationId]
    alternative: list[ObligationId]
    checkpoints: Annotated[list[Checkpoint], Field(max_length=caps.MAX_CHECKPOINTS)]
    branch_scores: Annotated[dict[ObligationId, Unit], Field(max_length=caps.MAX_BRANCH_SCORES)]


# ---------------------------------------------------------------------------------------------
# §3.4 the driver view: the single actionable obligation, nothing more


class Bounds(Strict):
    max_edit_files: int = caps.MAX_EDIT_FILES
    max_test_calls: int = caps.MAX_TEST_CALLS


class PermittedActions(Strict):
    read: bool = True
    edit: bool = True
    test: bool = True
    bounds: Bounds = Bounds.model_construct()


class DriverView(Strict):
    """The §3.4 fields, then what an agent needs to act on this one obligation: the plan's goal,
    why this obligation exists and its evidence, the acceptance criteria it serves, and what its
    check will run. Still one node: never another node or the schedule."""

    node_id: ObligationId
    obligation: Verb
    target_entity: Entity
    preconditions: dict[ObligationId, Literal["complete"]]
    permitted_actions: PermittedActions
    required_validation: Field500
    # a local retry (plan07.plan.retry): the previous attempt's failure, one line
    failure_digest: Annotated[str, StringConstraints(
        max_length=caps.PROMPT_FAILURE_MAX_CHARS)] | None = None
    goal: Annotated[str, StringConstraints(max_length=caps.GOAL_MAX_CHARS)] = ""
    caused_by: Field500 = ""
    evidence: Annotated[str, StringConstraints(max_length=caps.EVIDENCE_MAX_CHARS)] = ""
    criteria: Annotated[list[Predicate], Field(max_length=caps.MAX_ACCEPTANCE_CRITERIA)] = []
    check: Field500 = ""
    # what the check's pass will and will not prove (it passed at CP0 on the untouched tree: it
    # proves nothing about the change), one line; absent when there is nothing to say
    check_note: Field500 | None = None
    # this node (a merged step: members of it) was set aside before its check (rebind before
    # narrow; the step it merged into waited for pending work): the git commands that bring
    # back the edits saved then (run in the repository); absent otherwise
    saved_edit: Annotated[str, StringConstraints(max_length=caps.SAVED_EDIT_MAX_CHARS)] | None \
        = None

    def data(self) -> dict[str, Any]:
        """The view as JSON data, the one shape every surface shows (`plan07 next --json`,
        resume, the MCP `next` tool): the failure digest only on a retry, never as null."""
        return self.model_dump(mode="json", exclude_none=True)


# ---------------------------------------------------------------------------------------------
# §3.7 the persisted plan artifact


class Revision(Strict):
    rev: int
    time: str
    change: str
    caused_by: str


class AuditRow(Strict):
    """One row per state transition (§3.7). `accepted_edit` links an edit to its obligation."""

    obligation: str
    accepted_edit: str = ""
    trace: str
    event: str = ""
    time: str = ""


class LogOverflow(Strict):
    """A capped log (audit 64, revisions 32) spilled its oldest `rows` to `file`, beside
    plan.json, one JSON row per line (design.md: past a log cap nothing is lost)."""

    file: str
    rows: int = 0


class NodeBounds(Strict):
    """One obligation's use of its §3.4 bounds: distinct edited files; test calls, the harness's
    (reported) and the validation gate's own checks together; scoped replans charged to it
    (caps.MAX_REPLANS_PER_NODE, ours). Kept when a replan reuses the node's id."""

    edited_files: Annotated[list[str], Field(max_length=caps.MAX_EDIT_FILES)] = []
    test_calls: Annotated[int, Field(ge=0, le=caps.MAX_TEST_CALLS)] = 0
    replans: Annotated[int, Field(ge=0, le=caps.MAX_REPLANS_PER_NODE)] = 0
    # runtime-structured retry (plan07.plan.retry): failures handled (local or replanned), the last
    # failure's signature, how many local retries in a row ended with it, and its digest (what
    # the next hand-out carries, DriverView.failure_digest)
    retries: Annotated[int, Field(ge=0, le=caps.MAX_RETRIES_CAP + 1)] = 0
    signature: Annotated[str, StringConstraints(max_length=200)] = ""
    repeats: Annotated[int, Field(ge=0, le=caps.MAX_RETRIES_CAP + 1)] = 0
    digest: Annotated[str, StringConstraints(max_length=caps.PROMPT_FAILURE_MAX_CHARS)] = ""


class PlanSchedule(Strict):
    """The §3.3 emit as of the last state change: execution order and the partition."""

    order: list[ObligationId] = []
    ready: list[ObligationId] = []
    blocked: list[ObligationId] = []
    alternative: list[ObligationId] = []


class PlanArtifact(BaseModel):
    """The §3.7 serialized plan. The §3.7 fields are never renamed; extra fields (derived edges
    with their rule, violations, schedule, overflow sidecars...) are allowed (design.md)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    plan_id: str
    requirement: Requirement
    nodes: Annotated[list[PlanNode], Field(max_length=caps.MAX_NODES)]
    checkpoints: Annotated[list[Checkpoint], Field(max_length=caps.MAX_CHECKPOINTS)]
    branch_scores: Annotated[dict[str, Unit], Field(max_length=caps.MAX_BRANCH_SCORES)]
    revision_history: Annotated[list[Revision], Field(max_length=caps.MAX_REVISIONS)]
    audit: Annotated[list[AuditRow], Field(max_length=caps.MAX_AUDIT_ROWS)]
    # Extras (design.md: allowed, never renaming the §3.7 fields), so a plan can be explained,
    # resumed and audited from plan.json alone. Written by plan07.store.state / plan07.api.
    repo: str | None = None
    engine: str = "pydatalog"
    llm: str = "builtin"
    edges: list[DerivedEdge] = []
    violations: list[Violation] = []
    # what the plan lint found and could not repair (docs/rules.md "Plan lint"): a warning the
    # harness can act on, never a refusal
    findings: Annotated[list[Violation], Field(max_length=caps.MAX_FINDINGS)] = []
    lint_context: LintContext | None = None
    evidence: Evidence | None = None  # the obligations' 2-hop neighbourhood, or None when...
    evidence_file: str | None = None  # ...it did not fit 32 KB and lives in this sidecar
    usage: list[Usage] = []
    schedule: PlanSchedule = PlanSchedule.model_construct()
    collapsed: dict[str, list[Obligation]] = {}  # composite id -> its member obligations
    roles: dict[ObligationId, RoleFacts] | None = None  # of the obligations plan07 wrote
    active: ObligationId | None = None  # the obligation handed out by the driver
    bounds: dict[str, NodeBounds] = {}
    # failures one node may have handled before it is stuck (plan07.plan.retry; a harness passes
    # its own retry bound to Planner.create)
    max_retries: Annotated[int, Field(ge=0, le=caps.MAX_RETRIES_CAP)] = caps.MAX_RETRIES_PER_NODE
    audit_overflow: LogOverflow | None = None
    revisions_overflow: LogOverflow | None = None
    # §3.1 step 2: acceptance criteria (1-based) the user confirmed (`plan07 confirm`); None
    # until the first confirmation, so a plan without one keeps its bytes
    confirmed_criteria: list[Annotated[int, Field(ge=1, le=caps.MAX_ACCEPTANCE_CRITERIA)]] | None \
        = None
    gate: GateInfo | None = None  # §3.5: the repo's interpreter, test command, baseline
    # what the gate observed each node's edit change (plan07.gate.observe): interface changes
    # the rules read as `observed_change(O, E, Kind)` facts (docs/rules.md "Observed changes")
    observed: dict[ObligationId, list[ObservedChange]] | None = None
    # nodes set aside before their check (their edit narrowed what pending consumers still use):
    # the ref their edit is saved in, shown once when the node is handed out again
    set_aside: dict[ObligationId, Annotated[str, StringConstraints(max_length=200)]] | None = None
    # §3.6 revision from the run itself (observed edits, failures in unplanned consumers' tests):
    # off only for the §7.5 ablation of the revision trigger
    revision: Literal[False] | None = None
    ordering: Literal[False] | None = None  # False: no rules order the plan (§7.5 ablation)
    # why nothing more is handed out: a node failed past its retry bound and its edit could not
    # be undone (no git snapshot); None while the plan runs (plan07.checkpoints)
    halted: Annotated[str, StringConstraints(max_length=caps.FIELD_MAX_CHARS)] | None = None
    # Issue 15 (crash consistency): the seq of the last checkpoint record this plan.json commits
    # (write-ahead: a record above it is a half-done step, discarded on the next write), and the
    # hand-out epoch, +1 on every hand-out (`next`, also after a resume): a verdict is recorded
    # only for the epoch its `complete` started in. None in a plan written before either.
    checkpoint_seq: Annotated[int, Field(ge=0)] | None = None
    epoch: Annotated[int, Field(ge=0)] | None = None


# ---------------------------------------------------------------------------------------------
# §3.6 impact feedback: what component 06 observed after an edit (docs/revise.md)


class Feedback(Strict):
    """Impact feedback that contradicts the schedule (§3.6): new impact edges (a consumer or a
    dependency the plan did not foresee), falsified entities and falsified obligations.
    `caused_by` names the obligation whose edit produced the observation (or other evidence)."""

    caused_by: Annotated[str, StringConstraints(min_length=1, max_length=caps.ID_MAX_CHARS * 4,
                                                pattern=NonBlank)]
    impact_edges: Annotated[list[ImpactEdge], Field(max_length=caps.MAX_OBLIGATIONS)] = []
    falsified_entities: Annotated[list[Entity], Field(max_length=caps.MAX_OBLIGATIONS)] = []
    falsified_obligations: Annotated[
        list[ObligationId], Field(max_length=caps.MAX_OBLIGATIONS)
    ] = []
    note: Field500 = ""
