"""§4 semantic decomposition: the ONE model call. Assembles the prompt (requirement, then one-line
evidence summaries, plan07.decompose.prompt), calls the client once at temperature 0, and parses the
completion into obligations, or into the fallback `{"obligations": [], "re_decompose": true}` with
the reason and the raw text. Never a second call. Pure apart from the client it is handed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from plan07 import caps
from plan07.decompose.client import LLMClient
from plan07.decompose.evidence_index import named_seeds
from plan07.decompose.prompt import (
    RESPONSE_FORMAT,
    evidence_lines,
    failure_line,
    render,
    scoped_system,
)
from plan07.errors import InputError
from plan07.model import (
    Decomposition,
    Evidence,
    Impact,
    Localization,
    Obligation,
    Recon,
    Requirement,
    Usage,
)
from plan07.vocab import duplicates

_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(.*)\n```\Z", re.S)


def requirement_record(requirement: Requirement) -> dict[str, Any]:
    rec: dict[str, Any] = requirement.model_dump(exclude={"needs_confirmation"})
    if requirement.needs_confirmation:
        rec["needs_confirmation"] = True
    return rec


def assemble(requirement: Requirement, evidence: Evidence) -> list[dict[str, str]]:
    """The §4 prompt: the requirement artifact, then the evidence summaries (06, 05, 04, 03).
    A bundle without localization gets the recon entities the goal/criteria name in code as
    its 05 seeds (plan07.decompose.evidence_index.named_seeds), so the prompt shows them first."""
    if not evidence.localization:
        text = " ".join([requirement.goal, *requirement.acceptance_criteria])
        seeds = [Localization(entity=e, score=1.0) for e in named_seeds(text, evidence)]
        if seeds:
            evidence = evidence.model_copy(update={"localization": seeds})
    return render(requirement_record(requirement),
                  evidence_lines(evidence, requirement.acceptance_criteria))[0]


def _call(client: LLMClient, messages: list[dict[str, str]],
          scope_ids: tuple[set[str], str] | None = None) -> Decomposition:
    completion = client.complete(  # §4 caps: ONE call, temperature 0, 2048 completion tokens
        messages, temperature=caps.LLM_TEMPERATURE,
        max_completion_tokens=caps.LLM_MAX_COMPLETION_TOKENS, response_format=RESPONSE_FORMAT)
    result = parse(completion.text, scope_ids=scope_ids)
    if completion.roles and result.obligations:  # plan07's own decomposer (llm.builtin) only
        from plan07.order.roles import bind

        result.roles = bind(result.obligations, completion.roles)
    if result.re_decompose and completion.finish_reason == "length":
        result.reason = f"{result.reason} (the completion was cut at max_completion_tokens)"
    result.usage = completion.usage
    result.client = client.name
    return result


def decompose(requirement: Requirement, evidence: Evidence, client: LLMClient) -> Decomposition:
    """The initial obligation set (§4), or the fallback. Exactly one `client.complete` call."""
    messages = assemble(requirement, evidence)
    return _call(client, messages)


def _fallback(reason: str, raw: str, *, rescope: bool = False) -> Decomposition:
    return Decomposition(obligations=[], re_decompose=True, rescope=rescope, reason=reason, raw=raw,
                         usage=Usage())


def _loc(loc: Sequence[int | str]) -> str:
    out = ""
    for p in loc:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def parse(text: str, *, scope_ids: tuple[set[str], str] | None = None) -> Decomposition:
    """A completion -> obligations, or the §4 fallback naming why. Lenient only about a ```json
    fence around the whole text. `scope_ids` = (the subgraph's ids, the fresh-id prefix): every id
    must be one of them or start with the prefix (decompose_scoped)."""
    body = text.strip()
    m = _FENCE.match(body)
    if m:
        body = m.group(1)
    try:
        data = json.loads(body)
    except ValueError as exc:
        return _fallback(f"not JSON: {exc}", text)
    if not isinstance(data, dict) or set(data) != {"obligations"}:
        got = f"keys {sorted(data)}" if isinstance(data, dict) else f"a JSON {type(data).__name__}"
        return _fallback(f'schema: the top level must be {{"obligations": [...]}}, got {got}', text)
    records = data["obligations"]
    if not isinstance(records, list):
        return _fallback("schema: obligations must be an array", text)
    if len(records) > caps.MAX_OBLIGATIONS:  # §4 caps: flagged for re-scoping, not executed
        return _fallback(f"{len(records)} obligations > {caps.MAX_OBLIGATIONS} "
                         "(cap MAX_OBLIGATIONS): flagged for re-scoping", text, rescope=True)
    obligations: list[Obligation] = []
    for i, rec in enumerate(records):
        try:
            obligations.append(Obligation.model_validate(rec, strict=True))
        except ValidationError as exc:
            errs = exc.errors()
            where = _loc(errs[0]["loc"])
            more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
            return _fallback(f"schema: obligations[{i}]{'.' + where if where else ''}: "
                             f"{errs[0]['msg']}{more}", text)
    dup = duplicates(o.id for o in obligations)
    if dup:
        return _fallback(f"schema: duplicate obligation id(s): {', '.join(dup)}", text)
    if scope_ids is not None:
        allowed, fresh = scope_ids
        bad = [o.id for o in obligations if o.id not in allowed and not o.id.startswith(fresh)]
        if bad:
            return _fallback(f"scope: id(s) {', '.join(bad)} are outside the subgraph "
                             f"({', '.join(sorted(allowed))}) and not fresh ({fresh}N)", text)
    return Decomposition(obligations=obligations)


def requirement_fragment(requirement: Requirement,
                         subgraph: Sequence[Obligation]) -> dict[str, Any]:
    """The part of the requirement a subgraph serves (§4 "that subgraph's requirement fragment"):
    the goal, and the criteria and constraints its obligations name: the criterion's text appears
    in a caused_by or validation, a `criterion N` / `constraint N` reference, or the validation's
    test id appears in the criterion. A picked item whose text another picked item contains (a
    bare test id beside the criterion that cites it) is left out: it adds nothing."""
    said = " ".join(f"{o.caused_by} {o.validation}" for o in subgraph).lower()
    tests = {o.validation.lower() for o in subgraph if "::" in o.validation}

    def picked(items: list[str], word: str) -> list[str]:
        out = []
        for n, c in enumerate(items, 1):
            low = c.lower()
            if (low in said or re.search(rf"\b{word} {n}\b", said)
                    or any(t in low for t in tests)):
                out.append(c)
        return [c for c in out if not any(c != d and c.lower() in d.lower() for d in out)]

    return {"goal": requirement.goal,
            "acceptance_criteria": picked(requirement.acceptance_criteria, "criterion"),
            "constraints": picked(requirement.constraints, "constraint")}


def scoped_evidence(evidence: Evidence, targets: set[str]) -> Evidence:
    """The evidence a scoped re-invoke sends (§4 "only that subgraph's ... evidence"): the impact
    and recon edges with an endpoint among the targets, the recon nodes of the targets and of the
    entities their impact edges reach (a consumer's kind and file say whether a change breaks it),
    and the targets' context unless it only repeats their recon signature. Nothing between two
    non-targets, and no localization: the subgraph's targets are already chosen."""
    impact = [i for i in evidence.impact.edges if i.src in targets or i.dst in targets]
    reached = targets | {e for i in impact for e in (i.src, i.dst)}
    nodes = [n for n in evidence.recon.nodes if n.id in reached]
    signature = {n.id: n.signature for n in nodes}
    return Evidence(
        recon=Recon(nodes=nodes, edges=[e for e in evidence.recon.edges
                                        if e.src in targets or e.dst in targets]),
        impact=Impact(edges=impact),
        context=[c for c in evidence.context
                 if c.entity in targets and c.summary != signature.get(c.entity)])


_LADDER_CAUSES = {"sig_change", "schema_change"}
_LADDER_WORDS = re.compile(r"\b(widen|narrow|rebind|signature)", re.I)


def scoped_messages(
    requirement: Requirement,
    evidence: Evidence,
    subgraph: Sequence[Obligation],
    *,
    failure: str | None,
    prefix: str,
) -> list[dict[str, str]]:
    """The scoped prompt (§3.5, §4): the short scoped system message, the requirement fragment
    (its empty lists left out), the evidence touching the targets of the subgraph's modify and
    preserve obligations (caps.SCOPED_MAX_EVIDENCE_LINES) and the `## scope` line (the failure
    as one line of at most caps.PROMPT_FAILURE_MAX_CHARS chars, the fresh-id prefix, the
    upstream ids, the obligations)."""
    ids = {o.id for o in subgraph}
    upstream = sorted({d for o in subgraph for d in o.dependencies} - ids)
    scope: dict[str, Any] = {"failure": failure_line(failure) if failure else None,
                             "fresh_id_prefix": prefix, "upstream_done": upstream,
                             "obligations": [o.model_dump() for o in subgraph]}
    # what the subgraph changes or guards; a validate only names what it checks (often the whole
    # package), so its target counts only when the subgraph has nothing else
    targets = {o.target_entity for o in subgraph if o.obligation != "validate"}
    near = scoped_evidence(evidence, targets or {o.target_entity for o in subgraph})
    ladder = (any(i.cause in _LADDER_CAUSES for i in near.impact.edges)
              or any(_LADDER_WORDS.search(f"{o.caused_by} {o.evidence}") for o in subgraph))
    fragment = {k: v for k, v in requirement_fragment(requirement, subgraph).items() if v}
    return render(fragment, evidence_lines(near), scope=scope, system=scoped_system(ladder=ladder),
                  max_lines=("SCOPED_MAX_EVIDENCE_LINES", caps.SCOPED_MAX_EVIDENCE_LINES))[0]


def decompose_scoped(
    requirement: Requirement,
    evidence: Evidence,
    client: LLMClient,
    *,
    subgraph: Sequence[Obligation],
    failure: str | None = None,
    fresh_prefix: str | None = None,
) -> Decomposition:
    """Re-decompose an affected subgraph only (§3.5 step 3, §4 "Re-invocation on replan"): ONE
    call given only the subgraph's obligations, the requirement fragment they serve and the
    evidence that touches their targets, under a short scoped system message (scoped_messages).
    The result is the revised subgraph: an id it keeps is that obligation revised, an id it drops
    is removed, a new obligation takes a fresh id `<fresh_prefix>N` (default `<first subgraph
    id>.r`, so pass a prefix unique in the plan when the same node is re-planned twice). Any other
    id is the §4 fallback."""
    if not subgraph:
        raise InputError("a scoped re-decomposition needs a non-empty subgraph", field="subgraph")
    prefix = fresh_prefix or f"{subgraph[0].id}.r"
    messages = scoped_messages(requirement, evidence, subgraph, failure=failure, prefix=prefix)
    return _call(client, messages, scope_ids=({o.id for o in subgraph}, prefix))
