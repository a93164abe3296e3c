"""Bounded input (docs/safety.md "Hostile input"): every file plan07 reads is a regular file of
bounded size, every JSON document a bounded depth, and what is wrong is one InputError naming the
file. I/O: os, json (imported when a document is decoded: reading the rule file needs none).

A FIFO, a directory or a device given where a file is expected is refused before it is opened for
reading (it would block, or read forever); the open itself is non-blocking and re-checked with
`fstat`, so a file swapped for a FIFO between the two checks cannot hang either. Python's JSON
decoder raises RecursionError on a document nested ~1000 deep; that, and any deeper recursion the
validators would make, is an InputError with the cap named (`caps.JSON_MAX_DEPTH`). What plan07
writes goes through `write_atomic` (a reader sees the old file or the new one, never a part).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from plan07 import caps
from plan07.errors import InputError


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def require_regular(path: str | Path, *, what: str, field: str | None = None) -> None:
    """InputError unless `path` is an existing regular file (checked without opening it)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{what} file not found", source=str(p), field=field) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=str(p),
                         field=field) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} is {_kind(st.st_mode)}, not a regular file", source=str(p),
                         field=field)


def read_bytes(path: str | Path, *, what: str, max_bytes: int = caps.INPUT_MAX_BYTES,
               field: str | None = None) -> bytes:
    """The bytes of a regular file, at most `max_bytes` (refused above, the cap named)."""
    p = Path(path)
    require_regular(p, what=what, field=field)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=str(p),
                         field=field) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{what} is {_kind(st.st_mode)}, not a regular file",
                             source=str(p), field=field)
        if st.st_size > max_bytes:
            raise InputError(f"{what} is {st.st_size} bytes", source=str(p), field=field,
                             cap=f"INPUT_MAX_BYTES {max_bytes}")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:  # the file grew while read
                raise InputError(f"{what} is over {max_bytes} bytes", source=str(p),
                                 field=field, cap=f"INPUT_MAX_BYTES {max_bytes}")
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=str(p),
                         field=field) from None
    finally:
        os.close(fd)


def read_text(path: str | Path, *, what: str, max_bytes: int = caps.INPUT_MAX_BYTES,
              field: str | None = None) -> str:
    """`read_bytes` decoded as UTF-8 (a binary file is one InputError, not a traceback)."""
    data = read_bytes(path, what=what, max_bytes=max_bytes, field=field)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} is not UTF-8 text (byte {exc.start}: {exc.reason})",
                         source=str(path), field=field) from None


def too_deep(source: str | None, what: str = "JSON document") -> InputError:
    return InputError(f"{what} is nested too deeply", source=source,
                      cap=f"JSON_MAX_DEPTH {caps.JSON_MAX_DEPTH}")


def loads(text: str | bytes, *, source: str | None = None) -> Any:
    """json.loads, with a document nested deeper than `caps.JSON_MAX_DEPTH` refused (and the
    decoder's own RecursionError turned into the same one-line InputError)."""
    import json

    try:
        data = json.loads(text)
    except RecursionError:
        raise too_deep(source) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                         source=source) from None
    if depth_exceeds(data, caps.JSON_MAX_DEPTH):
        raise too_deep(source)
    return data


def depth_exceeds(data: Any, limit: int) -> bool:
    """True iff `data` nests lists/dicts more than `limit` deep. Iterative (no recursion), and
    it visits containers only, so a large flat document costs one pass over its containers."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def write_atomic(path: Path, text: str) -> None:
    """temp file in the same directory + fsync + rename + fsync of the directory."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    tmp.replace(path)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
