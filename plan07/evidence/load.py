"""Load an evidence bundle a harness hands over: the JSON bundle (design.md "Evidence bundle") or a
SQLite recon.db (docs/evidence.md). I/O. Errors name the JSON path (or table and row) at fault.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plan07.errors import InputError
from plan07.model import Evidence
from plan07.vocab import first_repeat

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def load_evidence(path: str | Path) -> Evidence:
    """An Evidence bundle from a `.json` file (or '-', stdin) or a SQLite recon.db (by content)."""
    p = Path(path)
    if str(path) != "-":
        from plan07.store.boundedio import require_regular

        require_regular(p, what="evidence")  # a FIFO would block the SQLite sniff below
    if str(path) != "-" and is_sqlite(p):
        return read_db(p)
    from plan07.store.schema import read_json

    return parse_bundle(read_json(path, what="evidence"), source=str(path))


def read_db(path: Path) -> Evidence:
    """The Evidence a recon.db holds; errors name the table and row (`edges[3].dst`)."""
    from plan07.evidence.db import TABLES, read_rows

    data = read_rows(path)
    try:
        return parse_bundle(data, source=str(path))
    except InputError as exc:  # name the table, not the JSON shape the rows were turned into
        field = exc.field or ""
        for table, (_, where, _) in TABLES.items():
            if field.startswith(where + "["):
                field = table + field[len(where):]
                break
        raise InputError(exc.problem, field=field or None, source=str(path)) from None


def parse_bundle(data: Any, *, source: str | None = None) -> Evidence:
    """Validate an in-memory bundle: the shipped JSON Schema, the model, then what JSON Schema
    cannot say (every edge endpoint is a recon node).

    Fast path: a strict model validation (~0.3 s for 100k edges) accepts only documents the
    shipped schema accepts too (the schema is generated from the model); jsonschema itself takes
    ~7 s there, so it runs only when the fast path refuses, to name the JSON path at fault."""
    from pydantic import ValidationError

    try:
        evidence = Evidence.model_validate(data, strict=True)
    except ValidationError:
        from plan07.store.schema import parse

        evidence = parse("evidence", data, source=source)
    check_endpoints(evidence, source=source)
    return evidence


def check_endpoints(evidence: Evidence, *, source: str | None = None, prefix: str = "") -> None:
    """A recon edge's endpoints are recon nodes; an impact edge's too, when recon nodes are given.
    Raises InputError naming e.g. `recon.edges[3].dst`."""
    ids = {n.id for n in evidence.recon.nodes}
    again = first_repeat([n.id for n in evidence.recon.nodes])
    if again is not None:
        raise InputError(f"duplicate node id {evidence.recon.nodes[again].id!r}",
                         field=f"{prefix}recon.nodes[{again}].id", source=source)
    groups: list[tuple[str, list[Any]]] = [("recon.edges", list(evidence.recon.edges))]
    if ids:
        groups.append(("impact.edges", list(evidence.impact.edges)))
    for where, edges in groups:
        for i, e in enumerate(edges):
            for end in ("src", "dst"):
                value = getattr(e, end)
                if value not in ids:
                    raise InputError(
                        f"{value!r} is not a recon node; add it to recon.nodes or drop the edge",
                        field=f"{prefix}{where}[{i}].{end}", source=source,
                    )
