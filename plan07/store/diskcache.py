"""plan07's private on-disk cache: pickles keyed by content, in one directory per kind. I/O.

Two kinds use it: `rules/` (a rule file parsed and stratified, plan07.engine.cache) and `recon/`
(one Python file's recon facts, plan07.evidence.factcache). The directory is
`$PLAN07_CACHE_DIR`, else `$XDG_CACHE_HOME/plan07`, else `~/.cache/plan07`, created private
(0700); `PLAN07_CACHE_DIR=off` disables every kind. A key is a SHA-256 over a digest of the code
that produced the entry, so a changed plan07 never reads a stale one. Anything wrong with the
directory or an entry (unwritable, not ours, writable by others, truncated or corrupt, an object
of another type) is a miss: the caller computes the value as if there were no cache, and the
entry is rewritten when the directory is usable. Writes are atomic (a reader sees the old entry,
none, or the whole new one).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
FORMAT = 1  # bump when what is pickled changes shape in a way the code digest cannot see


def cache_dir(kind: str) -> Path | None:
    """The directory of one kind of entry, or None when caching is off."""
    env = os.environ.get("PLAN07_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "none") else Path(env) / kind
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "plan07" / kind


def code_digest(files: Iterable[Path]) -> str:
    """A digest of the modules that produce an entry (size and mtime: an edit changes one)."""
    h = hashlib.sha256(f"{FORMAT}\0{sys.version_info[:2]}".encode())
    for f in files:
        try:
            st = f.stat()
            h.update(f"{f.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def usable(d: Path) -> bool:
    """The directory exists (made private if absent), is ours and no one else may write it."""
    try:
        st = d.stat()
    except FileNotFoundError:
        try:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = d.stat()
        except OSError:
            return False
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    return not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def get(kind: str, key: str, cls: type[T]) -> T | None:
    """The entry `key` of `kind` if it is there and a `cls`; None (a miss) otherwise."""
    d = cache_dir(kind)
    if d is None:
        return None
    try:
        if not usable(d):
            return None
        value = pickle.loads((d / f"{key}.pickle").read_bytes())  # noqa: S301 - our own private, owner-only directory
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - a corrupt entry of any kind is a miss
        return None
    return value if isinstance(value, cls) else None


def put(kind: str, key: str, value: object) -> None:
    """Store `value` as entry `key` of `kind`; silently nothing when the directory is unusable."""
    d = cache_dir(kind)
    if d is None or not usable(d):
        return
    f = d / f"{key}.pickle"
    tmp = d / f".{key}.{os.getpid()}.tmp"
    try:
        tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(f)
    except OSError:
        tmp.unlink(missing_ok=True)
