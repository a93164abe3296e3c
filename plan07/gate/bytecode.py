"""The checks' bytecode cache (the repo's own bytecode cache is never written). I/O: the cache
folder.

A check runs the repo's interpreter with `PYTHONPYCACHEPREFIX` set to plan07's own cache folder
(`cache_dir`: `$PLAN07_CACHE_DIR/pycache`, else `$XDG_CACHE_HOME/plan07/pycache`, else
`~/.cache/plan07/pycache`, private to the user, as the rules cache; `PLAN07_CACHE_DIR=off`: no
cache, no bytecode written), so every module it imports (and every test file pytest rewrites)
is compiled once and kept between checks and plans, and the repo's own `__pycache__` is
neither read nor written. Its layout mirrors absolute source paths, so one folder serves every
repo and interpreter; nothing of it is in the plan's state dir (compiled copies of the repo's
code stay out of what a plan stores).

Python judges a timestamp .pyc fresh by its source's mtime in whole seconds and its size, so a
cached file can be stale only when its source was changed (to the same size) within the second
its mtime names. `sweep`, run before every check on the repo's part of the cache, deletes each
.pyc that could be: one written in that very second (or earlier: a source mtime in the future),
and every .pyc that is neither a timestamp .pyc nor a checked-hash one (PEP 552: a checked hash
is verified at every import). A .pyc written in a later second than its source's mtime is safe
for good: any later edit gives the source a later mtime, which Python sees. What a check
compiled while the repo's files changed under it is deleted too (`sweep(since_ns=)`: the check
itself is inconclusive then).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

CACHE_DIR = "pycache"  # in plan07's cache folder
_MARK = ".swept"  # its mtime: when the last sweep started (the file system's own clock)
_MARGIN_NS = 1_000_000_000  # what was written in the second before a sweep is judged again


def cache_dir() -> Path | None:
    """The bytecode cache folder (module docstring), made private if absent; None when caching
    is off or the folder is not usable (not ours, writable by others): then no bytecode."""
    import stat

    env = os.environ.get("PLAN07_CACHE_DIR")
    if env is not None:
        if env.strip().lower() in ("", "off", "0", "none"):
            return None
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache") \
            / "plan07"
    d = base.absolute() / CACHE_DIR
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = d.stat()
    except (OSError, RuntimeError):  # RuntimeError: no home directory
        return None
    if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
        return None
    return None if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) else d


def mirrored(cache: Path, root: Path) -> list[Path]:
    """Where the cache keeps the bytecode of files under `root`: Python mirrors a source's
    absolute path under the prefix (the path as imported, and as resolved)."""
    out: list[Path] = []
    for p in (Path(root).absolute(), Path(root).resolve()):
        sub = cache.joinpath(*p.parts[1:])
        if sub not in out:
            out.append(sub)
    return out


def check_env(base: Mapping[str, str], cache: Path | None) -> dict[str, str]:
    """The environment of a check: bytecode kept in `cache` (outside the repo, so the sandbox's
    `PYTHONDONTWRITEBYTECODE`, there to keep the repo clean, is dropped: with it, a cache
    Python may only read is an empty one, and every module would be compiled at every check);
    with no cache, none written (a .pyc the check wrote could be judged fresh after a same-size
    edit within the second)."""
    if cache is None:
        return {**base, "PYTHONDONTWRITEBYTECODE": "1"}
    env = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def _stale(path: str, st: os.stat_result) -> bool:
    """True when the .pyc at `path` could hold code of another content than its source's."""
    try:
        with Path(path).open("rb") as fh:
            head = fh.read(16)
    except OSError:
        return False  # gone: nothing to delete
    if len(head) < 16:
        return True
    flags = int.from_bytes(head[4:8], "little")
    if flags == 0b11:  # checked hash: the source's hash is verified at every import
        return False
    if flags != 0:  # an unchecked hash is never verified; anything else is not Python's
        return True
    source_mtime = int.from_bytes(head[8:12], "little")
    return (int(st.st_mtime) & 0xFFFFFFFF) <= source_mtime


def sweep(cache: Path, root: Path | None = None, *, since_ns: int | None = None) -> int:
    """Delete from `cache` (its part for files under `root`, default all of it) every .pyc
    that could be stale (module docstring), and with `since_ns` every .pyc written at or after
    it. Returns the file system's time at the start of the sweep (ns), for a later
    `sweep(since_ns=)`; 0 when there is nothing to sweep yet."""
    dirs = [d for d in (mirrored(cache, root) if root is not None else [cache]) if d.is_dir()]
    if not dirs:
        return 0
    mark = dirs[0] / _MARK
    try:
        last = mark.stat().st_mtime_ns - _MARGIN_NS
    except OSError:
        last = None
    mark.touch()
    now = mark.stat().st_mtime_ns
    todo = [str(d) for d in dirs]
    while todo:
        try:
            with os.scandir(todo.pop()) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                todo.append(e.path)
                continue
            if not e.name.endswith(".pyc"):
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            young = since_ns is not None and st.st_mtime_ns >= since_ns
            judged = last is not None and st.st_mtime_ns < last
            if young or (not judged and _stale(e.path, st)):
                with contextlib.suppress(OSError):
                    Path(e.path).unlink()
    return now
