"""The gate's models (§3.5): the check world a plan fixes at CP0, what each pass certified, a
check's verdict, and what an edit was observed to change. Pure."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from plan07 import caps
from plan07.model.fields import Entity, ObligationId, Strict
from plan07.vocab import CheckKind

ChangeKind = Literal["compatible", "breaking", "narrowing", "behaviour"]
# the observed kinds some old call (or use) cannot bind to
BREAKING_KINDS: tuple[ChangeKind, ...] = ("breaking", "narrowing")


class ObservedChange(Strict):
    """One change of an entity's interface (or behaviour) the gate read off a node's edit,
    compared with the last checkpoint (plan07.gate.observe). `compatible`: every old call still
    binds; `breaking`: some cannot, and its callers need the new form (a parameter renamed,
    reordered or made required, a definition renamed, a string key renamed); `narrowing`: some
    cannot, and its callers can stop using what goes before it goes (a definition, an optional
    parameter or a string key removed, an attribute a class stops setting); `behaviour`: the
    body changed, the interface did not."""

    entity: Entity
    kind: ChangeKind
    what: Annotated[str, StringConstraints(max_length=caps.FIELD_MAX_CHARS)]
    file: Annotated[str, StringConstraints(max_length=caps.FIELD_MAX_CHARS)] = ""
    # a breaking change: the recon consumers whose calls no longer bind (or cannot be read)
    consumers: Annotated[list[Entity], Field(max_length=caps.MAX_OBLIGATIONS)] = []
    # a class that no longer sets these attribute paths on its instances (its consumers: the
    # subclasses left without them)
    fields: Annotated[list[Entity], Field(max_length=caps.MAX_OBLIGATIONS)] = []
    # a string key the edit stopped defining or reading while other code holds it (its
    # consumers: the places holding it; plan07.gate.stringrefs)
    keys: Annotated[list[Entity], Field(max_length=caps.MAX_OBLIGATIONS)] = []


class GateRecord(Strict):
    """What the gate recorded when a node passed (plan07.gate.world): the content it ran on (a git
    tree id, or a stat fingerprint outside git), whether the files differ from the previous
    validated state, and whether an executed test proved it: a test that did not pass at CP0
    passes now (a check that passed on the untouched tree proves nothing about a change).
    `regression`: the run was the plan's regression run, over `ran` tests."""

    tree: str | None = None
    changed: bool = False
    proved: bool = False
    regression: bool = False
    ran: int = 0


class GateInfo(Strict):
    """The plan's check world (§3.5, README "The gate"): the repo's interpreter and where it was
    found, the test command (an argv template; None: the repo's pytest), the CP0 baseline's sidecar
    and the tests already failing then, the CP0 content, and one record per validated node."""

    python: str
    python_source: str
    test_command: list[str] | None = None
    test_ids: str = "pytest"
    test_root: str = ""
    command_source: str = "default"
    baseline_file: str | None = None
    baseline_tests: int = 0
    baseline_failing: Annotated[list[str], Field(max_length=16)] = []
    baseline_failing_total: int = 0
    baseline_seconds: float = 0.0  # how long the CP0 run took: checks' timeouts are sized on it
    # why the CP0 baseline is not taken yet (no interpreter could run the plan's tests): the
    # first `complete` whose interpreter can takes it, on the CP0 content
    baseline_deferred: str | None = None
    # nodes whose check passed on the untouched tree at CP0: passing it proves nothing about a
    # change (the driver view says so; it settles no criterion)
    passed_at_cp0: list[ObligationId] = []
    regression: str = "modules"  # "modules": the changed modules' tests; "suite": every test
    cp0_tree: str | None = None
    validated: dict[str, GateRecord] = {}


# §3.5 the local validation gate's outcome: a value, not an exception



class Verdict(Strict):
    """The outcome of one node's validation (§3.5 step 1). `unverifiable` means the validation
    string is none of the runnable checks: the plan cannot terminate on it (design.md)."""

    node_id: ObligationId
    passed: bool
    check: str
    kind: CheckKind
    output_tail: str = ""
    duration_s: float = 0.0
    test_calls: int = 0
    # the check could not judge the node (the repo's environment lacks a module, its pytest
    # lacks a plugin, the files changed while it ran): not the node's failure, no replan
    # (plan07.gate.world); one line saying what to do
    inconclusive: str | None = None
    preexisting: list[str] = []  # failing already at the CP0 baseline: reported, not blamed
    tests: list[str] = []  # what the test command ran (the exercising tests included)
    # passing now and not at CP0 (failing then, or written since): what proves a change
    fixed: list[str] = []
    ran: int = 0  # how many tests the run reported
    red: bool = False  # a test-defining node, judged red (it must fail for an assertion)
    # the interface changes the gate observed in this node's edit, one line each
    observed: list[Annotated[str, StringConstraints(max_length=caps.FIELD_MAX_CHARS)]] = []
    # not checked: the observed change cannot be valid alone, so the node became one step with
    # these pending obligations (its composite is handed out next); nothing failed
    merged_into: ObligationId | None = None
    merged: list[ObligationId] = []
    # not checked: the observed edit narrows what these pending obligations still use, so they
    # rebind first (rebind before narrow); its files are back at the last checkpoint, the edit
    # saved (output_tail names where), and the node comes again after them
    set_aside_for: list[ObligationId] = []
    observe_s: float = 0.0  # seconds spent reading the edit (and acting on it) before the check
