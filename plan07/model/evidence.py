"""The evidence bundle's models (the 03/04/05/06 stages' output plan07 reads: recon graph, impact
DAG, localization, context, soft ranks). Every key optional, unknown keys an error. Pure.
Re-exported by plan07.model, the home of every artifact's model."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from plan07 import caps
from plan07.model.fields import Entity, Field500, Strict, Unit
from plan07.vocab import pytest_id

NodeKind = Literal[
    "module", "class", "function", "method", "test", "migration", "config", "schema"
]
EdgeKind = Literal[
    "calls", "imports", "inherits", "uses_type", "tests", "reads", "writes", "defines",
    "by_name", "references",
]
# Impact causes are an open set (any string); which ones order the plan is the rule file's to
# say (rules/ordering.dl: breaking_cause, consumer_cause, and the "migration" rules).


class ReconNode(Strict):
    id: Entity
    kind: NodeKind
    file: str | None = None
    line: int | None = None
    signature: Annotated[str, StringConstraints(max_length=caps.FIELD_MAX_CHARS)] | None = None


class ReconEdge(Strict):
    src: Entity
    dst: Entity
    kind: EdgeKind


class Recon(Strict):
    nodes: list[ReconNode] = []
    edges: list[ReconEdge] = []


class ImpactEdge(Strict):
    src: Entity
    dst: Entity
    relation: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    cause: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    confidence: Unit


class Impact(Strict):
    edges: list[ImpactEdge] = []


class Localization(Strict):
    entity: Entity
    score: Unit


class ContextItem(Strict):
    entity: Entity
    summary: Field500


class SoftRank(Strict):
    lex: Unit = 0.0
    cochange: Unit = 0.0


class Evidence(Strict):
    """The 03/04/05/06 evidence bundle: recon graph, impact DAG, localization, context, ranks."""

    recon: Recon = Recon.model_construct()
    impact: Impact = Impact.model_construct()
    localization: list[Localization] = []
    context: list[ContextItem] = []
    soft_rank: dict[str, SoftRank] = {}

    def exercised(self) -> dict[str, list[str]]:
        """Entity -> the pytest ids (sorted) of the tests reaching it through recon `tests` or
        `calls` edges: the gate's one question of the evidence."""
        tests = {n.id: pytest_id(n.id, n.file) for n in self.recon.nodes if n.kind == "test"}
        out: dict[str, set[str]] = {}
        for e in self.recon.edges:
            if e.src in tests and e.kind in ("tests", "calls"):
                out.setdefault(e.dst, set()).add(tests[e.src])
        return {k: sorted(v) for k, v in out.items()}


