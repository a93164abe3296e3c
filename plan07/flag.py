"""The §8 feature flag router: `PLAN=plan07|current` decides whether a harness plans with plan07.
Pure (reads the environment it is given, else os.environ)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from plan07.errors import InputError

FLAG_ENV = "PLAN"
Route = Literal["plan07", "current"]


def route(task: object | None = None, *, env: Mapping[str, str] | None = None) -> Route:
    """§8 feature flag: `PLAN=plan07|current` (default `current`) decides which path a harness
    takes for `task`; switching back needs no code change. `task` is accepted so the A/B harness
    (§7) can route per task; the flag alone decides."""
    del task
    value = (os.environ if env is None else env).get(FLAG_ENV, "").strip() or "current"
    if value not in ("plan07", "current"):
        raise InputError(f"PLAN={value!r}; use PLAN=plan07 or PLAN=current", field=FLAG_ENV)
    return "plan07" if value == "plan07" else "current"


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """True iff the harness should plan with plan07 (PLAN=plan07)."""
    return route(env=env) == "plan07"

