"""Caps and shapes of the artifact models, each checked at its boundary."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from plan07 import caps
from plan07.model import Decomposition, Evidence, Obligation, Requirement


def ob(i: str = "O1", **kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": i, "target_entity": "pkg.mod.f", "obligation": "modify", "caused_by": "req",
        "dependencies": [], "evidence": "06", "status": "ready", "validation": "compile",
    }
    base.update(kw)
    return base


@pytest.mark.parametrize(
    ("field", "ok", "bad"),
    [
        ("goal", "g" * caps.GOAL_MAX_CHARS, "g" * (caps.GOAL_MAX_CHARS + 1)),
        ("acceptance_criteria", ["c"] * caps.MAX_ACCEPTANCE_CRITERIA,
         ["c"] * (caps.MAX_ACCEPTANCE_CRITERIA + 1)),
        ("acceptance_criteria", ["p" * caps.PREDICATE_MAX_CHARS],
         ["p" * (caps.PREDICATE_MAX_CHARS + 1)]),
        ("constraints", ["k"] * caps.MAX_CONSTRAINTS, ["k"] * (caps.MAX_CONSTRAINTS + 1)),
    ],
)
def test_requirement_caps_at_boundary(field: str, ok: object, bad: object) -> None:
    base: dict[str, object] = {"goal": "g", "acceptance_criteria": ["c"], "constraints": []}
    Requirement.model_validate({**base, field: ok})
    with pytest.raises(ValidationError):
        Requirement.model_validate({**base, field: bad})


@pytest.mark.parametrize("bad", [{"goal": "  "}, {"acceptance_criteria": []}, {"extra": 1}])
def test_requirement_rejects_empty_and_unknown(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Requirement.model_validate({"goal": "g", "acceptance_criteria": ["c"], **bad})


def test_obligation_has_exactly_the_eight_fields() -> None:
    assert set(Obligation.model_fields) == {
        "id", "target_entity", "obligation", "caused_by", "dependencies", "evidence", "status",
        "validation",
    }
    with pytest.raises(ValidationError):
        Obligation.model_validate(ob(extra="x"))
    with pytest.raises(ValidationError):
        Obligation.model_validate(ob(obligation="delete"))
    with pytest.raises(ValidationError):
        Obligation.model_validate(ob(status="done"))


def test_obligation_caps() -> None:
    Obligation.model_validate(ob(dependencies=[f"O{i}" for i in range(caps.MAX_DEPENDENCIES)]))
    with pytest.raises(ValidationError):
        Obligation.model_validate(
            ob(dependencies=[f"O{i}" for i in range(caps.MAX_DEPENDENCIES + 1)])
        )
    Obligation.model_validate(ob(evidence="e" * caps.EVIDENCE_MAX_CHARS))
    with pytest.raises(ValidationError):
        Obligation.model_validate(ob(evidence="e" * (caps.EVIDENCE_MAX_CHARS + 1)))


def test_decomposition_caps_and_unique_ids() -> None:
    Decomposition.model_validate(
        {"obligations": [ob(f"O{i}") for i in range(caps.MAX_OBLIGATIONS)]}
    )
    with pytest.raises(ValidationError):
        Decomposition.model_validate(
            {"obligations": [ob(f"O{i}") for i in range(caps.MAX_OBLIGATIONS + 1)]}
        )
    with pytest.raises(ValidationError, match="duplicate"):
        Decomposition.model_validate({"obligations": [ob("O1"), ob("O1")]})


def test_evidence_rejects_unknown_keys_and_bad_confidence() -> None:
    Evidence.model_validate({})
    with pytest.raises(ValidationError):
        Evidence.model_validate({"recon": {}, "surprise": 1})
    edge = {"src": "a", "dst": "b", "relation": "CalledBy", "cause": "sig_change"}
    Evidence.model_validate({"impact": {"edges": [{**edge, "confidence": 1.0}]}})
    with pytest.raises(ValidationError):
        Evidence.model_validate({"impact": {"edges": [{**edge, "confidence": 1.01}]}})
