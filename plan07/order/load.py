"""Reading an obligations file (`plan07 order --obligations O.json`): a Decomposition or a bare
list of obligation records, checked against the shipped schema and the §3.2 caps. I/O: reads
the file."""

from __future__ import annotations

from pathlib import Path

from plan07 import caps
from plan07.errors import InputError
from plan07.model import Obligation


def load_obligations(path: str | Path) -> list[Obligation]:
    """O.json: a Decomposition `{"obligations": [...]}` or a bare list of obligation records
    (JSON, then the shipped JSON Schema, then the model)."""
    from plan07.store import schema

    data = schema.read_json(path, what="obligations")
    if isinstance(data, list):
        data = {"obligations": data}
    if isinstance(data, dict) and isinstance(data.get("obligations"), list) and len(
            data["obligations"]) > caps.MAX_OBLIGATIONS:
        raise InputError(f"{len(data['obligations'])} obligations; re-scope the request",
                         field="obligations", source=str(path),
                         cap=f"MAX_OBLIGATIONS={caps.MAX_OBLIGATIONS}")
    records = data.get("obligations") if isinstance(data, dict) else None
    for i, o in enumerate(records if isinstance(records, list) else []):
        if not isinstance(o, dict):
            continue
        deps, ev = o.get("dependencies"), o.get("evidence")
        if isinstance(deps, list) and len(deps) > caps.MAX_DEPENDENCIES:
            raise InputError(f"{len(deps)} dependencies", field=f"obligations[{i}].dependencies",
                             source=str(path), cap=f"MAX_DEPENDENCIES={caps.MAX_DEPENDENCIES}")
        if isinstance(ev, str) and len(ev) > caps.EVIDENCE_MAX_CHARS:
            raise InputError(f"evidence is {len(ev)} chars", field=f"obligations[{i}].evidence",
                             source=str(path), cap=f"EVIDENCE_MAX_CHARS={caps.EVIDENCE_MAX_CHARS}")
    dec = schema.parse("decomposition", data, source=str(path))
    return list(dec.obligations)
