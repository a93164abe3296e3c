"""A draft obligation of the builtin decomposer, and the numbering of a plan's drafts into
Obligations O1..On (topological, fan-in chained, with their role words). Pure.

Drafts are keyed by what they are ("modify:<entity>", "define:<test id>", "preserve_default",
...): plan07.decompose.builtin builds them; `deps` name other drafts' keys.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from plan07 import caps
from plan07.decompose.evidence_index import cut
from plan07.model import Obligation, RoleWord
from plan07.order.inputs import KEYWORDS


@dataclass
class Draft:
    """An obligation before ids are given: `deps` are draft keys."""

    verb: str
    target: str
    why: list[str]
    evidence: str
    validation: str
    deps: list[str] = field(default_factory=list)
    alternative: bool = False
    says: set[RoleWord] = field(default_factory=set)  # role words by what the draft is
    cites: list[str] = field(default_factory=list)  # the request's text it cites


def modify_ancestors(mods: dict[str, Draft], target: str) -> set[str]:
    """The entities whose modify must come before `target`'s (transitively), `target` included."""
    seen, stack = {target}, [target]
    while stack:
        for k in mods[stack.pop()].deps:
            e = k.split(":", 1)[1]
            if k.startswith("modify:") and e in mods and e not in seen:
                seen.add(e)
                stack.append(e)
    return seen


def number_drafts(drafts: dict[str, Draft]) -> list[tuple[Obligation, list[RoleWord]]]:
    """Ids O1..On in a topological order of the declared dependencies, ties by insertion order
    (so the ids read as the schedule); dependencies capped at MAX_DEPENDENCIES (the nearest)."""
    keys = list(drafts)
    pos = {k: i for i, k in enumerate(keys)}
    indeg = {k: len([x for x in drafts[k].deps if x in drafts]) for k in keys}
    users: dict[str, list[str]] = defaultdict(list)
    for k in keys:
        for x in drafts[k].deps:
            if x in drafts:
                users[x].append(k)
    done: list[str] = []
    ready = sorted((k for k in keys if indeg[k] == 0), key=pos.__getitem__)
    while len(done) < len(keys):
        if not ready:  # a cycle: break it at the earliest remaining draft (the planner collapses)
            ready = [min((k for k in keys if k not in done), key=pos.__getitem__)]
        k = ready.pop(0)
        if k in done:
            continue
        done.append(k)
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
        ready.sort(key=pos.__getitem__)
    _chain_fan_in(drafts, done)
    ids = {k: f"O{i}" for i, k in enumerate(done, 1)}
    out: list[tuple[Obligation, list[RoleWord]]] = []
    for k in done:
        draft = drafts[k]
        dep_ids = sorted({ids[x] for x in draft.deps if x in ids and x != k},
                         key=lambda s: int(s[1:]))
        why = "; ".join(dict.fromkeys(draft.why))
        if len(dep_ids) > caps.MAX_DEPENDENCIES:
            why += f" (+{len(dep_ids) - caps.MAX_DEPENDENCIES} earlier predecessors via the rules)"
            dep_ids = dep_ids[-caps.MAX_DEPENDENCIES:]
        status = "alternative" if draft.alternative else ("blocked" if dep_ids else "ready")
        check = cut(draft.validation, caps.FIELD_MAX_CHARS)
        out.append((Obligation.model_validate({
            "id": ids[k], "target_entity": draft.target, "obligation": draft.verb,
            "caused_by": cut(why, caps.FIELD_MAX_CHARS), "dependencies": dep_ids,
            "evidence": cut(draft.evidence, caps.EVIDENCE_MAX_CHARS), "status": status,
            "validation": check}), _role_words(draft, check)))
    return out


def _role_words(draft: Draft, check: str) -> list[RoleWord]:
    """What the draft is (`says`), and what the request's text it cites and the test it checks
    say in the rules' keywords (a test of a `custom` value relies on the new default)."""
    read = [*draft.cites, check]
    return sorted(draft.says | {w for w, rx in KEYWORDS.items() if any(map(rx.search, read))})


def _chain_fan_in(drafts: dict[str, Draft], done: list[str]) -> None:
    """A node waiting on more than BUILTIN_MAX_FAN_IN drafts waits on the last of them, chained
    in schedule order (each after the one before), so no node of the plan, the rules' derived
    edges added, has more than MAX_DEPENDENCIES direct predecessors (§3.2 caps): the plan never
    refuses the builtin's own decomposition. Edges only follow `done` (a topological order), so
    chaining adds no cycle."""
    at = {k: i for i, k in enumerate(done)}
    for k in done:
        deps = sorted({x for x in drafts[k].deps if x in drafts and x != k}, key=at.__getitem__)
        if len(deps) <= caps.BUILTIN_MAX_FAN_IN:
            continue
        for a, b in zip(deps, deps[1:], strict=False):
            if a not in drafts[b].deps and not drafts[b].alternative:
                drafts[b].deps.append(a)
                drafts[b].why.append(f"chained after {drafts[a].target} (fan-in cap of "
                                     f"{drafts[k].target})")
        drafts[k].deps = [deps[-1]]
        drafts[k].why.append(f"its {len(deps)} predecessors run as a chain (BUILTIN_MAX_FAN_IN="
                             f"{caps.BUILTIN_MAX_FAN_IN})")
