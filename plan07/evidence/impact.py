"""Impact (the 06 default): may-impact edges from seed entities to what a change to them can break,
each labelled with a cause and a confidence that decays with depth. Pure (recon graph in).

Relations, read backwards along recon edges (X -> S in recon gives S -> X here):
  CalledBy     X calls S                 SubclassedBy  class X inherits S
  CalledByName X may call S (by name)    ReferencedBy  X passes S as a value (a callback)
  OverriddenBy X is S's method redefined in a subclass
  UsedBy       X annotates with S        ImportedBy    module X imports S
  TestedBy     test X exercises S        MigratedBy    migration X writes model S
The cause is chosen by the table in `cause()` (documented in docs/evidence.md "Impact").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from plan07.errors import InputError
from plan07.model import ImpactEdge, Recon

# (recon edge kind, relation it reads as backwards, confidence of one step)
RELATIONS = {
    "calls": ("CalledBy", 0.9),
    "by_name": ("CalledByName", 0.5),  # a may-call guessed by the method name: lower confidence
    "references": ("ReferencedBy", 0.8),
    "inherits": ("SubclassedBy", 0.8),
    "uses_type": ("UsedBy", 0.7),
    "imports": ("ImportedBy", 0.6),
    "tests": ("TestedBy", 0.9),
    "writes": ("MigratedBy", 0.95),
}
OVERRIDE_CONFIDENCE = 0.85
MIN_CONFIDENCE = 0.05  # below this a path says nothing; stop walking it
LEAF_KINDS = {"module", "test", "migration"}  # impacted, but a change does not flow through them


def cause(relation: str, src_kind: str, dst_kind: str, *, relies_on_default: bool) -> str:
    """Why `dst` may break when `src` changes (design.md's known causes)."""
    if relation == "TestedBy" or dst_kind == "test":
        return "test_anchor"
    if relation == "MigratedBy" or dst_kind == "migration" or src_kind == "migration":
        return "migration"
    if src_kind == "config":
        return "default_change"  # a config type's consumers see its defaults
    if src_kind == "schema":
        return "schema_change"
    if relation in ("CalledBy", "CalledByName"):
        return "default_change" if relies_on_default else "sig_change"
    if relation == "ReferencedBy":
        return "sig_change"  # a callback keeps the signature its eventual caller passes
    if relation == "OverriddenBy":
        return "sig_change"  # an override must keep the signature it overrides
    return "consumer_rebind"  # subclasses, annotations, importers rebind to the new shape


def impact(
    recon: Recon,
    seeds: Sequence[str],
    depth: int = 2,
    *,
    arity: Mapping[str, tuple[int, int]] | None = None,
    passed: Mapping[tuple[str, str], int] | None = None,
) -> list[ImpactEdge]:
    """May-impact edges within `depth` steps of `seeds`, strongest confidence per edge, sorted.

    `arity` (entity -> params, defaults) and `passed` ((caller, callee) -> fewest arguments at a
    call site) come from built-in recon; with them a caller that leaves a defaulted parameter out
    is a `default_change` rather than a `sig_change`. Without them every call is a sig_change.
    """
    if depth < 0:
        raise InputError(f"depth must be >= 0, got {depth}", field="depth")
    kinds = {n.id: n.kind for n in recon.nodes}
    back: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
    subclasses: dict[str, list[str]] = defaultdict(list)
    members: dict[str, list[str]] = defaultdict(list)
    for e in recon.edges:
        if e.kind == "defines":
            members[e.src].append(e.dst)
        if e.kind in RELATIONS and not (e.kind in ("calls", "by_name")
                                        and kinds.get(e.src) == "test"):
            rel, conf = RELATIONS[e.kind]
            back[e.dst].append((e.src, rel, conf))
        if e.kind == "inherits":
            subclasses[e.dst].append(e.src)
    for cls, subs in subclasses.items():  # C.m is overridden by D.m for every subclass D of C
        for m in members.get(cls, []):
            name = m[len(cls) + 1:]
            for d in subs:
                if f"{d}.{name}" in kinds:
                    back[m].append((f"{d}.{name}", "OverriddenBy", OVERRIDE_CONFIDENCE))
    best: dict[tuple[str, str, str], tuple[float, str]] = {}
    reached = {s: 1.0 for s in seeds}
    seed_set = set(seeds)
    frontier = sorted(reached)
    for _ in range(depth):
        nxt: dict[str, float] = {}
        for src in frontier:
            for dst, rel, step in sorted(back.get(src, [])):
                if dst in seed_set:
                    continue
                conf = round(reached[src] * step, 4)
                if conf < MIN_CONFIDENCE:
                    continue
                relies = _relies_on_default(src, dst, arity, passed)
                why = cause(rel, kinds.get(src, ""), kinds.get(dst, ""), relies_on_default=relies)
                key = (src, dst, rel)
                if conf > best.get(key, (-1.0, ""))[0]:
                    best[key] = (conf, why)
                if conf > reached.get(dst, 0.0) and kinds.get(dst) not in LEAF_KINDS:
                    nxt[dst] = max(conf, nxt.get(dst, 0.0))
        reached.update(nxt)
        frontier = sorted(nxt)
        if not frontier:
            break
    return [
        ImpactEdge(src=s, dst=d, relation=r, cause=why, confidence=conf)
        for (s, d, r), (conf, why) in sorted(best.items())
    ]


def _relies_on_default(
    callee: str, caller: str, arity: Mapping[str, tuple[int, int]] | None,
    passed: Mapping[tuple[str, str], int] | None,
) -> bool:
    if not arity or not passed or callee not in arity or (caller, callee) not in passed:
        return False
    params, defaults = arity[callee]
    return defaults > 0 and passed[(caller, callee)] < params
