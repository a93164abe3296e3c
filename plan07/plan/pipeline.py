"""The planning pipeline in memory (§3.1-§3.3): canonicalize -> decompose (the ONE model call)
-> order (rules) -> schedule. Nothing is written: `Planner.create` persists what `build` returns
(the gate's baseline, the CP0 snapshot and record, plan.json).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plan07 import caps, collector, progress
from plan07.errors import InputError, ModelOutputError
from plan07.model import Evidence, OrderResult, PlanArtifact
from plan07.plan import artifact

if TYPE_CHECKING:
    from plan07.decompose import LLMClient


class Draft(NamedTuple):
    artifact: PlanArtifact  # scheduled, audited as built; CP0 not yet recorded
    evidence: Evidence  # all of it (the artifact keeps the obligations' 2-hop neighbourhood)
    client: LLMClient


def draft_plan(request: str, *, repo: Path, evidence: Evidence | None, llm: str | LLMClient,
          engine: str, task_text: str | None, plan_id: str | None, now: str | None,
          max_retries: int, ordering: bool) -> Draft:
    """The plan of `request` over `repo` (see `Planner.create` for the arguments). Raises when a
    stage refuses: a missing repo, a bad `max_retries`, a decomposition with no obligations."""
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
                      ordering=ordering)


def _draft_plan(request: str, *, repo: Path, evidence: Evidence | None, llm: str | LLMClient,
           engine: str, task_text: str | None, plan_id: str | None, now: str | None,
           max_retries: int, ordering: bool) -> Draft:
    from plan07.decompose import make_client
    from plan07.decompose.call import decompose
    from plan07.evidence import build_evidence, neighbourhood
    from plan07.order.derive import derive_order
    from plan07.request.canonicalize import canonicalize

    requirement = canonicalize(request, task_text)
    client = make_client(llm) if isinstance(llm, str) else llm  # refused before recon runs
    if evidence is None:
        with progress.step(f"recon of {repo.resolve().name or repo}"):
            evidence = build_evidence(repo, request=request)
    with progress.step(f"decomposition ({getattr(client, 'name', 'client')})"):
        dec = decompose(requirement, evidence, client)
    if not dec.obligations:
        why = "re-scope it into smaller requests" if dec.rescope else "re-canonicalize it"
        raise ModelOutputError(
            f"the decomposition gave no obligations ({dec.reason or 're_decompose'}); "
            f"nothing was planned: {why} (§4 fallback)",
            raw=dec.raw or "",
        )
    with progress.step(f"ordering ({engine})"):
        order = derive_order(dec.obligations, evidence, engine=engine, role_facts=dec.roles) \
            if ordering else OrderResult()
    kept = neighbourhood(evidence, [o.target_entity for o in dec.obligations], hops=2)
    draft = artifact.new_artifact(
        requirement, dec.obligations, order, kept, repo=repo.resolve(), engine=engine,
        llm=llm if isinstance(llm, str) else getattr(client, "name", "client"),
        usage=[dec.usage] if dec.usage else [], now=now or artifact.now(), plan_id=plan_id,
    )
    draft.max_retries = max_retries
    draft.ordering = None if ordering else False
    draft.roles = dec.roles  # plan07's own decomposer's role facts (docs/rules.md)
    return Draft(draft, evidence, client)
