"""`builtin`: the offline, deterministic decomposer behind the same protocol as a model. Pure.

It reads the prompt plan07.decompose.call assembled (plan07.decompose.prompt.read), so it sees
exactly what a model would see, derives obligations by fixed rules (plan07.decompose.builtin; a
scoped replan by `derive_scoped`, here), and answers with the §4 JSON text, which goes through the
same parse as any completion, and the role facts of the obligations it wrote (`Completion.roles`,
docs/rules.md "Role facts"). No tokens are spent.
"""

from __future__ import annotations

import json
from typing import Any

from plan07 import caps
from plan07.decompose.builtin import derive_with_roles
from plan07.decompose.client import Completion
from plan07.decompose.evidence_index import REBIND_CAUSES, EvidenceIndex, cut, edge_line
from plan07.decompose.prompt import read
from plan07.model import Evidence, Obligation, RoleWord, Usage


class BuiltinClient:
    name = "builtin"

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        max_completion_tokens: int,
        response_format: dict[str, Any] | None,
    ) -> Completion:
        payload = read(messages)
        if payload.scope is None:
            obligations, roles = derive_with_roles(payload.requirement, payload.evidence,
                                                   tests=payload.tests, named=payload.named)
        else:
            obligations, roles = derive_scoped(payload.requirement, payload.evidence,
                                               payload.scope)
        text = json.dumps({"obligations": [o.model_dump() for o in obligations]},
                          ensure_ascii=False, indent=1)
        return Completion(text=text, usage=Usage(), finish_reason="stop", roles=roles)


def derive_scoped(requirement: dict[str, Any], evidence: Evidence,
                  scope: dict[str, Any]) -> tuple[list[Obligation], dict[str, list[RoleWord]]]:
    """A scoped re-decomposition (§3.5, §4 "Re-invocation on replan"): the subgraph's obligations
    kept as they are (same ids), plus a rebind modify, under a fresh id, for each consumer the
    evidence neighbourhood says a modified target breaks and no obligation covers. The offline
    builtin cannot rethink a failure; it adds only what the evidence demands. The role words are
    the fresh ones' (none: a rebind's role is the evidence's); a kept obligation keeps those the
    plan holds for it."""
    sub = [Obligation.model_validate(r) for r in scope.get("obligations", [])]
    prefix = str(scope.get("fresh_id_prefix", "R"))
    failure = str(scope.get("failure") or "")
    ix = EvidenceIndex(evidence)
    targeted = {o.target_entity for o in sub}
    out = [o.model_copy(deep=True) for o in sub]
    fresh: list[Obligation] = []
    for o in sub:
        if o.obligation != "modify" or o.status == "alternative":
            continue
        for i in ix.out.get(o.target_entity, []):
            if i.cause not in REBIND_CAUSES or not ix.consumer(i.dst) or i.dst in targeted:
                continue
            targeted.add(i.dst)
            why = (f"scoped replan of {o.id}: 06 {i.cause}: {i.dst} consumes {o.target_entity} "
                   "and no obligation covers it; rebind it after the change")
            if failure:
                why += f" (failure: {cut(failure, 160)})"
            fresh.append(Obligation(
                id=f"{prefix}{len(fresh) + 1}", target_entity=i.dst, obligation="modify",
                caused_by=cut(why, caps.FIELD_MAX_CHARS), dependencies=[o.id],
                evidence=edge_line(i), status="blocked", validation=ix.check([i.dst])))
    for o in out:
        if o.obligation == "validate" and o.validation in ("compile", "regression"):
            room = caps.MAX_DEPENDENCIES - len(o.dependencies)
            o.dependencies += [f.id for f in fresh][: max(room, 0)]
    return out + fresh, {f.id: [] for f in fresh}
