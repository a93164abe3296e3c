"""The §3.6 impact feedback the plan07 strategy's harness gives (plan07.ab.planned) after a node
passes its gate: the entities the node changes, each edited file's text before and after its
edits (what plan07.ab.observed reads), and the impact edges fed for tests that passed before and
now fail. Pure but for reading the edited files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plan07.ab.edits import Applied
from plan07.ab.observed import Change
from plan07.model import ImpactEdge, Obligation
from plan07.vocab import dotted_test


def observed_changes(repo: Path, applied: Sequence[Applied]) -> list[Any]:
    """Each edited file's text before and after the edits `applied` (undone newest first)."""
    out = []
    for f in dict.fromkeys(a.file for a in applied):
        path = repo / f
        after = path.read_text("utf-8") if path.is_file() else ""
        before = after
        for a in reversed([a for a in applied if a.file == f]):
            before = "" if a.old is None else a.undo(before)
        out.append(Change(f, before, after))
    return out


def changed_entities(art: Any, obligations: Sequence[Obligation], node_id: str) -> list[str]:
    """The entities node `node_id` changes: its target, or each member's of a merged node (whose
    own `target_entity` joins them with " + ", which names no entity); the node it has since
    joined (impact feedback given after its pass can fold it into a cycle), else none."""
    node = next((n for n in art.nodes if n.id == node_id or node_id in n.members), None)
    if node is None:  # the feedback just given re-planned it away: nothing of it is left
        return []
    if not node.cycle_collapsed:
        return [node.target_entity]
    members = set(node.members)
    return [o.target_entity for o in obligations if o.id in members] or [
        node.target_entity]


def feedback_edges(srcs: Sequence[str], targets: Sequence[str], known: set[str],
                   broken: set[str], edited: Sequence[str] = ()) -> tuple[list[Any], int]:
    """The impact edges (at most 16) for tests that broke after a node that changes `srcs`
    passed, and how many broken tests had no entity to name. `targets`: the plan's obligation
    targets; `known`: its evidence's recon node ids (empty when it has none).

    Not fed: tests in a file the node itself just edited (a test it rewrote failing until the
    code it anchors lands is the plan working, not an unforeseen consumer). A broken test's
    end is its dotted entity, else the nearest enclosing entity the plan knows, no higher than
    its module (a recon node or an obligation's target); a test with none is left out, and
    counted."""
    recon = bool(known)  # without recon nodes the plan checks no edge end (revise)
    known = known | set(targets)
    files = {f.replace("\\", "/").removeprefix("./") for f in edited}
    dsts: list[str] = []
    left = 0
    for t in sorted(broken):
        path = t.split("::", 1)[0]
        if path in files:
            continue
        d = dotted_test(t).replace("::", ".")  # a test method: module.Class.test
        module = path.removesuffix(".py").replace("/", ".")
        while recon and d not in known and d != module and "." in d:
            d = d.rsplit(".", 1)[0]  # its class, then its module: no higher
        if recon and d not in known:
            left += 1
        elif d not in dsts:
            dsts.append(d)
    edges = [ImpactEdge(src=src, dst=d, relation="Breaks", cause="sig_change", confidence=1.0)
             for d in dsts for src in srcs if src != d]
    return edges[:16], left
