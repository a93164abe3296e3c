"""Evidence for planning: load the 03/04/05/06 bundle (JSON or recon.db), build it for a Python
repository (recon, impact, soft-rank, localization), and cut it to a neighbourhood.

Public API (design.md, the agreed interfaces): `load_evidence(path)`, `build_evidence(repo, *,
request, seeds, depth)`, `neighbourhood(evidence, seeds, hops)`; and the pieces they are made of.
Module map: graph (neighbourhood, pure) · load, db (bundle / recon.db I/O) · files, recon (read a
tree) · facts, syntax, signatures, callrefs, body, parse, index, resolve (ast -> recon graph, pure;
compiled when the install could: native) · impact (pure) · softrank · build.
"""

from __future__ import annotations

from plan07.evidence import native

native.prefer_sources()  # (before any compiled module is imported: see native.py)

from plan07.evidence.build import build_evidence
from plan07.evidence.db import write_db
from plan07.evidence.graph import neighbourhood, reach, restrict
from plan07.evidence.impact import impact
from plan07.evidence.load import check_endpoints, load_evidence, parse_bundle, read_db
from plan07.evidence.recon import recon

__all__ = [
    "build_evidence", "check_endpoints", "impact", "load_evidence", "neighbourhood", "parse_bundle",
    "reach", "read_db", "recon", "restrict", "write_db",
]
