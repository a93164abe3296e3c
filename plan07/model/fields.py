"""The strict base model and the constrained field types every artifact model shares (spec 07's
caps, named in plan07.caps). Pure."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from plan07 import caps


class Strict(BaseModel):
    """Unknown keys are an error, not ignored (design.md: evidence bundle, all artifacts)."""

    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True, defer_build=True)


# A non-blank string: at least one non-space character.
NonBlank = r"\S"

Predicate = Annotated[
    str, StringConstraints(min_length=1, max_length=caps.PREDICATE_MAX_CHARS, pattern=NonBlank)
]
ObligationId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=caps.ID_MAX_CHARS, pattern=r"^[A-Za-z0-9_.:-]+$"),
]
Entity = Annotated[str, StringConstraints(min_length=1, max_length=caps.ENTITY_MAX_CHARS)]
Field500 = Annotated[str, StringConstraints(max_length=caps.FIELD_MAX_CHARS)]
Unit = Annotated[float, Field(ge=0.0, le=1.0)]

Verb = Literal["modify", "preserve", "validate"]
Status = Literal["ready", "blocked", "alternative"]
NodeState = Literal["pending", "complete", "failed"]
