"""plan07: the planning stage of a coding agent. The public library API, imported lazily so the
CLI's `plan07 next` starts fast (nothing heavy is loaded until a name is used).

    from plan07 import Planner, route
    if route(task) == "plan07":
        planner = Planner.create(request, repo=Path("."))
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plan07.api import Planner
    from plan07.errors import (
        InputError,
        LLMUnavailable,
        ModelOutputError,
        Plan07Error,
        PlanStateError,
        RuleError,
    )
    from plan07.flag import enabled, route

__all__ = [
    "InputError",
    "LLMUnavailable",
    "ModelOutputError",
    "Plan07Error",
    "PlanStateError",
    "Planner",
    "RuleError",
    "enabled",
    "route",
]

_WHERE = {
    "Planner": "plan07.api",
    "route": "plan07.flag",
    "enabled": "plan07.flag",
    "InputError": "plan07.errors",
    "LLMUnavailable": "plan07.errors",
    "ModelOutputError": "plan07.errors",
    "Plan07Error": "plan07.errors",
    "PlanStateError": "plan07.errors",
    "RuleError": "plan07.errors",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'plan07' has no attribute {name!r}")
