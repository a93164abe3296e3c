"""The parsed-program cache: a rule file parsed and stratified once per content, not once per
process. I/O (the `rules/` kind of plan07.store.diskcache: pickles in the user's cache directory).

Parsing rules/ordering.dl costs a lark import, a grammar build and a parse (~60 ms); unpickling
the parsed Program costs well under a millisecond. The key is the SHA-256 of the file's bytes,
its path (error messages name it) and a digest of the engine modules that define and build the
IR, so an edited rule file or a changed parser never reads a stale entry. Where the directory
is, what makes an entry a miss, and `PLAN07_CACHE_DIR=off`: plan07.store.diskcache.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from plan07.engine.ir import Program
from plan07.store import diskcache

KIND = "rules"
_CODE_FILES = ("ir.py", "parser.py", "strata.py", "cache.py")
_code_digest: str | None = None


def cache_dir() -> Path | None:
    """The rules cache directory, or None when caching is off."""
    return diskcache.cache_dir(KIND)


def _code() -> str:
    global _code_digest
    if _code_digest is None:
        here = Path(__file__).resolve().parent
        _code_digest = diskcache.code_digest(here / name for name in _CODE_FILES)
    return _code_digest


def key(path: Path, data: bytes) -> str:
    h = hashlib.sha256(_code().encode())
    h.update(str(path).encode("utf-8", "surrogateescape") + b"\0")
    h.update(data)
    return h.hexdigest()


def get(k: str) -> Program | None:
    return diskcache.get(KIND, k, Program)


def put(k: str, prog: Program) -> None:
    diskcache.put(KIND, k, prog)
