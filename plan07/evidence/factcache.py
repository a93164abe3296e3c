"""Recon facts cached per file content: a file recon has read before, unchanged, is not parsed
again. I/O (the `recon/` kind of plan07.store.diskcache).

The key is the SHA-256 of the file's bytes, its path in the repository (the module name comes
from it) and a digest of the modules that turn a source into ModuleFacts, so an edited file, a
moved file or a changed parser is a miss. Entries are shared by every checkout: two commits of
a repository mostly hold the same files. Where the directory is, what makes an entry a miss, and
`PLAN07_CACHE_DIR=off`: plan07.store.diskcache. Entries are never pruned; the directory may be
deleted at any time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from plan07.evidence.facts import ModuleFacts
from plan07.store import diskcache

KIND = "recon"
_CODE = ("evidence/facts.py", "evidence/parse.py", "evidence/body.py", "evidence/callrefs.py",
         "evidence/syntax.py", "evidence/signatures.py", "evidence/recon.py",
         "evidence/factcache.py", "evidence/layout.py", "caps.py")
FORMAT = 3  # of the pickled ModuleFacts; 2: a call site (CallRef) is a plain tuple; 3: stars
_code_digest: str | None = None


def enabled() -> bool:
    return diskcache.cache_dir(KIND) is not None


def key(rel: str, data: bytes, test: bool | None = None) -> str:
    """`test`: the test-module verdict of the repository's layout, when it differs from the
    file name's (a file is a test in one repository and data in another)."""
    global _code_digest
    if _code_digest is None:
        root = Path(__file__).resolve().parent.parent
        _code_digest = diskcache.code_digest(root / f for f in _CODE)
    h = hashlib.sha256(f"{FORMAT}\0{_code_digest}".encode())
    h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
    if test is not None:
        h.update(b"test\0" if test else b"data\0")
    h.update(data)
    return h.hexdigest()


def get(k: str) -> ModuleFacts | None:
    return diskcache.get(KIND, k, ModuleFacts)


def put(k: str, facts: ModuleFacts) -> None:
    diskcache.put(KIND, k, facts)
