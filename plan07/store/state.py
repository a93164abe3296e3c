"""§3.7 plan-state persistence: plan.json, its lock, the log sidecars and the evidence sidecar.
I/O (files, fcntl); the artifact itself is built by plan07.plan.artifact.

Writes are atomic (temp file + fsync + rename + fsync of the directory), so a crash never leaves a
torn plan.json. Every read-modify-write runs under an exclusive `fcntl.flock` on `plan.lock`
(`transaction`), so two processes driving one plan cannot lose an update. Caps: the audit keeps
its newest 64 rows and the revision history its newest 32 inline; older ones are appended to
`audit.overflow.jsonl` / `revisions.overflow.jsonl` and the artifact counts them (`*_overflow`).
A sidecar line past that count is the residue of a crashed write and is dropped on the next one.
Evidence: the obligations' neighbourhood is stored inline; when the artifact would exceed 32 KB it
moves to `evidence.json` (noted in `evidence_file`); a plan that still exceeds 32 KB keeps fewer
audit and revision rows inline (16 and 8, then 4 and 2, the rest in the overflow sidecars), and
one that exceeds it even then is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plan07 import caps
from plan07.errors import InputError
from plan07.model import AuditRow, Evidence, LogOverflow, PlanArtifact, Revision
from plan07.store.boundedio import write_atomic

STATE_ENV = "PLAN07_STATE"
DEFAULT_STATE = Path("build") / "07-task-decomposition-planning"
PLAN_FILE = "plan.json"
LOCK_FILE = "plan.lock"
EVIDENCE_FILE = "evidence.json"  # the sidecar's name in older plans (still read)
VIEW_FILE = "next.json"  # the handed-out node's view as printed, keyed by plan.json's digest
STAMP_FILE = "plan.json.sha256"  # digest of the bytes save() last wrote (validated on the way)
AUDIT_OVERFLOW = "audit.overflow.jsonl"
REVISIONS_OVERFLOW = "revisions.overflow.jsonl"


def state_dir(explicit: str | Path | None = None) -> Path:
    """`--state DIR`, else $PLAN07_STATE, else build/07-task-decomposition-planning/ (cwd)."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(STATE_ENV)
    return Path(env) if env else DEFAULT_STATE


def exists(d: Path) -> bool:
    return (d / PLAN_FILE).is_file()


@contextmanager
def lock(d: Path) -> Iterator[None]:
    """An exclusive lock on the plan in `d` (blocks until the other holder is done)."""
    path = d / LOCK_FILE
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise InputError(f"cannot take the plan's lock: {exc.strerror or exc}; it must be a "
                         "regular file plan07 may write (remove it, or pass another --state)",
                         source=str(path)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError("the plan's lock is not a regular file; remove it, or pass "
                             "another --state", source=str(path))
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def load(d: Path) -> PlanArtifact:
    """plan.json, validated with the shipped JSON Schema; a clear one-line error otherwise.

    Bytes that are exactly what `save` last wrote (their digest is in plan.json.sha256) were
    validated by the model on the way out; they skip the JSON Schema pass (and its ~0.1 s import,
    for a fast `plan07 next`) but are still validated by the model in strict mode, as strictly
    as the schema: a stamp that matches a hand-made file proves nothing. Anything else, a hand
    edit included, goes through the shipped schema first. Either way what neither can say
    (plan07.store.plancheck) is checked, and anything out of shape is one InputError naming the
    file and the JSON path."""
    from plan07.store.boundedio import loads, read_bytes, sweep_temps, too_deep

    # what a killed write left: every verb reads the plan first (checkpoint records too)
    sweep_temps(d, *_record_dirs(d))
    path = d / PLAN_FILE
    if not path.exists() and not path.is_symlink():
        raise InputError(
            "no plan here; run `plan07 plan REQUEST --repo DIR` first (or pass --state DIR)",
            source=str(path),
        )
    raw = read_bytes(path, what="plan")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read the plan: {exc}", source=str(path)) from None
    try:
        data = loads(text, source=str(path))
    except InputError as exc:
        if exc.cap:
            raise
        raise InputError(
            f"corrupt plan: {exc.problem}; restore it or re-run `plan07 plan`", source=str(path),
            field=exc.field,
        ) from None
    from plan07.store.schema import parse, parse_model

    try:
        if _stamp_matches(d, raw):  # the model's own checks only (no jsonschema import)
            artifact: PlanArtifact = parse_model("plan", data, source=str(path), text=text)
        else:
            artifact = parse("plan", data, source=str(path))
    except RecursionError:
        raise too_deep(str(path), "plan") from None
    from plan07.store.plancheck import check_plan

    check_plan(artifact, source=str(path))
    return artifact


def _record_dirs(d: Path) -> list[Path]:
    try:
        return [e for e in (d / "checkpoints").iterdir() if e.is_dir()]
    except OSError:
        return []


def _stamp_matches(d: Path, raw: bytes) -> bool:
    """True iff plan.json.sha256 holds the digest of `raw` (any other content, non-ASCII bytes
    included, just means the full schema pass runs)."""
    path = d / STAMP_FILE
    if not path.is_file():  # never open a FIFO
        return False
    try:
        with path.open("rb") as fh:
            stamp = fh.read(128)
    except OSError:
        return False
    return stamp.strip() == hashlib.sha256(raw).hexdigest().encode("ascii")


def dumps(artifact: PlanArtifact) -> str:
    """The on-disk text: one top-level key per line, one list item per line (diffable, compact)."""
    data = artifact.model_dump(mode="json", by_alias=True, exclude_none=True)
    for node in data["nodes"]:  # composite-only fields, absent on a plain §3.7 node
        if not node.get("cycle_collapsed"):
            node.pop("cycle_collapsed", None)
            node.pop("members", None)
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n  ".join(_compact(v) for v in value)
            lines.append(f"{json.dumps(key)}: [\n  {items}\n]")
        else:
            lines.append(f"{json.dumps(key)}: {_compact(value)}")
    from plan07.sandbox import redact

    return redact("{\n" + ",\n".join(lines) + "\n}\n")  # no credential is ever stored


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Prepared:
    """An artifact made ready to write (`fit`): the capped logs split off, the evidence moved
    to its sidecar when needed, the text sized. Writing it (`write`) does no more checking."""

    out: PlanArtifact  # what plan.json will hold
    text: str
    evidence_text: str | None
    spill_audit: list[AuditRow]
    spill_revs: list[Revision]

    @property
    def size(self) -> int:
        return len(self.text.encode())


# How many audit and revision rows plan.json keeps inline: the caps, and when the plan would not
# fit 32 KB even with its evidence in a sidecar, fewer (the older ones spill to the overflow
# sidecars like any row past the cap: history moves out before a plan is refused)
_INLINE_ROWS = ((caps.MAX_AUDIT_ROWS, caps.MAX_REVISIONS), (16, 8), (4, 2))


def fit(artifact: PlanArtifact) -> Prepared:
    """Spill capped logs, fit 32 KB, validate — in memory only; raises InputError (the cap
    named) when the plan cannot fit, before anything is written anywhere. Pure."""
    # the evidence is shared, not copied (nothing here changes it; a deep copy of a large
    # bundle cost more than the rest of the write)
    evidence = artifact.evidence
    base = artifact.model_copy(update={"evidence": None}).model_copy(deep=True)
    # a bundle with more items than 32 KB holds at 16 bytes each cannot be inline: no need to
    # render it there first (the text is the same either way)
    hopeless = evidence is not None and 16 * (
        len(evidence.recon.nodes) + len(evidence.recon.edges) + len(evidence.impact.edges)
    ) > caps.ARTIFACT_MAX_BYTES
    evidence_text = None
    for keep_audit, keep_revs in _INLINE_ROWS:
        spill_audit = artifact.audit[: max(0, len(artifact.audit) - keep_audit)]
        spill_revs = artifact.revision_history[
            : max(0, len(artifact.revision_history) - keep_revs)
        ]
        out = base.model_copy()
        out.evidence = evidence
        out.audit = base.audit[len(spill_audit) :]
        out.revision_history = base.revision_history[len(spill_revs) :]
        out.audit_overflow = _count(base.audit_overflow, AUDIT_OVERFLOW, len(spill_audit))
        out.revisions_overflow = _count(base.revisions_overflow, REVISIONS_OVERFLOW,
                                        len(spill_revs))
        # the evidence goes to its sidecar before any history leaves the file
        text = "" if hopeless or evidence_text is not None else dumps(out)
        if evidence is not None and (evidence_text is not None or hopeless
                                     or len(text.encode()) > caps.ARTIFACT_MAX_BYTES):
            from plan07.sandbox import redact

            if evidence_text is None:
                evidence_text = redact(evidence.model_dump_json(indent=1, exclude_defaults=True))
            out.evidence, out.evidence_file = None, evidence_name(evidence_text)
            text = dumps(out)
        if len(text.encode()) <= caps.ARTIFACT_MAX_BYTES:
            break
    size = len(text.encode())
    if size > caps.ARTIFACT_MAX_BYTES:
        raise InputError(
            f"the plan artifact would be {size} bytes even with its evidence in a sidecar and "
            "its history in the overflow files; re-scope the request into smaller plans",
            field="plan.json", cap=f"ARTIFACT_MAX_BYTES {caps.ARTIFACT_MAX_BYTES}",
        )
    PlanArtifact.model_validate_json(text)  # what is written is a valid artifact
    return Prepared(out, text, evidence_text, list(spill_audit), list(spill_revs))


def write(d: Path, artifact: PlanArtifact, prepared: Prepared) -> int:
    """Write what `fit(artifact)` made ready, atomically; the caller's object then matches
    the disk. Returns the bytes written. Call under `lock(d)`."""
    out, text = prepared.out, prepared.text
    d.mkdir(parents=True, exist_ok=True)
    _append(d / AUDIT_OVERFLOW, artifact.audit_overflow, prepared.spill_audit)
    _append(d / REVISIONS_OVERFLOW, artifact.revisions_overflow, prepared.spill_revs)
    if prepared.evidence_text is not None and prepared.out.evidence_file:
        path = d / prepared.out.evidence_file
        if not path.is_file():  # content-addressed: a file of this name already holds it
            write_atomic(path, prepared.evidence_text)
    write_atomic(d / PLAN_FILE, text)  # the commit point: after it, nothing may fail the call
    with contextlib.suppress(OSError):  # an old stamp matches no new plan: the schema pass runs
        write_atomic(d / STAMP_FILE, hashlib.sha256(text.encode("utf-8")).hexdigest() + "\n")
    for name in ("audit", "revision_history", "audit_overflow", "revisions_overflow",
                 "evidence", "evidence_file"):
        setattr(artifact, name, getattr(out, name))
    return prepared.size


def evidence_name(text: str) -> str:
    """The evidence sidecar's name: content-addressed (`evidence.<sha256 prefix>.json`), so a
    sidecar is never rewritten under a plan.json (or a checkpoint record) that names it; a new
    plan's or a feedback's evidence goes to a new file, and plan.json's rename switches to it."""
    return f"evidence.{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}.json"


def evidence_files(d: Path) -> list[str]:
    return sorted(p.name for p in d.glob("evidence*.json") if p.is_file())


def drop_evidence_except(d: Path, used: set[str | None]) -> None:
    """Delete the evidence sidecars neither plan.json nor a kept checkpoint record names."""
    for name in evidence_files(d):
        if name not in used:
            (d / name).unlink(missing_ok=True)


def save(d: Path, artifact: PlanArtifact) -> int:
    """Spill capped logs, fit 32 KB, write atomically (`fit` then `write`). Returns the bytes
    written. Call under `lock(d)`; nothing is written when the plan is refused."""
    return write(d, artifact, fit(artifact))


def _count(prev: LogOverflow | None, file: str, n: int) -> LogOverflow | None:
    if prev is None and n == 0:
        return None
    return LogOverflow(file=file, rows=(prev.rows if prev else 0) + n)


def _append(path: Path, prev: LogOverflow | None, rows: list[AuditRow] | list[Revision]) -> None:
    """Append rows after the committed `prev.rows` lines (dropping crashed-write residue)."""
    if not rows:
        return
    keep = _read_lines(path, prev.rows if prev else 0)
    from plan07.sandbox import redact

    body = "".join(line + "\n" for line in keep) + "".join(
        redact(r.model_dump_json()) + "\n" for r in rows
    )
    write_atomic(path, body)


def _read_lines(path: Path, n: int) -> list[str]:
    if n == 0 or not path.exists():
        return []
    lines = path.read_text("utf-8").splitlines()[:n]
    if len(lines) < n:
        raise InputError(
            f"overflow log has {len(lines)} rows, the plan counts {n}; it was truncated",
            source=str(path),
        )
    return lines


class Transaction:
    """One read-modify-write of plan.json: `art` is the plan as loaded; change it in place or
    replace it. It is saved when the block ends without an exception and `art` changed."""

    def __init__(self, art: PlanArtifact) -> None:
        self.art = art
        self.view_text: str | None = None  # a hand-out's view as `next --json` prints it


@contextmanager
def transaction(d: Path) -> Iterator[Transaction]:
    """Read-modify-write under the lock (`lock`): load, let the caller change `tx.art`, save on
    success when something changed. The only read-modify-write of a plan."""
    from plan07.store.records import recover

    with lock(d):
        tx = Transaction(load(d))
        recover(d, tx.art)  # what a killed plan07 left: half-done steps, temp files
        before = tx.art.model_copy(deep=True)
        yield tx
        if tx.art != before:
            save(d, tx.art)
        if tx.view_text is not None:
            write_view(d, tx.view_text)


def write_view(d: Path, text: str) -> None:
    """VIEW_FILE: what `plan07 next --json` prints for the handed-out view (`text`, redacted),
    keyed by the digest of plan.json as it is now, under the lock. While plan.json keeps those
    bytes, `next` would print exactly this again; plan07.entry answers from it without loading
    the plan."""
    from plan07.sandbox import redact

    key = hashlib.sha256((d / PLAN_FILE).read_bytes()).hexdigest()
    with contextlib.suppress(OSError):  # after the commit: without it `next` takes the full CLI
        write_atomic(d / VIEW_FILE, json.dumps({"plan_sha256": key, "text": redact(text)}))


def full_audit(d: Path, artifact: PlanArtifact) -> list[AuditRow]:
    """Every audit row, the spilled ones first."""
    n = artifact.audit_overflow.rows if artifact.audit_overflow else 0
    spilled = [AuditRow.model_validate_json(x) for x in _read_lines(d / AUDIT_OVERFLOW, n)]
    return spilled + list(artifact.audit)


def full_revisions(d: Path, artifact: PlanArtifact) -> list[Revision]:
    n = artifact.revisions_overflow.rows if artifact.revisions_overflow else 0
    spilled = [Revision.model_validate_json(x) for x in _read_lines(d / REVISIONS_OVERFLOW, n)]
    return spilled + list(artifact.revision_history)


def evidence_of(d: Path, artifact: PlanArtifact) -> Evidence:
    """The plan's evidence, inline or from its sidecar. A content-addressed sidecar whose bytes
    still match its name was written (and validated) by `save`: only the model parses it."""
    if artifact.evidence is not None:
        return artifact.evidence
    if artifact.evidence_file:
        from plan07.store.boundedio import read_bytes
        from plan07.store.schema import load as load_schema

        path = d / artifact.evidence_file
        raw = read_bytes(path, what="evidence sidecar")
        if raw and evidence_name(raw.decode("utf-8", "replace")) == artifact.evidence_file:
            return Evidence.model_validate_json(raw)
        ev: Evidence = load_schema("evidence", path)
        return ev
    return Evidence()

