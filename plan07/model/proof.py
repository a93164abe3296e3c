"""§3.2 explain: the proof tree of a derived edge or violation (plan07.order.derive.explain,
plan07.engine.provenance), as a model; its JSON Schema is `plan07 schema proof`. Pure.
"""

from __future__ import annotations

from typing import Literal

from plan07.model.fields import Strict

ProofKind = Literal["derived", "fact", "absent", "comparison", "cut"]


class ProofNode(Strict):
    """One step of a proof: a derived atom (its rule id and `file:LINE`), an input fact (its
    sources: obligation field, evidence item), a checked absence (a negated premise that holds),
    a comparison that held, or `cut` where `--depth` stopped the tree."""

    atom: str
    kind: ProofKind
    rule: str | None = None
    location: str | None = None
    sources: list[str] = []
    children: list[ProofNode] = []


class Proof(Strict):
    """Why `goal` holds (a minimal-height proof tree), or why not: the candidate rule that came
    closest and its first missing premise (`missing_premise`), with the chain in `why_not`."""

    goal: str
    holds: bool
    height: int = 0
    tree: ProofNode | None = None
    candidate_rule: str | None = None
    candidate_location: str | None = None
    missing_premise: str | None = None
    why_not: list[str] = []
