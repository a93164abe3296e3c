"""The parsed-program cache: a rule file parsed and stratified once per content, not once per
process. I/O (reads and writes pickles in the user's cache directory).

Parsing rules/ordering.dl costs a lark import, a grammar build and a parse (~60 ms); unpickling
the parsed Program costs well under a millisecond. The key is the SHA-256 of the file's bytes,
its path (error messages name it) and a digest of the engine modules that define and build the
IR, so an edited rule file or a changed parser never reads a stale entry. The directory is
`$PLAN07_CACHE_DIR`, else `$XDG_CACHE_HOME/plan07`, else `~/.cache/plan07` (subfolder
`rules/`), created private (0700). Anything wrong with it — unwritable, not ours, writable by
others, a truncated or corrupt pickle, an object that is not a Program — is a cache miss: the
file is parsed as if there were no cache (and the entry rewritten when the directory is
usable). Set `PLAN07_CACHE_DIR=off` to disable it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
from pathlib import Path

from plan07.engine.ir import Program

FORMAT = 1  # bump when what is pickled changes shape in a way the code digest cannot see
_CODE_FILES = ("ir.py", "parser.py", "strata.py", "cache.py")
_code_digest: str | None = None


def cache_dir() -> Path | None:
    """The rules cache directory, or None when caching is off."""
    env = os.environ.get("PLAN07_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "none") else Path(env) / "rules"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "plan07" / "rules"


def _code() -> str:
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256(f"{FORMAT}\0{sys.version_info[:2]}".encode())
        here = Path(__file__).resolve().parent
        for name in _CODE_FILES:  # size and mtime: an edited module changes both or one
            try:
                st = (here / name).stat()
                h.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
            except OSError:
                h.update(b"?")
        _code_digest = h.hexdigest()
    return _code_digest


def key(path: Path, data: bytes) -> str:
    h = hashlib.sha256(_code().encode())
    h.update(str(path).encode("utf-8", "surrogateescape") + b"\0")
    h.update(data)
    return h.hexdigest()


def _usable(d: Path) -> bool:
    """The directory exists (made private if absent), is ours and no one else may write it."""
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = d.stat()
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    return not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def get(k: str) -> Program | None:
    d = cache_dir()
    if d is None:
        return None
    f = d / f"{k}.pickle"
    try:
        if not _usable(d):
            return None
        data = f.read_bytes()
        prog = pickle.loads(data)  # noqa: S301 - our own private, owner-only cache directory
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - a corrupt entry of any kind is a miss
        return None
    return prog if isinstance(prog, Program) else None


def put(k: str, prog: Program) -> None:
    d = cache_dir()
    if d is None or not _usable(d):
        return
    f = d / f"{k}.pickle"
    tmp = d / f".{k}.{os.getpid()}.tmp"
    try:
        tmp.write_bytes(pickle.dumps(prog, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(f)  # atomic: a reader sees the old entry, none, or the whole new one
    except OSError:
        tmp.unlink(missing_ok=True)
