"""What plan.json's schema cannot say (docs/safety.md "Hostile input"). Pure.

A plan.json may be valid field by field and still out of shape: an id that must name one of its
nodes and names none (the handed-out node, a derived edge's end, a scheduled step, what a
checkpoint follows), a sidecar name plan07 never writes (`../x`), a repo path that is not
absolute. `check_plan` refuses it with one InputError naming the JSON path, whatever the stamp
says (plan07.store.state.load runs it on every load), so no verb works on such a plan.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NoReturn

from plan07.errors import InputError
from plan07.model import PlanArtifact


def check_plan(art: PlanArtifact, *, source: str) -> None:
    """InputError (the JSON path named) when `art` is out of shape; see the module doc."""
    if art.repo is not None and not Path(art.repo).is_absolute():
        _refuse(source, "repo", f"{art.repo!r} is not an absolute path; plan07 records the "
                "repository it planned by its absolute path")
    if art.evidence_file is not None and not _EVIDENCE.fullmatch(art.evidence_file):
        _refuse(source, "evidence_file", f"{art.evidence_file!r} is no sidecar plan07 writes "
                "(evidence.<sha256 prefix>.json)")
    baseline = art.gate.baseline_file if art.gate is not None else None
    if baseline is not None and not _BASELINE.fullmatch(baseline):
        _refuse(source, "gate.baseline_file", f"{baseline!r} is no sidecar plan07 writes "
                "(baseline.<sha256 prefix>.json)")
    for name, overflow in (("audit_overflow", art.audit_overflow),
                           ("revisions_overflow", art.revisions_overflow)):
        if overflow is not None and overflow.file not in _OVERFLOW_FILES:
            _refuse(source, f"{name}.file", f"{overflow.file!r} is no log plan07 writes")
        if overflow is not None and overflow.rows < 0:
            _refuse(source, f"{name}.rows", "a negative row count")
    ids: set[str] = set()
    for i, node in enumerate(art.nodes):
        if node.id in ids:
            _refuse(source, f"nodes[{i}].id", f"duplicate obligation id {node.id!r}")
        ids.add(node.id)
    if art.active is not None and art.active not in ids:
        _refuse(source, "active", f"{art.active!r} names no node of the plan")
    # ids the plan's derived parts name: a node, or a member of a collapsed cycle
    known = ids | {m for n in art.nodes for m in n.members} | {
        o.id for group in art.collapsed.values() for o in group}
    named = [(f"edges[{i}].{end}", getattr(e, attr)) for i, e in enumerate(art.edges)
             for end, attr in (("from", "from_"), ("to", "to"))]
    named += [(f"schedule.{part}[{i}]", x) for part in ("order", "ready", "blocked",
                                                         "alternative")
              for i, x in enumerate(getattr(art.schedule, part))]
    named += [(f"checkpoints[{i}].after[{j}]", x) for i, cp in enumerate(art.checkpoints)
              for j, x in enumerate(cp.after)]
    named += [(f"set_aside.{x}", x) for x in art.set_aside or {}]
    for where, x in named:
        if x not in known:
            _refuse(source, where, f"{x!r} names no node of the plan")
    for x, ref in (art.set_aside or {}).items():  # a view prints it as a command to run
        if not _SAVED_REF.fullmatch(ref):
            _refuse(source, f"set_aside.{x}", f"{ref!r} is no ref plan07 saves an edit in "
                    "(refs/plan07-saved/<plan id>/<n>)")


_EVIDENCE = re.compile(r"evidence(\.[0-9a-f]{16})?\.json")
_BASELINE = re.compile(r"baseline(\.[0-9a-f]{16})?\.json")
_OVERFLOW_FILES = ("audit.overflow.jsonl", "revisions.overflow.jsonl")
_SAVED_REF = re.compile(r"refs/plan07-saved/[A-Za-z0-9._-]+/[0-9]+")


def _refuse(source: str, field: str, problem: str) -> NoReturn:
    raise InputError(f"{problem}; restore it or re-run `plan07 plan`", field=field,
                     source=source)
