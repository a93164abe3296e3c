"""Seeded generator of A/B tasks: small real Python packages with tests and a multi-step change
of each §3.2 ladder shape. Pure (returns values; `tasks.write_repo` writes them).

Shapes (each a "component", built by plan07.ab.ladder_shapes and plan07.ab.anchor_shapes; a
task combines components to reach 3..30 obligations):
  widen    a signature widened, m consumers rebound, then narrowed      (2m+3 obligations)
  migrate  a migration read by m views: expand, rebind views, contract  (2m+4)
  default  a configurable default that must be preserved, k clients     (2k+4)
  testfirst  k features, each test defined before it is validated       (3k)
The decomposition is listed the way a model typically emits it: grouped by file (path order),
the gold order within a file. That listing is what a static chain runs; it is not always a
valid order (a narrowing lands before the consumers in the same listing), which is exactly what
dependency ordering exists to fix (§3.2).
"""

from __future__ import annotations

import random

from plan07.ab.anchor_shapes import default_component, testfirst_component
from plan07.ab.compose import Component, compose
from plan07.ab.ladder_shapes import migrate_component, widen_component
from plan07.ab.tasks import Task

MIN_OBLIGATIONS, MAX_OBLIGATIONS = 3, 30
PACKAGES = ("shop", "ledger", "notes", "metrics", "depot", "billing", "atlas", "relay")


# shape -> (its builder, obligations per unit of fan-out, fixed obligations, most fan-out)
SHAPES = {"widen": (widen_component, 2, 3, 8), "migrate": (migrate_component, 2, 4, 6),
          "default": (default_component, 2, 4, 6), "testfirst": (testfirst_component, 3, 0, 4)}
PYPROJECT = "[tool.pytest.ini_options]\naddopts = \"-p no:cacheprovider\"\n"


def _plan_components(rng: random.Random, n: int) -> list[tuple[str, int]]:
    """Shapes and fan-outs whose obligation counts sum to at most n (and at least 3)."""
    out: list[tuple[str, int]] = []
    left = n
    while True:
        fits = [(s, per, base, hi) for s, (_, per, base, hi) in SHAPES.items()
                if per + base <= left]
        if not fits:
            return out
        s, per, base, hi = fits[rng.randrange(len(fits))]
        k = rng.randint(1, min(hi, (left - base) // per))
        out.append((s, k))
        left -= per * k + base
        if left < 3 or (out and rng.random() < 0.3):
            return out


def _hide(seed: int, index: int, comps: list[Component], rate: float) -> list[tuple[int, str]]:
    """Hidden consumers (§7.5 revision trigger): for each widening with >= 2 consumers, with
    probability `rate`, one consumer-rebind obligation (component index, proto key) that the
    decomposition leaves out. Its own rng: the task itself is the same at any rate."""
    if rate <= 0:
        return []
    rng = random.Random(f"ab-hidden:{seed}:{index}")
    out = []
    for ci, c in enumerate(comps):
        keys = [p.key for p in c.protos if p.key.startswith("rebind_") and p.key != "rebind_test"]
        if c.shape == "widen" and len(keys) >= 2 and rng.random() < rate:
            out.append((ci, rng.choice(keys)))
    return out


def generate_task(seed: int, index: int, *, size: int | None = None,
                  max_size: int = MAX_OBLIGATIONS, hidden_consumer_rate: float = 0.0,
                  real_size: bool = True) -> Task:
    """The index-th task of `seed`: deterministic, 3..max_size obligations (or about `size`).
    `hidden_consumer_rate`: see `_hide`; a task with a hidden consumer gets the id suffix `h`."""
    rng = random.Random(f"ab-task:{seed}:{index}")
    n = size if size is not None else rng.randint(MIN_OBLIGATIONS, max_size)
    n = max(MIN_OBLIGATIONS, min(MAX_OBLIGATIONS, n))
    pkg = f"{rng.choice(PACKAGES)}{index}"
    comps = []
    for c, (shape, k) in enumerate(_plan_components(rng, n)):
        comps.append(SHAPES[shape][0](pkg, f"{shape[0]}{c}", k, rng))
    files = {f"{pkg}/__init__.py": "", "tests/__init__.py": "", "pyproject.toml": PYPROJECT}
    hidden = _hide(seed, index, comps, hidden_consumer_rate)
    return compose(f"s{seed}-t{index:04d}" + ("h" if hidden else ""), pkg, files, comps,
                   hidden=hidden, real_size=real_size)


def generate_tasks(seed: int, n: int, *, start: int = 0, size: int | None = None,
                   max_size: int = MAX_OBLIGATIONS,
                   hidden_consumer_rate: float = 0.0, real_size: bool = True) -> list[Task]:
    return [generate_task(seed, i, size=size, max_size=max_size,
                          hidden_consumer_rate=hidden_consumer_rate, real_size=real_size)
            for i in range(start, start + n)]
