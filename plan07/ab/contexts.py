"""The exact text each strategy hands the executor (its tokens are what the scripted executor
counts). Pure apart from reading the current content of the files shown.

monolithic  request + evidence + every file the change touches, all edits at once
static      request + the whole obligation chain (fixed, as listed) + "do step k" + its file
plan07      the §3.4 driver view of the ONE actionable obligation + its file (never the schedule)
"""

from __future__ import annotations

import json
from pathlib import Path

from plan07.ab.tasks import Task
from plan07.model import DriverView, Evidence, Obligation


def files_block(repo: Path, files: list[str]) -> str:
    out = []
    for rel in files:
        p = repo / rel
        if p.is_file():
            out.append(f"--- {rel}\n{p.read_text('utf-8')}")
    return "\n".join(out)


def evidence_summary(ev: Evidence) -> str:
    """One line per impact edge and per recon node signature (never bodies), as in §4."""
    lines = [f"impact {e.src} -> {e.dst} ({e.relation}, {e.cause})" for e in ev.impact.edges]
    lines += [f"recon {n.kind} {n.id}" + (f": {n.signature}" if n.signature else "")
              for n in ev.recon.nodes]
    return "\n".join(lines)


def files_of(task: Task, oids: list[str]) -> list[str]:
    out: list[str] = []
    for oid in oids:
        e = task.step(oid).edit
        if e is not None and e.file not in out:
            out.append(e.file)
    return out


def obligation_line(o: Obligation) -> str:
    deps = f" after {', '.join(o.dependencies)}" if o.dependencies else ""
    return f"{o.id}: {o.obligation} {o.target_entity}{deps}; check {o.validation}"


def _failure(failure: str | None) -> str:
    return f"\n## previous attempt failed\n{failure}\n" if failure else ""


def monolithic(task: Task, repo: Path, failure: str | None = None,
               extra: list[str] | None = None) -> str:
    """`extra`: obligation ids outside the decomposition the retry also shows the files of (a
    hidden consumer the request and evidence name, once a failure points at it)."""
    files = files_of(task, [s.id for s in task.visible] + (extra or []))
    return (f"## request\n{task.request}\n## evidence\n{evidence_summary(task.evidence)}\n"
            f"## files\n{files_block(repo, files)}\n{_failure(failure)}"
            "## do\nMake every edit the request needs, all at once.\n")


def chain(task: Task) -> str:
    return "\n".join(f"{k + 1}. {obligation_line(s.obligation)}"
                     for k, s in enumerate(task.visible))


def static(task: Task, k: int, repo: Path, failure: str | None = None,
           extra: list[str] | None = None) -> str:
    s = task.visible[k]
    return (f"## request\n{task.request}\n## plan (fixed chain)\n{chain(task)}\n"
            f"## files\n{files_block(repo, files_of(task, [s.id] + (extra or [])))}\n"
            f"{_failure(failure)}"
            f"## do\nStep {k + 1} only: {obligation_line(s.obligation)}\n")


# the view's fields in the order an executor reads them; any field not named here is rendered
# after them as `name: value`, so a field the view gains is never dropped from the prompt
_VIEW_ORDER = ("goal", "caused_by", "evidence", "criteria", "required_validation", "check",
               "failure_digest")


def _value(v: object) -> str:
    if isinstance(v, list):
        return "; ".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def view_text(view: DriverView) -> str:
    """The typed driver view as one `field: value` line per field (what `plan07 next` prints),
    not indented JSON: every field and value of the view, empty ones left out. The head line
    is the §3.4 triple; preconditions and permitted actions are one line each."""
    d = view.model_dump(mode="json", exclude_none=True)
    lines = [f"{d.pop('node_id')}: {d.pop('obligation')} {d.pop('target_entity')}"]
    pre = d.pop("preconditions")
    if pre:
        lines.append("preconditions: " + ", ".join(f"{k} {v}" for k, v in pre.items()))
    pa = d.pop("permitted_actions")
    bounds = pa.pop("bounds", {})
    may = [k for k, v in pa.items() if v is True]
    lines.append("permitted: " + ", ".join(may) + "".join(f"; {k} {v}" for k, v in
                                                           bounds.items()))
    for k in (*_VIEW_ORDER, *sorted(set(d) - set(_VIEW_ORDER))):
        if d.get(k) not in (None, "", [], {}):
            lines.append(f"{k}: {_value(d[k])}")
    return "\n".join(lines)


def plan07(view: DriverView, files: list[str], repo: Path, failure: str | None = None, *,
           typed: bool = True, request: str = "", schedule: str = "") -> str:
    """The driver view (typed) or, with typed artifacts ablated, the raw request and the
    obligation as prose; with the externalized plan ablated, the schedule rides in the prompt.
    A retry's failure line: the view's own digest when the planner gave one, else `failure`."""
    if typed:
        head = f"## obligation\n{view_text(view)}\n"
        if view.failure_digest:
            failure = None  # the typed view carries it (plan07.plan.retry's digest)
    else:
        head = (f"## request\n{request}\n## step\n{view.obligation} {view.target_entity}, "
                f"then check {view.required_validation}\n")
        failure = view.failure_digest or failure
    plan = f"## plan (you keep it)\n{schedule}\n" if schedule else ""
    return (f"{head}{plan}## files\n{files_block(repo, files)}\n{_failure(failure)}"
            "## do\nDischarge this obligation only.\n")
