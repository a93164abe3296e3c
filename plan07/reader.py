"""Reading a persisted plan: `PlanReader` (the artifact, its status, audit, DAG, obligations, why
an edge exists), the read-only half of the Planner (plan07.api), which extends it. I/O: reads
the state dir (plan07.store.state), never writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from plan07.errors import InputError
from plan07.model import (
    AuditLog,
    Evidence,
    Obligation,
    PlanArtifact,
    PlanDAG,
    PlanStatus,
    Proof,
    Usage,
)
from plan07.plan import artifact
from plan07.store import state


class PlanReader:
    """One persisted plan in `state_dir`, read: every property re-reads plan.json, so it shows
    what another process (a Planner driving the plan) wrote."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self._evidence_cache: tuple[str | None, Evidence] | None = None

    @classmethod
    def at(cls, state_dir: Path | str | None = None) -> Self:
        """The plan in `state_dir` (default: $PLAN07_STATE, else
        build/07-task-decomposition-planning/): refused when there is none."""
        d = state.state_dir(state_dir)
        if not state.exists(d):
            state.load(d)  # raises: no plan here, and what to run
        return cls(d)

    @property
    def artifact(self) -> PlanArtifact:
        """The §3.7 artifact as it is on disk now."""
        return state.load(self.state_dir)

    @property
    def events(self) -> list[dict[str, Any]]:
        """One event per state transition (node, event, verdict), from the full audit trail."""
        verdicts = {"passed": "pass", "failed": "fail"}
        return [{"node": r.obligation, "event": r.event, "verdict": verdicts.get(r.event),
                 "time": r.time} for r in self.audit().audit]

    @property
    def usage(self) -> list[Usage]:
        """Token usage, one entry per model call (the A/B harness sums these, §7)."""
        return list(self.artifact.usage)

    @property
    def warnings(self) -> list[str]:
        """What a person should know about the plan's world: checks run with plan07's own
        interpreter when no environment of the repository was found."""
        gate = self.artifact.gate
        if gate is None or gate.python_source != "plan07":
            return []
        from plan07.gate.interpreter import Interpreter

        return [w for w in [Interpreter(gate.python, "plan07").warning()] if w]

    def dag(self) -> PlanDAG:
        return artifact.dag_of(self.artifact)

    def obligations(self) -> list[Obligation]:
        """The plan's obligations (composites' members in their place), as a decomposition
        holds them."""
        return artifact.obligations_of(self.artifact)

    def status(self) -> PlanStatus:
        """The plan table, the acceptance criteria and whether the plan may terminate."""
        from plan07.plan.status import status

        return status(self.artifact)

    def audit(self) -> AuditLog:
        """Every audit row and revision, the spilled ones first."""
        art = self.artifact
        return AuditLog(plan_id=art.plan_id, audit=state.full_audit(self.state_dir, art),
                        revision_history=state.full_revisions(self.state_dir, art))

    def termination_blockers(self) -> list[str]:
        """Why the plan may not terminate yet (empty: it may). When `next()` returns None, a
        harness must check this: a plan ends only at checkable or confirmed predicates (§3.1)."""
        from plan07.plan.criteria import termination_blockers

        return termination_blockers(self.artifact)

    def explain(self, src: str, dst: str | None = None, *, violation: str | None = None,
                depth: int | None = None, evidence: Evidence | None = None,
                engine: str | None = None, rules: Path | None = None) -> Proof:
        """Why the plan orders `src` before `dst` (a proof tree from the rules), or why it does
        not (`why_not`); with `violation` KIND, why that violation over `src` [`dst`] holds.
        `evidence`, `engine`, `rules`: instead of the plan's own."""
        from plan07.order.derive import explain, explain_violation

        art = self.artifact
        ev = evidence if evidence is not None else self._evidence(art)
        eng = engine or art.engine
        if violation is not None:
            return explain_violation(artifact.obligations_of(art), ev, violation,
                                     [src] + ([dst] if dst else []), engine=eng, depth=depth,
                                     rules_path=rules, role_facts=art.roles,
                                     observed=art.observed)
        if dst is None:
            raise InputError("explain an edge needs SRC and DST (or a violation kind)",
                             field="DST")
        return explain(artifact.obligations_of(art), ev, src, dst, engine=eng, depth=depth,
                       rules_path=rules, role_facts=art.roles, observed=art.observed)

    def _evidence(self, art: PlanArtifact) -> Evidence:
        """The plan's evidence, parsed once per Planner: inline evidence is the artifact's own; a
        sidecar is content-addressed, so the same name is the same content."""
        if art.evidence is not None:
            return art.evidence
        key = art.evidence_file
        if self._evidence_cache is None or self._evidence_cache[0] != key:
            self._evidence_cache = (key, state.evidence_of(self.state_dir, art))
        return self._evidence_cache[1]
