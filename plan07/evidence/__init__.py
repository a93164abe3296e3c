"""Evidence for planning: load the 03/04/05/06 bundle (JSON or recon.db), build it for a Python
repository (recon, impact, soft-rank, localization), and cut it to a neighbourhood.

Public API (design.md, agreed interfaces): `neighbourhood`, `load_evidence`, `build_evidence`.
"""

from __future__ import annotations

from plan07.evidence.graph import neighbourhood, reach, restrict

__all__ = ["neighbourhood", "reach", "restrict"]
