"""The fault catalogue and the seeded fault plan shared by all strategies. Pure.

A fault is a realistic wrong first attempt by the executor. Which obligation is hit, by which
fault, and on how many consecutive attempts is a function of (seed, task id, obligation id)
only, so the same faults from the same seed hit all three strategies at the same obligations
(§7: same tasks, same executor, same seed).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# kind -> what the executor got wrong (each is caught by the obligation's own validation).
CATALOGUE: dict[str, str] = {
    "wrong_arg_name": "a keyword, attribute or key is misspelt (TypeError/NameError/KeyError)",
    "missing_import": "the edit uses a name whose import it forgot (NameError at call time)",
    "partial_edit": "the write was cut off part-way (the file no longer compiles)",
    "wrong_consumer": "the right change, applied to a sibling consumer instead of the target",
}


@dataclass(frozen=True)
class FaultConfig:
    """p_first: chance an obligation's first attempt is faulty; p_again: chance each further
    attempt is faulty again (so a fault can outlast the retry bound and leave a task
    unresolved). `force` pins faults: obligation id -> (kind, faulty attempts)."""

    p_first: float = 0.15
    p_again: float = 0.2
    enabled: bool = True
    force: tuple[tuple[str, str, int], ...] = ()


@dataclass(frozen=True)
class Fault:
    kind: str
    attempts: int  # attempts 0..attempts-1 are faulty


def plan_faults(seed: int, task_id: str, steps: list[tuple[str, list[str]]],
                config: FaultConfig) -> dict[str, Fault]:
    """Obligation id -> Fault, for the obligations hit. `steps` = (id, applicable kinds)."""
    out: dict[str, Fault] = {}
    if not config.enabled:
        return out
    forced = {oid: Fault(kind, n) for oid, kind, n in config.force}
    for oid, kinds in steps:
        if oid in forced:
            out[oid] = forced[oid]
            continue
        if config.force or not kinds:
            continue  # forcing pins the plan exactly: nothing random beside it
        rng = random.Random(f"fault:{seed}:{task_id}:{oid}")
        if rng.random() >= config.p_first:
            continue
        n = 1
        while rng.random() < config.p_again and n < 8:
            n += 1
        out[oid] = Fault(rng.choice(sorted(kinds)), n)
    return out
