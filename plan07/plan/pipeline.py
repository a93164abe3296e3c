"""The planning pipeline in memory (§3.1-§3.3): canonicalize -> decompose (the ONE model call)
-> plan lint (its deterministic repairs, docs/rules.md "Plan lint") -> order (rules) ->
schedule. Nothing is written: `Planner.create` persists what `build` returns (the gate's
baseline, the CP0 snapshot and record, plan.json).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plan07 import caps, collector, progress
from plan07.errors import InputError, ModelOutputError
from plan07.model import (
    Evidence,
    LintContext,
    Obligation,
    OrderResult,
    PlanArtifact,
    Requirement,
    RoleFacts,
    Violation,
)
from plan07.plan import artifact

if TYPE_CHECKING:
    from plan07.decompose import LLMClient
    from plan07.evidence.repro import Reproduction


class Draft(NamedTuple):
    artifact: PlanArtifact  # scheduled, audited as built; CP0 not yet recorded
    evidence: Evidence  # all of it (the artifact keeps the obligations' 2-hop neighbourhood)
    client: LLMClient


def draft_plan(request: str, *, repo: Path, evidence: Evidence | None, llm: str | LLMClient,
          engine: str, task_text: str | None, plan_id: str | None, now: str | None,
          max_retries: int, ordering: bool, lint: bool = True,
          reproduction: Reproduction | None = None) -> Draft:
    """The plan of `request` over `repo` (see `Planner.create` for the arguments). Raises when a
    stage refuses: a missing repo, a bad `max_retries`, a decomposition with no obligations.
    `reproduction`: what running the issue's snippets recorded, read by the built-in
    localization (unused when `evidence` is given)."""
    if not repo.is_dir():
        raise InputError("repository directory not found", field="--repo", source=str(repo))
    for what, text in (("request", request), ("task", task_text or "")):
        if len(text) > caps.REQUEST_MAX_BYTES:  # refused before any stage reads it (chars)
            raise InputError(f"the {what} is {len(text)} characters long", field=what,
                             cap=f"REQUEST_MAX_BYTES {caps.REQUEST_MAX_BYTES}")
    if not (isinstance(max_retries, int) and 0 <= max_retries <= caps.MAX_RETRIES_CAP):
        raise InputError(f"max_retries {max_retries!r} must be an int in "
                         f"0..{caps.MAX_RETRIES_CAP}", field="max_retries")
    # planning builds few reference cycles (the recon graph and the models hold none; pyDatalog
    # collects its own): the collector would only rescan the evidence as the stages allocate
    with collector.paused():
        return _draft_plan(request, repo=repo, evidence=evidence, llm=llm, engine=engine,
                      task_text=task_text, plan_id=plan_id, now=now, max_retries=max_retries,
                      ordering=ordering, lint=lint, reproduction=reproduction)


def _draft_plan(request: str, *, repo: Path, evidence: Evidence | None, llm: str | LLMClient,
           engine: str, task_text: str | None, plan_id: str | None, now: str | None,
           max_retries: int, ordering: bool, lint: bool = True,
           reproduction: Reproduction | None = None) -> Draft:
    from plan07.decompose import make_client
    from plan07.decompose.call import decompose
    from plan07.evidence import build_evidence, reach, restrict
    from plan07.evidence.testmap import TestMap
    from plan07.order.derive import derive_order
    from plan07.request.canonicalize import canonicalize

    requirement = canonicalize(request, task_text)
    client = make_client(llm) if isinstance(llm, str) else llm  # refused before recon runs
    if evidence is None:
        with progress.step(f"recon of {repo.resolve().name or repo}"):
            evidence = build_evidence(repo, request=request, reproduction=reproduction)
    with progress.step(f"decomposition ({getattr(client, 'name', 'client')})"):
        dec = decompose(requirement, evidence, client)
    if not dec.obligations:
        why = "re-scope it into smaller requests" if dec.rescope else "re-canonicalize it"
        raise ModelOutputError(
            f"the decomposition gave no obligations ({dec.reason or 're_decompose'}); "
            f"nothing was planned: {why} (§4 fallback)",
            raw=dec.raw or "",
        )
    linted = Linted(list(dec.obligations), [], [], None, dec.roles)
    if ordering:  # the plan lint (docs/rules.md "Plan lint"): repaired, then found again
        with progress.step("plan lint"):
            linted = run_lint(requirement, linted.obligations, evidence, request,
                              engine=engine, roles=dec.roles, repairs=lint)
    obligations = linted.obligations
    roles = kept_roles(linted.roles, obligations)
    with progress.step(f"ordering ({engine})"):
        order = derive_order(obligations, evidence, engine=engine, role_facts=roles) \
            if ordering else OrderResult()
    targets = [o.target_entity for o in obligations]
    kept = restrict(evidence, reach(evidence, targets, 2) | TestMap(evidence).keep(targets))
    stamp = now or artifact.now()
    draft = artifact.new_artifact(
        requirement, obligations, order, kept, repo=repo.resolve(), engine=engine,
        llm=llm if isinstance(llm, str) else getattr(client, "name", "client"),
        usage=[dec.usage] if dec.usage else [], now=stamp, plan_id=plan_id,
    )
    draft.max_retries = max_retries
    draft.ordering = None if ordering else False
    draft.roles = roles  # plan07's own decomposer's role facts (docs/rules.md)
    for line in linted.repairs:
        artifact.add_revision(draft, line, "plan lint", time=stamp)
    draft.findings, draft.lint_context = linted.findings[: caps.MAX_FINDINGS], linted.context
    return Draft(draft, evidence, client)


class Linted(NamedTuple):
    """The plan lint's result: the obligations as repaired, one line per repair, what it still
    finds, what it read besides the plan, the role facts bound to the repaired text."""

    obligations: list[Obligation]
    repairs: list[str]
    findings: list[Violation]
    context: LintContext | None
    roles: dict[str, RoleFacts] | None


def run_lint(requirement: Requirement, obligations: list[Obligation], evidence: Evidence,
         request: str, *, engine: str, roles: dict[str, RoleFacts] | None,
         passed: Sequence[str] = (), repairs: bool = True) -> Linted:
    """The plan lint over `obligations`: the repairs it makes (plan07.plan.repair), one line
    each, what it still finds after them, and what it read besides the plan."""
    from plan07.decompose.evidence_index import named_seeds
    from plan07.order.planlint import findings, lint_input
    from plan07.plan.repair import REPAIRABLE, repair

    requested = named_seeds(request, evidence)
    li = lint_input(requirement, passed, requested, obligations, evidence)
    found = findings(obligations, evidence, li, engine=engine, role_facts=roles)
    lines: list[str] = []
    if repairs and any(f.kind in REPAIRABLE for f in found):
        before = {o.id: o for o in obligations}
        obligations, lines = repair(obligations, found, evidence, li)
        roles = rebound(roles, before, obligations)
        li = lint_input(requirement, passed, requested, obligations, evidence)
        found = findings(obligations, evidence, li, engine=engine,
                         role_facts=kept_roles(roles, obligations))
    return Linted(obligations, lines, found,
                  LintContext(homes=li.homes, requested=list(li.requested)), roles)


def rebound(roles: dict[str, RoleFacts] | None, before: dict[str, Obligation],
            after: Sequence[Obligation]) -> dict[str, RoleFacts] | None:
    """A repaired obligation is what it was (a check moved, a test moved): its role facts are
    bound to its new text (docs/rules.md "Role facts")."""
    from plan07.order.roles import bind, words_of

    if not roles:
        return roles
    words = {o.id: w for o in after if o.id in before
             and (w := words_of(before[o.id], roles)) is not None}
    return {**roles, **bind(after, words)}


def kept_roles(roles: dict[str, RoleFacts] | None,
               obligations: Sequence[Obligation]) -> dict[str, RoleFacts] | None:
    from plan07.order.roles import kept

    return kept(roles, obligations)


def lint_after_baseline(draft: PlanArtifact, evidence: Evidence, request: str) -> None:
    """The lint's findings once the CP0 baseline said which checks passed on the untouched tree
    (a criterion only they cover is covered by no check that can fail)."""
    passed = draft.gate.passed_at_cp0 if draft.gate else []
    if not passed:
        return
    obligations = artifact.obligations_of(draft)
    found = run_lint(draft.requirement, obligations, evidence, request, engine=draft.engine,
                     roles=draft.roles, passed=passed, repairs=False).findings
    draft.findings = found[: caps.MAX_FINDINGS]
